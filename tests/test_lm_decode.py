"""Compiled decode steps (nuvec.lm.decode): the same bits as the plain step, on every
architecture whose caches allow it, across a growth of the key buffer; the plain path where a
cache or a model does not allow it; a new trace where weights or settings change. And the two
kernel paths they rest on: attention under a prefix mask, slice_update at an array start."""

import numpy as np
import pytest

import nuvec as mx
from lm_arch_models import CONFIGS, tiny
from lm_reference import smollm2_path
from nuvec.lm import decode as D
from nuvec.lm.generate import generate_step
from nuvec.lm.models.cache import KVCache, make_prompt_cache
from nuvec.lm.utils import set_int8_activations

pytestmark = pytest.mark.nuvec_only


def _plain(monkeypatch):
    monkeypatch.setattr(D._Decode, "__call__", lambda self, y, cache: None)


def _run(model, prompt, n):
    return [(t, lp) for t, lp in generate_step(mx.array(prompt), model, max_tokens=n)]


def _same(a, b):
    assert [t for t, _ in a] == [t for t, _ in b]
    for (_, x), (_, y) in zip(a, b):
        assert mx.array_equal(x, y).item()


def _decoded_steps(model, prompt, n):
    """How many steps the compiled path ran (its trace's calls)."""
    calls = []
    step = D.compiled_decode(model)
    inner = step.step
    step.step = lambda *a: calls.append(1) or inner(*a)
    _run(model, prompt, n)
    step.step = inner
    return len(calls)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_compiled_steps_give_the_plain_bits(name, monkeypatch):
    model = tiny(name)
    prompt = [3, 14, 15, 92, 65, 35]
    compiled = _run(model, prompt, 12)
    with monkeypatch.context() as m:
        _plain(m)
        plain = _run(model, prompt, 12)
    _same(compiled, plain)
    # Architectures with sliding windows keep rotating caches: those run the plain step.
    sliding = "sliding_window" in CONFIGS[name]
    assert (_decoded_steps(model, prompt, 12) == 0) == sliding


def test_a_full_buffer_grows_through_the_plain_step_then_traces_its_new_size(monkeypatch):
    model = tiny("llama")
    prompt = [i % 97 for i in range(1, 250)]
    compiled = _run(model, prompt, 20)  # positions 249..268: the 256-position buffer fills
    with monkeypatch.context() as m:
        _plain(m)
        _same(compiled, _run(model, prompt, 20))
    # Every step (the prompt's last token's too) but the one that grows the buffer.
    assert _decoded_steps(model, prompt, 20) == 19


def _run_kv(model, prompt, n, kv_dtype):
    steps = generate_step(mx.array(prompt), model, max_tokens=n, kv_dtype=kv_dtype)
    return [(t, lp) for t, lp in steps]


@pytest.mark.parametrize("kv_dtype", [mx.float16, mx.bfloat16])
def test_half_caches_compiled_give_the_plain_bits(kv_dtype, monkeypatch):
    model = tiny("llama")
    prompt = [i % 97 for i in range(1, 250)]  # through a growth of the buffer
    compiled = _run_kv(model, prompt, 12, kv_dtype)
    with monkeypatch.context() as m:
        _plain(m)
        _same(compiled, _run_kv(model, prompt, 12, kv_dtype))
    cache = make_prompt_cache(model, kv_dtype=kv_dtype)
    for _ in generate_step(mx.array(prompt), model, max_tokens=3, prompt_cache=cache):
        pass
    assert {c.keys.dtype for c in cache} == {kv_dtype} and cache[0].offset == 251
    # The caches hold the float32 keys rounded to the half type, nothing else.
    full = make_prompt_cache(model)
    for _ in generate_step(mx.array(prompt), model, max_tokens=3, prompt_cache=full):
        pass
    got = np.array(cache[1].state[0].astype(mx.float32))
    want = np.array(full[1].state[0].astype(kv_dtype).astype(mx.float32))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)  # (later layers see rounded keys)
    assert np.array_equal(
        np.array(cache[0].state[0].astype(mx.float32)),
        np.array(full[0].state[0].astype(kv_dtype).astype(mx.float32)),
    )


def test_fits_only_plain_one_token_caches():
    model = tiny("llama")
    step = D.compiled_decode(model)
    cache = make_prompt_cache(model)
    y = mx.array([[5]])
    assert step(y, cache) is None  # empty caches
    model(mx.array([[1, 2, 3]]), cache=cache)
    assert step(mx.array([[5, 6]]), cache) is None  # two tokens
    logits = step(y, cache)
    assert logits is not None and logits.shape == (1, CONFIGS["llama"]["vocab_size"])
    assert all(c.offset == 4 for c in cache)
    cache[0].offset -= 1  # caches at different positions
    assert step(y, cache) is None
    assert step(y, [c.to_quantized() for c in make_prompt_cache(model)]) is None


def test_speculative_decoding_drafts_through_compiled_steps(monkeypatch):
    from nuvec.lm.speculative import speculative_generate_step

    model, draft = tiny("llama"), tiny("llama", seed=3)
    prompt = mx.array([5, 6, 7, 8])
    calls = []
    step = D.compiled_decode(draft)
    inner = step.step
    step.step = lambda *a: calls.append(1) or inner(*a)
    spec = [t for t, _, _ in speculative_generate_step(prompt, model, draft, max_tokens=12)]
    step.step = inner
    assert calls and spec == [t for t, _ in _run(model, [5, 6, 7, 8], 12)]
    with monkeypatch.context() as m:
        _plain(m)
        assert spec == [
            t for t, _, _ in speculative_generate_step(prompt, model, draft, max_tokens=12)
        ]


def test_a_sliding_window_over_plain_caches_runs_the_plain_step(monkeypatch):
    # Mistral's window over caches the caller made plain: the window's mask is the plain step's.
    model = tiny("mistral")
    prompt = [9, 8, 7, 6, 5, 4, 3]
    outs = []
    for patch in (False, True):
        with monkeypatch.context() as m:
            if patch:
                _plain(m)
            cache = [KVCache() for _ in model.layers]
            outs.append(
                [
                    t
                    for t, _ in generate_step(
                        mx.array(prompt), model, max_tokens=8, prompt_cache=cache
                    )
                ]
            )
    assert outs[0] == outs[1]
    assert D.compiled_decode(model).failed


def test_with_compile_disabled_the_plain_step_runs():
    model = tiny("llama")
    mx.disable_compile()
    try:
        assert _decoded_steps(model, [4, 5, 6], 5) == 0
    finally:
        mx.enable_compile()
    assert _decoded_steps(model, [4, 5, 6], 5) == 5


def test_weights_and_settings_changed_trace_again():
    model = tiny("llama")
    first = D.compiled_decode(model)
    assert D.compiled_decode(model) is first
    w = model.layers[0].mlp.up_proj.weight
    model.layers[0].mlp.up_proj.weight = w * 2
    second = D.compiled_decode(model)
    assert second is not first
    model.layers[0].mlp.up_proj.weight = w
    assert D.compiled_decode(model) is not second


def test_a_model_that_reads_the_position_runs_the_plain_step(monkeypatch):
    model = tiny("llama")
    rope = model.layers[0].self_attn.rope
    original = type(rope).__call__

    def reads_offset(self, x, offset=0):
        return original(self, x, int(offset) if isinstance(offset, mx.array) else offset)

    monkeypatch.setattr(type(rope), "__call__", reads_offset)
    prompt = [7, 8, 9]
    compiled = _run(model, prompt, 6)
    assert D.compiled_decode(model).failed
    with monkeypatch.context() as m:
        _plain(m)
        _same(compiled, _run(model, prompt, 6))


def test_smollm2_compiled_decoding_gives_the_plain_bits(monkeypatch):
    pytest.importorskip("tokenizers")
    from nuvec.lm import load

    model, tok = load(smollm2_path())
    prompt = tok.encode("Tell me a story about a robot.")
    compiled = _run(model, prompt, 24)
    with monkeypatch.context() as m:
        _plain(m)
        _same(compiled, _run(model, prompt, 24))
    set_int8_activations(model, True)
    compiled = _run(model, prompt, 8)
    with monkeypatch.context() as m:
        _plain(m)
        _same(compiled, _run(model, prompt, 8))


@pytest.mark.parametrize("shown", [1, 5, 256, 300])
def test_attention_under_a_prefix_mask_is_the_call_over_the_prefix(shown):
    k = mx.random.normal((1, 2, 300, 32), key=mx.random.key(1))
    v = mx.random.normal((1, 2, 300, 32), key=mx.random.key(2))
    q = mx.random.normal((1, 4, 1, 32), key=mx.random.key(3))
    mask = mx.arange(300) < shown
    masked = mx.fast.scaled_dot_product_attention(q, k, v, scale=0.2, mask=mask)
    prefix = mx.fast.scaled_dot_product_attention(
        q, k[:, :, :shown], v[:, :, :shown], scale=0.2, mask=None
    )
    assert mx.array_equal(masked, prefix).item()


@pytest.mark.parametrize(
    "mask",
    [
        np.array([True, False, True, False, False, False]),  # a hole: not a prefix
        np.array([[True, True, False, False, False, False], [True] * 3 + [False] * 3]),
        np.zeros(6, bool),  # nothing shown
    ],
)
def test_attention_under_other_boolean_masks(mask):
    k = np.random.default_rng(0).standard_normal((1, 2, 6, 8)).astype(np.float32)
    v = np.random.default_rng(1).standard_normal((1, 2, 6, 8)).astype(np.float32)
    q = np.random.default_rng(2).standard_normal((1, 2, 1, 8)).astype(np.float32)
    m = mask.reshape((1, -1, 1, 6)) if mask.ndim == 2 else mask
    got = mx.fast.scaled_dot_product_attention(
        mx.array(q), mx.array(k), mx.array(v), scale=0.5, mask=mx.array(m)
    )
    s = (q.astype(np.float64) @ k.transpose(0, 1, 3, 2)) * 0.5
    s = np.where(np.broadcast_to(m, s.shape), s, np.finfo(np.float32).min)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "start, axes",
    [([5], (2,)), ([-3], (2,)), ([0, 1], (1, 2)), ([1, -2], (0, 3)), ([2, 0, 0, 0], (0, 1, 2, 3))],
)
def test_slice_update_at_an_array_start_writes_the_window(start, axes):
    a = np.arange(3 * 4 * 8 * 6, dtype=np.float32).reshape(3, 4, 8, 6)
    shape = list(a.shape)
    for ax in axes:
        shape[ax] = 1 if ax != 3 else 2
    u = -np.ones(shape, np.float32)
    got = mx.slice_update(mx.array(a), mx.array(u), mx.array(start, mx.int32), axes=axes)
    want = a.copy()
    window = [slice(None)] * 4
    for ax in range(4):
        s = start[axes.index(ax)] % a.shape[ax] if ax in axes else 0
        window[ax] = slice(s, s + shape[ax])
    want[tuple(window)] = u
    np.testing.assert_array_equal(np.array(got), want)


def test_slice_update_keeps_its_input_when_it_is_read_elsewhere():
    buf = mx.zeros((1, 2, 16, 4))
    mx.eval(buf)
    out = mx.slice_update(buf, mx.ones((1, 2, 1, 4)), mx.array([3]), axes=(2,))
    mx.eval(out)
    assert np.array(buf).sum() == 0 and np.array(out).sum() == 8
