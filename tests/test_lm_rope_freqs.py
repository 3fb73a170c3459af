"""Llama 3.1's rope scaling from a GGUF file: the ``rope_freqs`` tensor llama.cpp's converter
writes (per-dimension frequency divisors) gives the rope periods of the Hugging Face config's
``rope_scaling`` of type "llama3" and of a NumPy float64 reference, and the same logits."""

import math

import numpy as np
import pytest

import nuvec as mx
from nuvec import io as nio

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
pytest.importorskip("gguf")

from gguf.constants import GGMLQuantizationType as T  # noqa: E402

from nuvec.lm import load  # noqa: E402
from nuvec.lm.convert import convert  # noqa: E402
from nuvec.lm.models import build  # noqa: E402
from nuvec.lm.models.rope_utils import FreqsRoPE, initialize_rope  # noqa: E402
from test_lm_load_gguf import CONFIG, DIM, HEADS, _write  # noqa: E402

HEAD_DIM = DIM // HEADS
# A short original context, so that most of the 32 frequencies are stretched or blended.
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}  # fmt: skip


def _factors(dims, base, scaling):
    """convert_hf_to_gguf.py's LlamaModel rope_freqs (float64 arithmetic, stored as float32)."""
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    context = scaling["original_max_position_embeddings"]
    out = []
    for i in range(0, dims, 2):
        wavelen = 2 * math.pi * base ** (i / dims)
        if wavelen < context / high:
            out.append(1.0)
        elif wavelen > context / low:
            out.append(factor)
        else:
            smooth = (context / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, np.float32)


def _periods_reference(dims, base, factors):
    """The periods llama.cpp's rope turns at: base^(2i/d) times the factor, in float64."""
    return base ** (np.arange(0, dims, 2) / dims) * factors.astype(np.float64)


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_periods_equal_the_llama3_config_and_numpy(base):
    factors = _factors(HEAD_DIM, base, LLAMA3)
    assert 1.0 in factors and 8.0 in factors and ((factors > 1) & (factors < 8)).any()
    ours = np.array(initialize_rope(HEAD_DIM, base, False, {"rope_type": "freq_factors",
                                                            "freq_factors": factors.tolist()})._freqs)  # fmt: skip
    hf = np.array(initialize_rope(HEAD_DIM, base, False, LLAMA3)._freqs)
    want = _periods_reference(HEAD_DIM, base, factors)
    np.testing.assert_allclose(ours, want, rtol=2e-6)
    np.testing.assert_allclose(hf, want, rtol=2e-6)
    np.testing.assert_allclose(ours, hf, rtol=2e-6)


def _with_rope_freqs(tmp_path, factors):
    """The tiny llama GGUF of test_lm_load_gguf, with a rope_freqs tensor (rewritten by nuvec's
    GGUF writer)."""
    _write(tmp_path / "plain.gguf", T.F32)
    arrays, meta = nio.load(str(tmp_path / "plain.gguf"), return_metadata=True)
    arrays["rope_freqs.weight"] = mx.array(factors)
    path = tmp_path / "llama31.gguf"
    mx.save_gguf(str(path), arrays, meta)
    return str(path), arrays


def test_gguf_rope_freqs_rope_and_logits(tmp_path):
    factors = _factors(HEAD_DIM, 10000.0, LLAMA3)
    path, _ = _with_rope_freqs(tmp_path, factors)
    model, _ = load(path)
    rope = model.layers[0].self_attn.rope
    assert isinstance(rope, FreqsRoPE)
    assert model.args.rope_scaling["rope_type"] == "freq_factors"
    np.testing.assert_allclose(
        np.array(rope._freqs), _periods_reference(HEAD_DIM, 10000.0, factors), rtol=2e-6
    )
    # The Hugging Face form of the same scaling, with the same weights, gives the same logits;
    # the unscaled model does not (positions up to 40 turn the stretched frequencies visibly).
    hf = build({**CONFIG, "rope_scaling": LLAMA3})
    hf.load_weights(mx.utils.tree_flatten(model.parameters()))
    plain = build(CONFIG)
    plain.load_weights(mx.utils.tree_flatten(model.parameters()))
    tokens = mx.array([[(7 * i + 3) % 250 for i in range(40)]])
    got = np.array(model(tokens))
    np.testing.assert_allclose(got, np.array(hf(tokens)), atol=2e-5, rtol=1e-5)
    assert np.abs(got - np.array(plain(tokens))).max() > 1e-3
    # A directory converted from the file keeps the factors (config.json) and the logits.
    convert(path, str(tmp_path / "hf"), progress=False)
    again, _ = load(str(tmp_path / "hf"))
    np.testing.assert_array_equal(np.array(again(tokens)), got)


def test_bad_rope_freqs(tmp_path):
    path, _ = _with_rope_freqs(tmp_path, np.ones(HEAD_DIM // 2 + 1, np.float32))
    with pytest.raises(ValueError, match="rope_freqs"):
        load(path)
    with pytest.raises(ValueError, match="freq_factors must hold 32"):
        initialize_rope(HEAD_DIM, 1e4, False, {"rope_type": "freq_factors", "freq_factors": [1.0]})
