"""fast.scaled_dot_product_attention against a NumPy float64 reference and, where installed,
MLX: grouped-query heads, value head dims, every mask form, sinks, Lq != Lk, half types, errors;
and nuvec's plan_attention (docs/attention.md)."""

import importlib

import numpy as np
import pytest

from _impl import IS_MLX, mx
from attention_reference import operands, sdpa_reference

fast = mx.fast if hasattr(mx, "fast") else importlib.import_module("nuvec.fast")
sdpa = fast.scaled_dot_product_attention

# (B, Hq, Hkv, Lq, Lk, D, Dv): decode (Lq <= 8) and prefill shapes, tails of every vector width,
# key counts over one decode block (256) and prefill tile (64), Lq > Lk.
SHAPES = [
    (1, 4, 2, 3, 5, 8, 6),
    (2, 4, 1, 1, 700, 64, 64),
    (1, 2, 2, 8, 8, 128, 128),
    (1, 2, 2, 1, 1, 3, 5),
    (1, 2, 2, 100, 130, 16, 16),
    (1, 3, 3, 70, 40, 12, 20),
    (2, 6, 2, 9, 300, 33, 17),
    (1, 1, 1, 130, 130, 7, 7),
    (1, 2, 1, 6, 3, 8, 8),  # decode rows before the first key (causal)
    (1, 2, 2, 200, 70, 16, 8),  # prefill tiles whose rows see no key
]
MASKS = [None, "causal", "additive", "boolean"]


def make_mask(kind, b, hq, lq, lk, seed=1):
    rng = np.random.default_rng(seed)
    if kind == "additive":
        return rng.standard_normal((lq, lk)).astype(np.float32)
    if kind == "boolean":
        return rng.random((b, 1, lq, lk)) > 0.3
    return kind


def as_mx(x):
    return x if x is None or isinstance(x, str) else mx.array(x)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("with_sinks", [False, True])
def test_matches_float64_reference(shape, mask, with_sinks):
    b, hq, hkv, lq, lk, d, dv = shape
    q, k, v = operands(b, hq, hkv, lq, lk, d, dv)
    m = make_mask(mask, b, hq, lq, lk)
    sinks = np.linspace(-1, 2, hq).astype(np.float32) if with_sinks else None
    out = sdpa(
        mx.array(q), mx.array(k), mx.array(v), scale=d**-0.5, mask=as_mx(m), sinks=as_mx(sinks)
    )
    assert out.shape == (b, hq, lq, dv) and out.dtype == mx.float32
    np.testing.assert_allclose(
        np.array(out), sdpa_reference(q, k, v, d**-0.5, m, sinks), rtol=2e-5, atol=2e-5
    )


@pytest.mark.parametrize("shape", SHAPES[:6], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("mask", MASKS)
def test_matches_mlx(shape, mask):
    mlx = pytest.importorskip("mlx.core")
    b, hq, hkv, lq, lk, d, dv = shape
    q, k, v = operands(b, hq, hkv, lq, lk, d, dv, seed=5)
    m = make_mask(mask, b, hq, lq, lk)
    sinks = np.linspace(0.5, -1, hq).astype(np.float32)

    def mk(x, lib):
        return x if x is None or isinstance(x, str) else lib.array(x)

    got = sdpa(
        mx.array(q), mx.array(k), mx.array(v), scale=0.2, mask=mk(m, mx), sinks=mx.array(sinks)
    )
    want = mlx.fast.scaled_dot_product_attention(
        mlx.array(q), mlx.array(k), mlx.array(v), scale=0.2, mask=mk(m, mlx), sinks=mlx.array(sinks)
    )
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-5)


def test_fully_masked_rows_average_the_values_as_mlx():
    # A boolean row of False, and causal rows before the first key (Lq > Lk), weigh every key alike.
    q, k, v = operands(1, 2, 2, 12, 5, 8)
    ref = np.broadcast_to(v.astype(np.float64).mean(-2, keepdims=True), (1, 2, 12, 8))
    out = sdpa(
        mx.array(q), mx.array(k), mx.array(v), scale=1.0, mask=mx.zeros((12, 5), dtype=mx.bool_)
    )
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-5, atol=1e-6)
    out = sdpa(mx.array(q), mx.array(k), mx.array(v), scale=1.0, mask="causal")
    np.testing.assert_allclose(np.array(out)[:, :, :7], ref[:, :, :7], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.array(out), sdpa_reference(q, k, v, 1.0, "causal"), rtol=1e-5, atol=1e-6
    )


def test_additive_minus_inf_mask_and_empty_keys():
    q, k, v = operands(1, 1, 1, 2, 300, 4)
    m = np.zeros((2, 300), np.float32)
    m[:, :260] = -np.inf  # a decode block of -inf scores beside one with finite ones
    out = sdpa(mx.array(q), mx.array(k), mx.array(v), scale=0.5, mask=mx.array(m))
    np.testing.assert_allclose(np.array(out), sdpa_reference(q, k, v, 0.5, m), rtol=1e-5, atol=1e-6)
    m[1] = -np.inf  # every score -inf: NaN, as softmax gives
    assert np.isnan(
        np.array(sdpa(mx.array(q), mx.array(k), mx.array(v), scale=0.5, mask=mx.array(m)))[0, 0, 1]
    ).all()
    empty = sdpa(mx.array(q), mx.array(k[:, :, :0]), mx.array(v[:, :, :0]), scale=0.5)
    assert empty.shape == (1, 1, 2, 4) and not np.array(empty).any()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("lq", [1, 40])
def test_half_types_compute_in_float32(dtype, lq):
    q, k, v = operands(1, 4, 2, lq, 50, 16)
    dt = getattr(mx, dtype)
    xs = [mx.array(x).astype(dt) for x in (q, k, v)]
    out = sdpa(*xs, scale=0.25, mask="causal")
    assert out.dtype == dt
    rounded = [np.array(x.astype(mx.float32)) for x in xs]
    ref = sdpa_reference(*rounded, 0.25, "causal")
    tol = 1e-2 if dtype == "float16" else 3e-2
    np.testing.assert_allclose(np.array(out.astype(mx.float32)), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("lq", [1, 6])
def test_half_keys_beside_float32_queries(dtype, lq):
    # A half KV cache under float32 queries: the float32 result of the keys and values rounded to
    # the half type (as MLX, which converts them first; nuvec's kernels read them as they are).
    q, k, v = operands(1, 6, 2, lq, 300, 16)
    dt = getattr(mx, dtype)
    kh, vh = mx.array(k).astype(dt), mx.array(v).astype(dt)
    for mask in (None, "causal"):
        out = sdpa(mx.array(q), kh, vh, scale=0.25, mask=mask)
        assert out.dtype == mx.float32
        want = sdpa(
            mx.array(q), kh.astype(mx.float32), vh.astype(mx.float32), scale=0.25, mask=mask
        )
        if IS_MLX:
            np.testing.assert_allclose(np.array(out), np.array(want), rtol=1e-5, atol=1e-6)
        else:  # the same values in the same order: the same bits
            assert np.array_equal(np.array(out), np.array(want))


def test_mixed_and_float64_dtypes():
    q, k, v = operands(1, 2, 2, 3, 9, 8)
    out = sdpa(mx.array(q).astype(mx.float16), mx.array(k), mx.array(v), scale=0.3)
    assert out.dtype == mx.float32
    q16 = np.array(mx.array(q).astype(mx.float16).astype(mx.float32))
    np.testing.assert_allclose(np.array(out), sdpa_reference(q16, k, v, 0.3), rtol=1e-5, atol=1e-5)
    if (
        not IS_MLX
    ):  # MLX's GPU-default stream has no float64; nuvec computes it by the op composition
        x64 = [mx.array(x, dtype=mx.float64) for x in (q, k, v)]
        out = sdpa(*x64, scale=0.25, mask="causal")  # (scale is a float32, as MLX's)
        assert out.dtype == mx.float64
        np.testing.assert_allclose(
            np.array(out), sdpa_reference(q, k, v, 0.25, "causal"), rtol=1e-12
        )


def test_broadcast_masks_and_strided_operands():
    q, k, v = operands(2, 4, 2, 6, 20, 8)
    qt = mx.swapaxes(mx.array(np.ascontiguousarray(q.swapaxes(1, 2))), 1, 2)  # a transposed view
    for shape in [(20,), (6, 1), (4, 1, 1), (2, 1, 6, 20), (1, 4, 6, 20)]:
        m = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
        out = sdpa(qt, mx.array(k), mx.array(v), scale=0.3, mask=mx.array(m))
        np.testing.assert_allclose(
            np.array(out), sdpa_reference(q, k, v, 0.3, m), rtol=2e-5, atol=2e-5
        )
    ints = np.arange(20, dtype=np.int32) % 3 - 1
    out = sdpa(mx.array(q), mx.array(k), mx.array(v), scale=0.3, mask=mx.array(ints))
    np.testing.assert_allclose(
        np.array(out), sdpa_reference(q, k, v, 0.3, ints), rtol=2e-5, atol=2e-5
    )


BAD = [
    ("mask string", dict(mask="foo")),
    ("rank 3", dict(q=(4, 3, 8))),
    ("rank 5", dict(k=(1, 1, 2, 5, 8))),
    ("heads", dict(q=(1, 3, 3, 8))),
    ("kv heads", dict(v=(1, 1, 5, 6))),
    ("head dim", dict(k=(1, 2, 5, 4))),
    ("batch", dict(q=(2, 4, 3, 8))),
    ("mask rank", dict(mask=(1, 1, 1, 3, 5))),
    ("mask broadcast", dict(mask=(4, 5))),
    ("sinks shape", dict(sinks=(2,))),
    ("sinks rank", dict(sinks=(1, 4))),
]


@pytest.mark.parametrize("name,change", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_value_error(name, change):
    shapes = dict(q=(1, 4, 3, 8), k=(1, 2, 5, 8), v=(1, 2, 5, 6))
    shapes.update({n: s for n, s in change.items() if n in shapes})
    args = {n: mx.zeros(s) for n, s in shapes.items()}
    kw = {}
    for n in ("mask", "sinks"):
        if n in change:
            kw[n] = change[n] if isinstance(change[n], str) else mx.zeros(change[n])
    with pytest.raises(ValueError):
        mx.eval(sdpa(args["q"], args["k"], args["v"], scale=0.5, **kw))


def test_bad_dtypes_and_force_fused_raise():
    q, k, v = (mx.zeros(s) for s in [(1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)])
    with pytest.raises(ValueError):
        sdpa(q.astype(mx.int32), k.astype(mx.int32), v.astype(mx.int32), scale=0.5)
    with pytest.raises(ValueError):  # an additive mask must promote to the output dtype
        sdpa(
            q.astype(mx.float16),
            k.astype(mx.float16),
            v.astype(mx.float16),
            scale=0.5,
            mask=mx.zeros((3, 5)),
        )
    with pytest.raises(ValueError):
        sdpa(q, k, v, scale=0.5, force_fused=True)
    with pytest.raises(TypeError):
        sdpa(q, k, v)  # scale is required


@pytest.mark.nuvec_only
def test_bad_input_is_op_error():
    with pytest.raises(mx.OpError):
        sdpa(mx.zeros((1, 3, 2, 8)), mx.zeros((1, 2, 2, 8)), mx.zeros((1, 2, 2, 8)), scale=1.0)
    with pytest.raises(mx.OpError):  # keys and values of different lengths
        sdpa(mx.zeros((1, 2, 2, 8)), mx.zeros((1, 2, 3, 8)), mx.zeros((1, 2, 4, 8)), scale=1.0)


@pytest.mark.nuvec_only
def test_plan_routes_on_shapes_dtypes_and_options():
    plan = fast.plan_attention
    p = plan((1, 32, 1, 128), (1, 32, 1024, 128), (1, 32, 1024, 128))
    assert (
        p["kernel"] == "decode"
        and p["key_block"] == 256
        and p["key_blocks"] == 4
        and p["tasks"] == 32 * 4
    )
    assert p["compute_dtype"] == "float32"
    p = plan((1, 8, 8, 64), (1, 8, 600, 64), (1, 8, 600, 64), mask="causal")
    assert p["kernel"] == "decode" and p["key_blocks"] == 3
    assert p["tasks"] == 8 * sum(-(-(600 - 8 + i + 1) // 256) for i in range(8))
    p = plan((2, 8, 9, 64), (2, 8, 600, 64), (2, 8, 600, 64))
    assert (p["kernel"], p["tile_q"], p["tile_k"], p["tasks"]) == ("prefill", 64, 64, 2 * 8 * 1)
    assert plan((1, 1, 3, 8), (1, 1, 0, 8), (1, 1, 0, 8))["kernel"] == "empty"
    assert plan((1, 1, 3, 8), (1, 1, 4, 8), (1, 1, 4, 8), dtype=mx.float64)["kernel"] == "reference"
    assert (
        plan((1, 1, 3, 8), (1, 1, 4, 8), (1, 1, 4, 8), dtype=mx.bfloat16)["compute_dtype"]
        == "float32"
    )
    # Arrays plan as their shapes and dtypes; the plan is what the call raises for bad input.
    q, k, v = (mx.zeros(s) for s in [(1, 4, 20, 8), (1, 2, 30, 8), (1, 2, 30, 8)])
    assert plan(q, k, v, scale=0.1, mask=mx.zeros((20, 30)), sinks=mx.zeros(4)) == plan(
        q.shape, k.shape, v.shape, mask=(20, 30), sinks=(4,)
    )
    with pytest.raises(ValueError):
        plan((1, 3, 2, 8), (1, 2, 2, 8), (1, 2, 2, 8))
    with pytest.raises(ValueError):
        plan(q, k, v, mask="upper")


@pytest.mark.parametrize("lq", [1, 5, 40])
def test_views_of_a_cache_and_transposed_heads(lq):
    # Queries as (B, L, H, D) transposed to heads, keys and values a prefix of a longer cache:
    # read in place (nuvec), the same values as contiguous copies.
    b, hq, hkv, n, cap, d = 2, 4, 2, 50, 80, 16
    rng = np.random.default_rng(lq)
    qb = rng.standard_normal((b, lq, hq, d)).astype(np.float32)
    kc, vc = (rng.standard_normal((b, hkv, cap, d)).astype(np.float32) for _ in range(2))
    q = mx.array(qb).transpose(0, 2, 1, 3)
    k, v = mx.array(kc)[:, :, :n], mx.array(vc)[:, :, :n]
    got = sdpa(q, k, v, scale=0.25, mask="causal")
    want = sdpa(
        *(
            mx.array(np.ascontiguousarray(x))
            for x in (qb.transpose(0, 2, 1, 3), kc[:, :, :n], vc[:, :, :n])
        ),
        scale=0.25,
        mask="causal",
    )
    ref = sdpa_reference(qb.transpose(0, 2, 1, 3), kc[:, :, :n], vc[:, :, :n], 0.25, "causal")
    np.testing.assert_allclose(np.array(got), ref, rtol=2e-5, atol=2e-5)
    if not IS_MLX:  # the same kernel on the same values: the same bits
        assert np.array(got).tobytes() == np.array(want).tobytes()


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("lq", [1, 6, 70])
def test_half_keys_read_in_place_give_the_bits_of_float32_copies(dtype, lq):
    # The kernels read half keys and values as they are (exact in float32): the result is the
    # float32 call's on the converted operands, rounded once.
    q, k, v = operands(2, 4, 2, lq, 300, 24, 40, seed=lq)
    dt = getattr(mx, dtype)
    xs = [mx.array(x).astype(dt) for x in (q, k, v)]
    half = sdpa(*xs, scale=0.2, mask="causal")
    single = sdpa(*(x.astype(mx.float32) for x in xs), scale=0.2, mask="causal").astype(dt)
    assert np.array(half.view(mx.uint16)).tobytes() == np.array(single.view(mx.uint16)).tobytes()
    g = mx.grad(lambda kk: sdpa(xs[0], kk, xs[2], scale=0.2).astype(mx.float32).sum())(xs[1])
    assert g.dtype == dt and g.shape == xs[1].shape
