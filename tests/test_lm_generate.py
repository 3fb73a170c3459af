"""nuvec.lm's samplers and logits processors (against NumPy), and the generation API's surface
(mlx-lm's stream_generate responses, generate's text, verbose output) on SmolLM2."""

import math

import numpy as np
import pytest

import nuvec as mx
from lm_reference import smollm2_path
from nuvec.lm import generate, load, stream_generate
from nuvec.lm.sample_utils import (
    apply_min_p,
    apply_top_k,
    apply_top_p,
    make_logits_processors,
    make_sampler,
)

pytestmark = pytest.mark.nuvec_only

PROBS = np.array([0.05, 0.5, 0.15, 0.3])  # ranked: 1, 3, 2, 0


def _lp(p=PROBS, rows=1):
    return mx.array(np.tile(np.log(p), (rows, 1)).astype(np.float32))


def _kept(x):
    return set(np.flatnonzero(np.isfinite(np.array(x)[0])).tolist())


def test_greedy_is_argmax():
    x = mx.random.normal((4, 30), key=mx.random.key(0))
    assert make_sampler()(x).tolist() == np.argmax(np.array(x), -1).tolist()
    assert make_sampler(0.0, top_p=0.5, top_k=3)(x).tolist() == np.argmax(np.array(x), -1).tolist()


@pytest.mark.parametrize(
    "apply, arg, kept",
    [
        (apply_top_k, 1, {1}),
        (apply_top_k, 3, {1, 2, 3}),
        (apply_top_k, 4, {0, 1, 2, 3}),
        (apply_top_p, 0.7, {1, 3}),
        (apply_top_p, 0.9, {1, 2, 3}),
        (apply_top_p, 0.4, {1}),
        (apply_min_p, 0.2, {1, 2, 3}),  # keeps p >= 0.1
        (apply_min_p, 0.7, {1}),
        (apply_min_p, 0.0, {0, 1, 2, 3}),
    ],
)
def test_filters_restrict_the_support(apply, arg, kept):
    out = apply(_lp(), arg)
    assert _kept(out) == kept
    finite = sorted(kept)
    np.testing.assert_array_equal(np.array(out)[0, finite], np.array(_lp())[0, finite])


def test_min_p_keeps_at_least_min_tokens():
    assert _kept(apply_min_p(_lp(), 0.9, min_tokens_to_keep=2)) == {1, 3}


@pytest.mark.parametrize("kw, support", [({"top_k": 2}, {1, 3}), ({"top_p": 0.7}, {1, 3}),
                                         ({"min_p": 0.4}, {1, 3}), ({}, {0, 1, 2, 3})])  # fmt: skip
def test_sampler_draws_inside_the_support_in_proportion(kw, support):
    mx.random.seed(11)
    draws = np.array(make_sampler(1.0, **kw)(_lp(rows=4000)))
    assert set(draws.tolist()) == support
    p = np.where(np.isin(np.arange(4), list(support)), PROBS, 0)
    p /= p.sum()
    freq = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(freq, p, atol=0.03)


def test_sampling_is_seeded():
    sampler = make_sampler(0.8, top_p=0.95)
    x = mx.random.normal((1, 1000), key=mx.random.key(1))

    def draws(seed):
        mx.random.seed(seed)
        return [sampler(x).item() for _ in range(30)]

    assert draws(5) == draws(5)
    assert draws(5) != draws(6)


def test_temperature_sharpens():
    mx.random.seed(0)
    cold = np.array(make_sampler(0.1)(_lp(rows=2000)))
    assert (cold == 1).mean() > 0.95


def test_sampler_errors():
    with pytest.raises(ValueError):
        make_sampler(-1.0)
    with pytest.raises(ValueError):
        apply_top_k(_lp(), 5)
    with pytest.raises(ValueError):
        apply_min_p(_lp(), 1.5)


def test_logits_processors():
    logits = np.array([[1.0, -2.0, 3.0, 0.5, -1.0]], np.float32)
    (bias,) = make_logits_processors(logit_bias={0: 10.0, 3: -1.0})
    want = logits.copy()
    want[0, 0] += 10.0
    want[0, 3] -= 1.0
    np.testing.assert_array_equal(np.array(bias(mx.array([1]), mx.array(logits))), want)

    (rep,) = make_logits_processors(repetition_penalty=2.0, repetition_context_size=2)
    history = mx.array([2, 1, 1])  # the last two: token 1 only
    want = logits.copy()
    want[0, 1] *= 2.0  # negative: multiplied
    np.testing.assert_array_equal(np.array(rep(history, mx.array(logits))), want)
    (rep,) = make_logits_processors(repetition_penalty=2.0, repetition_context_size=3)
    want[0, 2] /= 2.0  # positive: divided
    np.testing.assert_array_equal(np.array(rep(history, mx.array(logits))), want)
    assert make_logits_processors() == [] and make_logits_processors(repetition_penalty=1.0) == []


@pytest.fixture(scope="module")
def loaded():
    pytest.importorskip("tokenizers")
    pytest.importorskip("jinja2")
    return load(smollm2_path())


def _prompt(tokenizer, text="What is the capital of France?"):
    return tokenizer.apply_chat_template([{"role": "user", "content": text}], True)


def test_stream_generate_responses(loaded):
    model, tokenizer = loaded
    prompt = _prompt(tokenizer)
    responses = list(stream_generate(model, tokenizer, prompt, max_tokens=64))
    text = "".join(r.text for r in responses)
    assert "Paris" in text and text == generate(model, tokenizer, prompt, max_tokens=64)
    last = responses[-1]
    assert last.finish_reason == "stop" and last.token == 2
    assert all(r.finish_reason is None for r in responses[:-1])
    assert [r.generation_tokens for r in responses] == list(range(1, len(responses) + 1))
    assert all(r.prompt_tokens == len(prompt) and r.prompt_tps > 0 for r in responses)
    assert all(r.generation_tps > 0 and 0 < r.peak_memory < 10 for r in responses)
    assert last.logprobs.shape == (49152,)
    assert math.isclose(float(mx.logsumexp(last.logprobs)), 0.0, abs_tol=1e-4)

    short = list(stream_generate(model, tokenizer, prompt, max_tokens=3))
    assert short[-1].finish_reason == "length" and short[-1].generation_tokens == 3
    assert "".join(r.text for r in short) == tokenizer.decode([r.token for r in short])


def test_generate_with_a_sampler_processors_and_plain_prompts(loaded, capsys):
    model, tokenizer = loaded
    prompt = _prompt(tokenizer, "Tell me a story.")
    runs = []
    for _ in range(2):
        mx.random.seed(3)
        runs.append(generate(model, tokenizer, prompt, max_tokens=12, sampler=make_sampler(0.9)))
    assert runs[0] == runs[1] and runs[0]
    forced = make_logits_processors(logit_bias={tokenizer.encode(" sea")[0]: 1e4})
    text = generate(model, tokenizer, prompt, max_tokens=3, logits_processors=forced)
    assert text == " sea" * 3
    assert generate(model, tokenizer, "The capital of France is", max_tokens=4)
    assert generate(model, tokenizer, mx.array(prompt), max_tokens=4) == generate(
        model, tokenizer, prompt, max_tokens=4
    )
    capsys.readouterr()
    generate(model, tokenizer, prompt, max_tokens=4, verbose=True)
    out = capsys.readouterr().out
    assert out.startswith("=" * 10) and "tokens-per-sec" in out and "Peak memory" in out
    with pytest.raises(ValueError, match="non-empty"):
        generate(model, tokenizer, [], max_tokens=4)


def test_overlapped_and_at_once_decoding_give_the_same_tokens(loaded, monkeypatch):
    """nuvec.lm.overlap: steps evaluated at once, or overlapped (plain async_eval or ordered by
    nuvec.schedule first), give the same greedy and seeded sampled tokens."""
    import importlib

    overlap = importlib.import_module("nuvec.lm.overlap")
    model, tokenizer = loaded
    prompt = _prompt(tokenizer, "Name three colours.")
    runs = {}
    for over, order_ahead in [(False, True), (True, False), (True, True)]:
        monkeypatch.setattr(overlap, "OVERLAP", over)
        monkeypatch.setattr(overlap, "ORDER_AHEAD", order_ahead)
        mx.random.seed(11)
        sampled = generate(model, tokenizer, prompt, max_tokens=10, sampler=make_sampler(0.8))
        runs[over, order_ahead] = (generate(model, tokenizer, prompt, max_tokens=16), sampled)
    assert len(set(runs.values())) == 1, runs


@pytest.mark.cpu_backend  # on the GPU the rule always overlaps
def test_overlap_rule_needs_a_free_core(monkeypatch):
    import importlib
    import os

    overlap = importlib.import_module("nuvec.lm.overlap")
    monkeypatch.setattr(overlap, "OVERLAP", None)
    cores, threads = len(os.sched_getaffinity(0)), mx.get_num_threads()
    try:
        for n in (1, cores, cores + 1):
            mx.set_num_threads(n)
            assert overlap.overlaps() == (cores > n)
    finally:
        mx.set_num_threads(threads)
    for forced in (True, False):
        monkeypatch.setattr(overlap, "OVERLAP", forced)
        assert overlap.overlaps() is forced
