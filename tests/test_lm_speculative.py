"""Speculative decoding (nuvec.lm.generate.speculative_generate_step): greedy output is token for
token and bit for bit that of plain greedy decoding, on tiny random models of several
architectures with drafts that agree, disagree or are quantized, and on the real SmolLM2 model
with itself and its dequantized copy as drafts; stream_generate and the CLI take a draft."""

import numpy as np
import pytest

import nuvec as mx
import nuvec.nn as nn
from lm_arch_models import CONFIGS, VOCAB, tiny
from nuvec.lm.generate import generate_step, speculative_generate_step
from nuvec.lm.models import build
from nuvec.lm.sample_utils import make_logits_processors

pytestmark = pytest.mark.nuvec_only

PROMPT = mx.array(np.random.RandomState(8).randint(0, VOCAB, 9))


def _plain(model, n, **kw):
    return [(t, np.array(lp)) for t, lp in generate_step(PROMPT, model, max_tokens=n, **kw)]


def _spec(model, draft, n, k, **kw):
    return [
        (t, np.array(lp), d)
        for t, lp, d in speculative_generate_step(
            PROMPT, model, draft, num_draft_tokens=k, max_tokens=n, **kw
        )
    ]


def _same(plain, spec):
    assert [t for t, _ in plain] == [t for t, _, _ in spec]
    for (_, a), (_, b, _) in zip(plain, spec):
        assert np.array_equal(a, b)


def _quantized(name):
    model = tiny(name)
    nn.quantize(model, 32, 4)
    return model


@pytest.mark.parametrize("name", ["llama", "qwen3", "phi3", "qwen3_moe", "qwen2_moe", "mixtral"])
@pytest.mark.parametrize("draft", ["itself", "other", "quantized"])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_greedy_speculative_equals_greedy_bit_for_bit(name, draft, k):
    model = tiny(name)
    d = {
        "itself": lambda: model,
        "other": lambda: tiny(name, seed=3),
        "quantized": lambda: _quantized(name),
    }[draft]()
    plain = _plain(model, 17)
    spec = _spec(model, d, 17, k)
    _same(plain, spec)
    flags = [f for _, _, f in spec]
    if draft == "itself":  # every draft is accepted: k from the draft, then the model's own
        assert flags == ([True] * k + [False]) * (17 // (k + 1)) + [True] * (17 % (k + 1))


def test_gemma3_with_windows_wider_than_the_text():
    config = dict(CONFIGS["gemma3_text"], sliding_window=64)
    mx.random.seed(0)
    model, draft = build(config), build(config)
    _same(_plain(model, 12), _spec(model, draft, 12, 3))


@pytest.mark.parametrize("seed", [0, 3])
def test_gemma3_past_its_windows(seed):
    """Windows of 4 filled long before the end: the model's rotating caches forget rejected
    drafts after a verify step (appended in order), the draft runs plain caches with window
    masks. The rotated and the appended key orders sum differently, so the log-probabilities
    agree to rounding (not bit for bit) and the tokens are the same."""
    model = tiny("gemma3_text")
    plain = _plain(model, 16)
    spec = _spec(model, tiny("gemma3_text", seed=seed), 16, 3)
    assert [t for t, _ in plain] == [t for t, _, _ in spec]
    for (_, a), (_, b, _) in zip(plain, spec):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_rotating_draft_caches_given_by_the_caller_cannot_rewind():
    from nuvec.lm.models.cache import make_prompt_cache

    model, draft = tiny("gemma3_text"), tiny("gemma3_text", seed=3)
    caches = make_prompt_cache(model) + make_prompt_cache(draft)
    with pytest.raises(ValueError, match="forget the rejected drafts"):
        _spec(model, draft, 16, 3, prompt_cache=caches)


def test_with_logits_processors():
    model, draft = tiny("qwen2"), tiny("qwen2", seed=5)
    procs = make_logits_processors(logit_bias={3: 2.0}, repetition_penalty=1.3)
    _same(
        _plain(model, 15, logits_processors=procs),
        _spec(model, draft, 15, 2, logits_processors=procs),
    )


def test_bad_arguments():
    model = tiny("llama")
    with pytest.raises(ValueError):
        next(speculative_generate_step(PROMPT, model, model, num_draft_tokens=0))
    with pytest.raises(ValueError):
        next(speculative_generate_step(mx.array([], mx.int32), model, model))


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("tokenizers")
    pytest.importorskip("jinja2")
    from lm_reference import smollm2_path
    from nuvec.lm import load

    path = smollm2_path()
    model, tokenizer = load(path)
    return path, model, tokenizer


@pytest.mark.parametrize("draft", ["itself", "dequantized"])
def test_real_smollm2_speculative_equals_greedy(smollm2, draft):
    from nuvec.lm import load
    from nuvec.lm.utils import dequantize_model

    path, model, tokenizer = smollm2
    d = model if draft == "itself" else dequantize_model(load(path)[0])
    ids = tokenizer.apply_chat_template([{"role": "user", "content": "What is gravity?"}], True)
    prompt = mx.array(ids)
    plain = [(t, np.array(lp)) for t, lp in generate_step(prompt, model, max_tokens=12)]
    spec = [
        (t, np.array(lp), f)
        for t, lp, f in speculative_generate_step(
            prompt, model, d, num_draft_tokens=3, max_tokens=12
        )
    ]
    _same(plain, spec)
    assert sum(f for _, _, f in spec) >= (9 if draft == "itself" else 1)


def test_stream_generate_and_the_cli_take_a_draft_model(smollm2, capsys):
    from nuvec.lm import stream_generate
    from nuvec.lm.cli import main

    path, model, tokenizer = smollm2
    plain = [r.text for r in stream_generate(model, tokenizer, "The sky is", max_tokens=8)]
    spec = list(stream_generate(model, tokenizer, "The sky is", max_tokens=8, draft_model=model))
    assert [r.text for r in spec] == plain and any(r.from_draft for r in spec)
    args = ["generate", "--model", path, "--prompt", "Hi", "--max-tokens", "6"]
    assert main(args) == 0
    expected = capsys.readouterr().out
    assert main(args + ["--draft-model", path, "--num-draft-tokens", "3"]) == 0
    assert capsys.readouterr().out == expected
    assert main(args + ["--draft-model", path + ".missing"]) == 1
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("k", [3, 7])
def test_quantized_caches_speculative_equals_greedy_bit_for_bit(k):
    """Quantized attention of a causal chunk of up to 8 rows runs row by row over each row's key
    prefix (models/base.py): one masked call over all keys rounds differently (its softmax and
    scores-by-values product reduce over more keys), and the log-probabilities then differed in
    the last bits."""
    model, draft = tiny("qwen3"), tiny("qwen3", seed=3)  # head_dim 32: one group
    kv = dict(kv_bits=8, kv_group_size=32, quantized_kv_start=4)
    plain = [(t, np.array(lp)) for t, lp in generate_step(PROMPT, model, max_tokens=15, **kv)]
    _same(plain, _spec(model, draft, 15, k, **kv))
    _same(plain, _spec(model, model, 15, k, **kv))


def test_a_stopped_run_leaves_caches_that_plain_decoding_continues():
    """The rejected drafts are forgotten before tokens are handed out, so a consumer that stops
    mid-way (an end token, a chat turn) leaves caches holding only kept positions."""
    from nuvec.lm.models.cache import make_prompt_cache, trim_prompt_cache

    model, draft = tiny("qwen3"), tiny("qwen3", seed=3)
    plain = [t for t, _ in generate_step(PROMPT, model, max_tokens=12)]
    flags = [f for _, _, f in _spec(model, draft, 12, 3)]
    assert 0 < sum(flags) < 12  # some drafts kept, some rejected
    for stop in range(1, 9):
        caches = make_prompt_cache(model) + make_prompt_cache(draft)
        run = speculative_generate_step(
            PROMPT, model, draft, num_draft_tokens=3, prompt_cache=caches
        )
        got = [next(run)[0] for _ in range(stop)]
        run.close()
        assert got == plain[:stop]
        # Exactly the prompt and the tokens before the model's own token that ends the round.
        held = caches[0].offset
        assert held == PROMPT.size + flags.index(False, stop - 1)
        trim_prompt_cache(caches[:3], held - (PROMPT.size + stop - 1))
        rest = generate_step(
            mx.array(got[-1:]), model, max_tokens=12 - stop, prompt_cache=caches[:3]
        )
        assert [t for t, _ in rest] == plain[stop:]
