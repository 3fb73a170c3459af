"""Fused quantized projections (nuvec.lm.models.fused): one product for q/k/v and for gate/up,
with the bits of the separate products, the layers' weights as views of the fused arrays, and the
separate products wherever the group cannot serve (long inputs, replaced weights, other settings)."""

import numpy as np
import pytest

import nuvec as mx
import nuvec.nn as nn
from lm_arch_models import CONFIGS, tiny
from lm_reference import smollm2_path
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.models.fused import fuse_projections
from nuvec.lm.utils import dequantize_model, set_int8_activations

pytestmark = pytest.mark.nuvec_only


def _quantized(name, seed=0):
    model = tiny(name, seed)
    nn.quantize(model, group_size=32, bits=4)
    mx.eval(model.parameters())
    return model


def _logits(model, prompt, steps):
    """The prompt's logits, then those of `steps` greedy one-token steps."""
    cache = make_prompt_cache(model)
    out = [model(mx.array([prompt]), cache=cache)]
    y = mx.argmax(out[-1][:, -1, :], axis=-1)[None]
    for _ in range(steps):
        out.append(model(y, cache=cache))
        y = mx.argmax(out[-1][:, -1, :], axis=-1)[None]
    mx.eval(out)
    return out


def _equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert mx.array_equal(x, y).item()


@pytest.mark.parametrize("name", ["llama", "qwen2", "qwen3", "gemma3_text", "mistral"])
def test_fused_projections_give_the_separate_products_bits(name):
    plain, fused = _quantized(name), _quantized(name)
    groups = fuse_projections(fused)
    assert groups == 2 * CONFIGS[name]["num_hidden_layers"]
    _equal(_logits(fused, [3, 1, 4, 1, 5], 6), _logits(plain, [3, 1, 4, 1, 5], 6))
    set_int8_activations(plain)
    set_int8_activations(fused)
    _equal(_logits(fused, [2, 7, 1], 4), _logits(plain, [2, 7, 1], 4))


def test_layers_hold_views_of_the_fused_rows():
    model = _quantized("llama")
    attn = model.layers[0].self_attn
    before = {n: np.array(getattr(attn, n).weight) for n in ("q_proj", "k_proj", "v_proj")}
    fuse_projections(model)
    group = vars(attn)["fused"][("q_proj", "k_proj", "v_proj")]
    assert group.sizes == [64, 32, 32]
    for n in before:
        np.testing.assert_array_equal(np.array(getattr(attn, n).weight), before[n])
    np.testing.assert_array_equal(
        np.array(group.fused["weight"]), np.concatenate([before[n] for n in before])
    )
    assert "fused" not in model.parameters()["model"]["layers"][0]["self_attn"]


def test_long_inputs_and_replaced_weights_run_the_layers_one_by_one():
    model = _quantized("llama")
    fuse_projections(model)
    mlp = model.layers[1].mlp
    group = vars(mlp)["fused"][("gate_proj", "up_proj")]
    x = mx.random.normal((1, 1, 64), key=mx.random.key(4))
    assert group.usable(x)
    assert not group.usable(mx.zeros((1, mx.ROW_INDEPENDENT_ROWS + 1, 64)))
    # New weights for one layer: the group stands aside and the new weights are used.
    other = _quantized("llama", seed=1).layers[1].mlp.up_proj
    mlp.up_proj = other
    assert not group.usable(x)
    gate, up = group(x)
    np.testing.assert_array_equal(np.array(up), np.array(other(x)))
    np.testing.assert_array_equal(np.array(gate), np.array(mlp.gate_proj(x)))


@pytest.mark.parametrize("name", ["llama", "qwen2"])  # qwen2: q/k/v with biases
def test_float_projections_fuse_with_the_separate_products_bits(name):
    plain, fused = tiny(name), tiny(name)
    assert fuse_projections(fused) == 2 * CONFIGS[name]["num_hidden_layers"]
    _equal(_logits(fused, [3, 1, 4, 1, 5], 6), _logits(plain, [3, 1, 4, 1, 5], 6))
    x = mx.random.normal((2, 3, 64), key=mx.random.key(7))
    attn = fused.layers[0].self_attn
    for got, layer in zip(
        vars(attn)["fused"][("q_proj", "k_proj", "v_proj")](x),
        (attn.q_proj, attn.k_proj, attn.v_proj),
    ):
        assert mx.array_equal(got, layer(x)).item()


def test_unfusable_groups_are_left_alone():
    model = tiny("llama")
    model.layers[0].mlp.up_proj.weight = model.layers[0].mlp.up_proj.weight.astype(mx.float16)
    assert fuse_projections(model) == 2 * 3 - 1
    q = _quantized("llama")
    q.layers[0].self_attn.k_proj = nn.QuantizedLinear(64, 32, bias=False, group_size=64, bits=8)
    assert fuse_projections(q) == 2 * 3 - 1


def test_the_default_model_loads_fused_and_dequantizes():
    pytest.importorskip("tokenizers")
    from nuvec.lm import load

    fused, _ = load(smollm2_path())
    plain, _ = load(smollm2_path(), lazy=True)
    assert "fused" in vars(fused.layers[0].self_attn) and "fused" not in vars(plain.layers[0].mlp)
    prompt = [1, 9707, 28, 1837, 314]
    _equal(_logits(fused, prompt, 3), _logits(plain, prompt, 3))
    f32 = dequantize_model(fused)  # its float layers fused again
    groups = [g for m in f32.modules() for g in vars(m).get("fused", {}).values()]
    assert len(groups) == 60 and all("scales" not in g.fused for g in groups)
    unfused = dequantize_model(plain, evaluate=False)  # lazy: not fused
    assert not any("fused" in vars(m) for m in unfused.modules())
    _equal(_logits(f32, prompt, 2), _logits(unfused, prompt, 2))
