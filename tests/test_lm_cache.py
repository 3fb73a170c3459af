"""nuvec.lm's caches: RotatingKVCache against a full cache with a window mask, QuantizedKVCache
against the float cache, prompt-cache files (ours and mlx-lm's layout), trimming."""

import numpy as np
import pytest

import nuvec as mx
from lm_arch_models import VOCAB, mlx_lm_module, tiny
from nuvec.lm.models.base import create_causal_mask, scaled_dot_product_attention
from nuvec.lm.models.cache import (
    KVCache,
    QuantizedKVCache,
    RotatingKVCache,
    can_trim_prompt_cache,
    load_prompt_cache,
    make_prompt_cache,
    save_prompt_cache,
    trim_prompt_cache,
)

pytestmark = pytest.mark.nuvec_only


def _qkv(T, seed=0):
    r = np.random.RandomState(seed)
    return [mx.array(r.standard_normal((1, 2, T, 64)).astype(np.float32)) for _ in range(3)]


def _windowed_reference(q, k, v, window, keep=0):
    """Full attention where query i sees key j when j <= i and (i - j < window or j < keep)."""
    T = q.shape[2]
    i, j = np.arange(T)[:, None], np.arange(T)[None]
    mask = (j <= i) & ((i - j < window) | (j < keep))
    return np.array(mx.fast.scaled_dot_product_attention(q, k, v, scale=0.125, mask=mx.array(mask)))


@pytest.mark.parametrize("chunks", [[1] * 20, [7, 1, 1, 5, 1, 1, 1, 3], [3, 9, 8]])
def test_rotating_cache_equals_a_full_cache_with_a_window_mask(chunks):
    q, k, v = _qkv(sum(chunks))
    window = 6
    cache, outs, start = RotatingKVCache(window), [], 0
    for n in chunks:
        sl = slice(start, start + n)
        mask = cache.make_mask(n, window_size=window)
        kk, vv = cache.update_and_fetch(k[:, :, sl], v[:, :, sl])
        if not isinstance(mask, (str, type(None))):
            mask = mask[..., -kk.shape[2] :]
        outs.append(np.array(scaled_dot_product_attention(q[:, :, sl], kk, vv, cache, 0.125, mask)))
        start += n
        assert cache.offset == start and kk.shape[2] <= window + n - 1
    ref = _windowed_reference(q, k, v, window)
    np.testing.assert_allclose(np.concatenate(outs, 2), ref, atol=1e-5)


@pytest.mark.parametrize("keep", [0, 2])
def test_one_token_window_masks_inside_a_larger_rotating_cache(keep):
    """A window of 5 inside a cache of 8 (mask by slot age after rotation). mlx-lm's mask takes
    the write position as 0 and ignores kept positions, which is wrong where keep > 0."""
    q, k, v = _qkv(20, seed=2)
    cache, outs = RotatingKVCache(8, keep=keep), []
    for t in range(20):
        mask = cache.make_mask(1, window_size=5)
        kk, vv = cache.update_and_fetch(k[:, :, t : t + 1], v[:, :, t : t + 1])
        o = mx.fast.scaled_dot_product_attention(q[:, :, t : t + 1], kk, vv, scale=0.125, mask=mask)
        outs.append(np.array(o))
    np.testing.assert_allclose(np.concatenate(outs, 2), _windowed_reference(q, k, v, 5), atol=1e-5)


def test_rotating_cache_keeps_the_first_positions():
    q, k, v = _qkv(16, seed=1)
    cache, outs = RotatingKVCache(8, keep=2), []
    for t in range(16):
        kk, vv = cache.update_and_fetch(k[:, :, t : t + 1], v[:, :, t : t + 1])
        outs.append(
            np.array(mx.fast.scaled_dot_product_attention(q[:, :, t : t + 1], kk, vv, scale=0.125))
        )
    np.testing.assert_allclose(
        np.concatenate(outs, 2), _windowed_reference(q, k, v, 6, keep=2), atol=1e-5
    )


def test_rotating_cache_forgets_the_end_of_an_appended_chunk():
    """Past its window, a rotating cache can forget up to the newest positions of the chunk just
    appended (what speculative decoding's rewind needs); attention afterwards equals the window
    over the text as kept."""
    q, k, v = _qkv(30, seed=3)
    cache, text, outs = RotatingKVCache(6), [], []
    # (position of the chunk in q/k/v, its length, how many of its positions to forget after)
    plan = [(0, 5, 0), (5, 4, 2), (9, 1, 0), (10, 1, 0), (11, 4, 3), (15, 1, 0), (16, 3, 0),
            (19, 4, 1), (23, 1, 0), (24, 1, 0)]  # fmt: skip
    for start, n, forget in plan:
        sl = slice(start, start + n)
        mask = cache.make_mask(n, window_size=6)
        kk, vv = cache.update_and_fetch(k[:, :, sl], v[:, :, sl])
        if not isinstance(mask, (str, type(None))):
            mask = mask[..., -kk.shape[2] :]
        o = scaled_dot_product_attention(q[:, :, sl], kk, vv, cache, 0.125, mask)
        text += list(range(start, start + n - forget))
        outs.append(np.array(o)[:, :, : n - forget])
        assert cache.trim(forget) == forget and cache.offset == len(text)
    idx = np.array(text)
    ref = _windowed_reference(q[:, :, idx], k[:, :, idx], v[:, :, idx], 6)
    np.testing.assert_allclose(np.concatenate(outs, 2), ref, atol=1e-5)


def test_max_kv_size_makes_rotating_caches():
    model = tiny("qwen3")
    caches = make_prompt_cache(model, max_kv_size=32)
    assert all(isinstance(c, RotatingKVCache) and (c.max_size, c.keep) == (32, 4) for c in caches)
    gemma = make_prompt_cache(tiny("gemma3_text"), max_kv_size=32)
    # The sliding layers keep their windows; the global one becomes a rotating cache.
    assert [(type(c).__name__, c.max_size) for c in gemma] == [
        ("RotatingKVCache", 4),
        ("RotatingKVCache", 32),
        ("RotatingKVCache", 4),
    ]


def test_causal_mask_with_a_window():
    m = np.array(create_causal_mask(3, 2, window_size=2))
    assert m.tolist() == [[0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]


@pytest.mark.parametrize("bits", [8, 4])
def test_quantized_cache_logits_are_close_to_the_float_cache(bits):
    model = tiny("qwen3")
    tokens = mx.array(np.random.RandomState(4).randint(0, VOCAB, (1, 12)))
    ref, qc = make_prompt_cache(model), [QuantizedKVCache(32, bits) for _ in model.layers]
    out = {}
    for name, cache in [("float", ref), ("quant", qc)]:
        first = model(tokens[:, :8], cache=cache)
        rest = [model(tokens[:, t : t + 1], cache=cache) for t in range(8, 12)]
        out[name] = np.array(mx.concatenate([first, *rest], 1))
    assert qc[0].keys[0].dtype == mx.uint32 and qc[0].offset == 12
    tol = {8: 0.05, 4: 1.0}[bits]  # what packing the keys and values costs
    np.testing.assert_allclose(out["quant"], out["float"], atol=tol)
    assert not np.array_equal(out["quant"], out["float"])


@pytest.mark.parametrize("mask", ["causal", None, "array"])
def test_quantized_attention_equals_attention_over_the_dequantized_cache(mask):
    r = np.random.RandomState(6)
    q = mx.array(r.standard_normal((1, 4, 3, 64)).astype(np.float32))
    k, v = (mx.array(r.standard_normal((1, 2, 10, 64)).astype(np.float32)) for _ in range(2))
    cache = QuantizedKVCache(32, 8)
    cache.update_and_fetch(k[:, :, :7], v[:, :, :7])
    qk, qv = cache.update_and_fetch(k[:, :, 7:], v[:, :, 7:])
    m = create_causal_mask(3, 7) if mask == "array" else mask
    ours = scaled_dot_product_attention(q, qk, qv, cache, 0.125, m)
    dk, dv = (mx.dequantize(*t, group_size=32, bits=8) for t in (qk, qv))
    ref = mx.fast.scaled_dot_product_attention(q, dk, dv, scale=0.125, mask=m)
    np.testing.assert_allclose(np.array(ours), np.array(ref), atol=2e-5)


def test_to_quantized_packs_what_the_cache_holds():
    k, v, _ = _qkv(5)
    c = KVCache()
    c.update_and_fetch(k, v)
    q = c.to_quantized(group_size=32, bits=8)
    assert q.offset == 5 and q.keys[0].shape == (1, 2, 5, 16)  # 64 dims at 8 bits
    back = mx.dequantize(*q.keys, group_size=32, bits=8)
    np.testing.assert_allclose(np.array(back), np.array(k), atol=0.05)


def _filled(kind):
    model = tiny("gemma3_text" if kind == "rotating" else "qwen3")
    cache = (
        [QuantizedKVCache(32, 8) for _ in model.layers] if kind == "quantized"
        else make_prompt_cache(model)
    )  # fmt: skip
    tokens = mx.array(np.random.RandomState(5).randint(0, VOCAB, (1, 10)))
    model(tokens[:, :7], cache=cache)
    for t in range(7, 10):
        model(tokens[:, t : t + 1], cache=cache)
    return model, cache


@pytest.mark.parametrize("kind", ["plain", "rotating", "quantized"])
def test_prompt_cache_file_round_trip(kind, tmp_path):
    model, cache = _filled(kind)
    path = str(tmp_path / "cache.safetensors")
    save_prompt_cache(path, cache, {"model": "tiny", "chat": "x"})
    loaded, meta = load_prompt_cache(path, return_metadata=True)
    assert meta == {"model": "tiny", "chat": "x"}
    assert [type(c) for c in loaded] == [type(c) for c in cache]
    assert [c.offset for c in loaded] == [c.offset for c in cache]
    nxt = mx.array([[3, 1, 4]])
    assert np.array_equal(np.array(model(nxt, cache=loaded)), np.array(model(nxt, cache=cache)))
    assert len(load_prompt_cache(path)) == len(cache)


def test_mlx_lm_reads_our_prompt_cache_file_and_we_read_its(tmp_path):
    mlx_cache = mlx_lm_module("cache")
    _, cache = _filled("rotating")
    ours = str(tmp_path / "ours.safetensors")
    save_prompt_cache(ours, cache, {"a": "b"})
    theirs, meta = mlx_cache.load_prompt_cache(ours, return_metadata=True)
    assert meta == {"a": "b"} and [type(c).__name__ for c in theirs] == [
        type(c).__name__ for c in cache
    ]
    for a, b in zip(theirs, cache):
        assert a.offset == b.offset
        assert np.array_equal(np.array(a.state[0]), np.array(b.state[0]))
    back = str(tmp_path / "theirs.safetensors")
    mlx_cache.save_prompt_cache(back, theirs, {"c": "d"})
    again, meta = load_prompt_cache(back, return_metadata=True)
    assert meta == {"c": "d"}
    for a, b in zip(again, cache):
        assert a.state[2:] == b.state[2:]
        assert np.array_equal(np.array(a.state[1]), np.array(b.state[1]))


def test_a_file_that_is_not_a_prompt_cache_raises(tmp_path):
    path = str(tmp_path / "w.safetensors")
    mx.save_safetensors(path, {"a": mx.ones((2,))})
    with pytest.raises(ValueError, match="not a prompt cache"):
        load_prompt_cache(path)


def test_trim_prompt_cache():
    model, cache = _filled("plain")
    assert can_trim_prompt_cache(cache) and trim_prompt_cache(cache, 4) == 4
    assert all(c.offset == 6 for c in cache)
    _, rot = _filled("rotating")  # 10 positions through windows of 4, the last 3 one by one
    assert not can_trim_prompt_cache(rot) and trim_prompt_cache(rot, 1) == 0


def test_generate_step_options_make_rotating_or_quantized_caches():
    from nuvec.lm.generate import generate_step

    model = tiny("qwen3")
    prompt = mx.array(np.random.RandomState(9).randint(0, VOCAB, 10))
    plain = [t for t, _ in generate_step(prompt, model, max_tokens=8)]
    cache = make_prompt_cache(model)
    quant = [t for t, _ in generate_step(prompt, model, max_tokens=8, prompt_cache=cache, kv_bits=8,
                                         kv_group_size=32, quantized_kv_start=6)]  # fmt: skip
    assert all(isinstance(c, QuantizedKVCache) and c.offset == 17 for c in cache)
    assert sum(a == b for a, b in zip(plain, quant)) >= 6  # 8 bits: nearly the same tokens
    # A window larger than the text changes nothing, bit for bit.
    assert [t for t, _ in generate_step(prompt, model, max_tokens=8, max_kv_size=64)] == plain


def test_quantized_attention_equals_mlx_lm():
    mlx = pytest.importorskip("mlx.core")
    base = mlx_lm_module("base")
    r = np.random.RandomState(7)
    q = r.standard_normal((1, 4, 3, 64)).astype(np.float32)
    k, v = (r.standard_normal((1, 2, 9, 64)).astype(np.float32) for _ in range(2))
    for mask in ("causal", None):
        ours = scaled_dot_product_attention(
            mx.array(q), mx.quantize(mx.array(k), 64, 4), mx.quantize(mx.array(v), 64, 4),
            QuantizedKVCache(64, 4), 0.125, mask,
        )  # fmt: skip
        theirs = base.quantized_scaled_dot_product_attention(
            mlx.array(q), mlx.quantize(mlx.array(k), 64, 4), mlx.quantize(mlx.array(v), 64, 4),
            0.125, mask, group_size=64, bits=4,
        )  # fmt: skip
        np.testing.assert_allclose(np.array(ours), np.array(theirs), atol=2e-5)


@pytest.mark.parametrize("keep", [0, 2])
def test_rotating_cache_holds_what_mlx_lm_holds(keep):
    """The same updates (prompt chunks and single tokens) into ours and mlx-lm's RotatingKVCache:
    the same keys returned, offsets, write positions and masks."""
    mlx = pytest.importorskip("mlx.core")
    theirs = mlx_lm_module("cache").RotatingKVCache(max_size=6, keep=keep)
    ours = RotatingKVCache(6, keep=keep)
    r = np.random.RandomState(8)
    for n in [3, 1, 1, 1, 1, 4, 1, 1, 2, 1, 1, 1, 1, 1]:
        k = r.standard_normal((1, 1, n, 4)).astype(np.float32)
        for window in (None, 4, 6) if keep == 0 else (None, 6):  # (keep > 0: see below)
            a = ours.make_mask(n, window_size=window)
            b = theirs.make_mask(n, window_size=window)
            assert (a is None) == (b is None) and isinstance(a, str) == isinstance(b, str)
            if a is not None and not isinstance(a, str):
                assert np.array_equal(np.array(a), np.array(b))
        ka, _ = ours.update_and_fetch(mx.array(k), mx.array(k))
        kb, _ = theirs.update_and_fetch(mlx.array(k), mlx.array(k))
        assert np.array_equal(np.array(ka), np.array(kb))
        assert (ours.offset, ours._idx) == (theirs.offset, theirs._idx)


@pytest.mark.parametrize("name", ["gemma3_text", "mistral", "qwen3_moe", "phi3"])
def test_a_prompt_in_a_left_padded_batch_gets_its_own_bits(name):
    """BatchKVCache masks hide each row's pads (and, on sliding layers, the keys outside the
    window): each row's prefill and decode logits are those of the row alone. Prompts longer
    than 8 tokens: prefill attention takes another path for 2 to 8 query rows (the serial
    rule's), so a prompt of at most 8 tokens alone and in a wider batch differ in rounding."""
    model = tiny(name)
    r = np.random.RandomState(10)
    prompts = [list(r.randint(0, VOCAB, n)) for n in (40, 12, 33)]
    pads = [40 - len(p) for p in prompts]
    cache = make_prompt_cache(model, left_padding=pads)
    first = np.array(model(mx.array([[0] * n + p for n, p in zip(pads, prompts)]), cache=cache))
    nxt = np.array(model(mx.array([[5], [6], [7]]), cache=cache))
    for i, p in enumerate(prompts):
        alone = make_prompt_cache(model, left_padding=[0])
        assert np.array_equal(np.array(model(mx.array([p]), cache=alone))[0, -1], first[i, -1])
        assert np.array_equal(np.array(model(mx.array([[5 + i]]), cache=alone))[0, -1], nxt[i, -1])
