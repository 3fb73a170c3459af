"""nuvec.fast.rms_norm, layer_norm and add_rms_norm: values against NumPy float64 references
and MLX, dtypes and errors as MLX's, gradients against finite differences and MLX, vmap against
a loop. The bit-for-bit promises are in tests/test_fast_norms_determinism.py."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

RNG = np.random.default_rng(15)
DTYPES = {"float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}


def ref_rms(x, w, eps):
    x = x.astype(np.float64)
    y = x / np.sqrt(np.mean(x * x, -1, keepdims=True) + eps)
    return y if w is None else y * w


def ref_layer(x, w, b, eps):
    x = x.astype(np.float64)
    xc = x - x.mean(-1, keepdims=True)
    y = xc / np.sqrt(np.mean(xc * xc, -1, keepdims=True) + eps)
    y = y if w is None else y * w
    return y if b is None else y + b


def arr(x, dtype="float32"):
    return mx.array(x).astype(getattr(mx, dtype))


def f64(a):
    return np.asarray(a.astype(mx.float32)).astype(np.float64)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (2, 3, 16), (4, 67), (2, 1000), (0, 8), (3, 0)])
@pytest.mark.parametrize("weighted", [True, False])
def test_rms_norm_matches_numpy(dtype, shape, weighted):
    x = RNG.standard_normal(shape).astype(np.float32) * 3
    w = RNG.standard_normal(shape[-1]).astype(np.float32) if weighted else None
    xq = f64(arr(x, dtype))
    wq = None if w is None else f64(arr(w, dtype))
    y = mx.fast.rms_norm(arr(x, dtype), None if w is None else arr(w, dtype), 1e-5)
    assert y.dtype == getattr(mx, dtype) and y.shape == shape
    if y.size == 0:
        return
    np.testing.assert_allclose(
        f64(y), ref_rms(xq, wq, 1e-5), rtol=DTYPES[dtype], atol=DTYPES[dtype]
    )


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (2, 3, 16), (4, 67), (2, 1000)])
@pytest.mark.parametrize("parts", ["wb", "w", "b", ""])
def test_layer_norm_matches_numpy(dtype, shape, parts):
    x = RNG.standard_normal(shape).astype(np.float32) * 2 + 1
    w = RNG.standard_normal(shape[-1]).astype(np.float32) if "w" in parts else None
    b = RNG.standard_normal(shape[-1]).astype(np.float32) if "b" in parts else None
    q = [None if v is None else f64(arr(v, dtype)) for v in (x, w, b)]
    y = mx.fast.layer_norm(
        arr(x, dtype), *[None if v is None else arr(v, dtype) for v in (w, b)], 1e-5
    )
    assert y.dtype == getattr(mx, dtype)
    tol = DTYPES[dtype] * (10 if shape[-1] == 1 else 1)
    np.testing.assert_allclose(f64(y), ref_layer(*q, 1e-5), rtol=tol, atol=tol)


@pytest.mark.nuvec_only  # nuvec's float64 route is float64 throughout
def test_float64_and_strided_inputs():
    x = RNG.standard_normal((4, 9, 12))
    w = RNG.standard_normal(12)
    y = mx.fast.rms_norm(mx.array(x, dtype=mx.float64), mx.array(w, dtype=mx.float64), 1e-6)
    assert y.dtype == mx.float64
    np.testing.assert_allclose(np.asarray(y), ref_rms(x, w, 1e-6), 1e-12)
    xs = mx.array(x.astype(np.float32))[:, ::2, ::2]  # a strided view
    w6 = w[:6].astype(np.float32)
    y = mx.fast.layer_norm(xs, mx.array(w6), None, 1e-5)
    ref = ref_layer(x.astype(np.float32)[:, ::2, ::2], w6, None, 1e-5)
    np.testing.assert_allclose(np.asarray(y), ref, 1e-5, 1e-5)


@pytest.mark.parametrize(
    "xd, wd, out",
    [
        ("float16", "float32", "float32"),
        ("bfloat16", "float16", "float32"),
        ("float32", "float16", "float32"),
        ("float16", "float16", "float16"),
        ("int32", "float32", "float32"),
    ],
)
def test_result_dtype_as_mlx(xd, wd, out):
    x, w = arr(RNG.standard_normal((2, 8)), xd), arr(np.ones(8), wd)
    assert mx.fast.rms_norm(x, w, 1e-5).dtype == getattr(mx, out)
    assert mx.fast.layer_norm(x, w, None, 1e-5).dtype == getattr(mx, out)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.fast.rms_norm(mx.ones((2, 8)), mx.ones(7), 1e-5),
        lambda: mx.fast.rms_norm(mx.ones((2, 8)), mx.ones((1, 8)), 1e-5),
        lambda: mx.fast.rms_norm(mx.array(1.0), None, 1e-5),
        lambda: mx.fast.rms_norm(mx.ones((2, 3), dtype=mx.int32), None, 1e-5),
        lambda: mx.fast.layer_norm(mx.ones((2, 8)), None, mx.ones(7), 1e-5),
        lambda: mx.fast.layer_norm(mx.ones((2, 8), dtype=mx.int32), None, None, 1e-5),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.nuvec_only
def test_bad_add_rms_norm_raises():
    with pytest.raises(mx.OpError):
        mx.fast.add_rms_norm(mx.ones((2, 8)), mx.ones((2, 7)), None, 1e-5)
    with pytest.raises(mx.OpError):
        mx.fast.add_rms_norm(mx.ones((2, 8)), mx.ones((2, 8), dtype=mx.float16), None, 1e-5)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("d", [1, 15, 64, 1003])
def test_add_rms_norm_is_bitwise_the_two_steps(dtype, d):
    x, r = (arr(RNG.standard_normal((5, d)) * 4, dtype) for _ in range(2))
    w = arr(RNG.standard_normal(d), dtype)
    for weight in (w, None):
        y, h = mx.fast.add_rms_norm(x, r, weight, 1e-5)
        h2 = x + r
        y2 = mx.fast.rms_norm(h2, weight, 1e-5)
        assert h.dtype == h2.dtype and y.dtype == y2.dtype
        assert np.array_equal(
            np.asarray(h.view(mx.uint16 if dtype != "float32" else mx.uint32)),
            np.asarray(h2.view(mx.uint16 if dtype != "float32" else mx.uint32)),
        )
        assert np.array_equal(f64(y), f64(y2))


# ---- MLX as the oracle -------------------------------------------------------------------


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_values_and_dtypes_match_mlx(dtype):
    mlx = pytest.importorskip("mlx.core")
    x = RNG.standard_normal((3, 7, 130)).astype(np.float32)
    w, b = RNG.standard_normal(130).astype(np.float32), RNG.standard_normal(130).astype(np.float32)
    for fn in (
        lambda m, c: m.fast.rms_norm(c(x), c(w), 1e-5),
        lambda m, c: m.fast.rms_norm(c(x), None, 1e-4),
        lambda m, c: m.fast.layer_norm(c(x), c(w), c(b), 1e-5),
        lambda m, c: m.fast.layer_norm(c(x), None, None, 1e-5),
    ):
        ours = fn(mx, lambda v: arr(v, dtype))
        theirs = fn(mlx, lambda v: mlx.array(v).astype(getattr(mlx, dtype)))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(
            f64(ours),
            np.asarray(theirs.astype(mlx.float32)),
            rtol=2 * DTYPES[dtype],
            atol=2 * DTYPES[dtype],
        )


def _grads(m, x, w, b, g, layer):
    def f(x, w, b):
        y = m.fast.layer_norm(x, w, b, 1e-5) if layer else m.fast.rms_norm(x, w, 1e-5)
        return (y * g).sum()

    return m.grad(f, argnums=(0, 1, 2) if layer else (0, 1))(x, w, b)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("layer", [False, True])
def test_gradients_match_mlx_and_finite_differences(layer):
    x = RNG.standard_normal((3, 4, 21)).astype(np.float32)
    w, b = RNG.standard_normal(21).astype(np.float32), RNG.standard_normal(21).astype(np.float32)
    g = RNG.standard_normal((3, 4, 21)).astype(np.float32)
    ours = _grads(mx, *(mx.array(v) for v in (x, w, b, g)), layer)
    mlx = pytest.importorskip("mlx.core") if not IS_MLX else None
    if mlx is not None:
        theirs = _grads(mlx, *(mlx.array(v) for v in (x, w, b, g)), layer)
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(np.asarray(a), np.asarray(t), rtol=1e-4, atol=1e-4)
    # Finite differences of the float64 reference.
    ref = (
        (lambda x, w, b: ref_layer(x, w, b, 1e-5))
        if layer
        else (lambda x, w, b: ref_rms(x, w, 1e-5))
    )
    base = [v.astype(np.float64) for v in (x, w, b)]
    for k in range(len(ours)):
        fd = np.zeros_like(base[k])
        for idx in np.ndindex(*base[k].shape):
            p = [v.copy() for v in base]
            p[k][idx] += 1e-6
            m = [v.copy() for v in base]
            m[k][idx] -= 1e-6
            fd[idx] = ((ref(*p) - ref(*m)) * g).sum() / 2e-6
        np.testing.assert_allclose(np.asarray(ours[k]), fd, rtol=1e-3, atol=1e-3)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("layer", [False, True])
def test_jvp_matches_the_vjp(layer):
    x, w, b = (mx.array(RNG.standard_normal(s).astype(np.float32)) for s in ((5, 33), (33,), (33,)))
    tx, tw, tb = (
        mx.array(RNG.standard_normal(s).astype(np.float32)) for s in ((5, 33), (33,), (33,))
    )
    c = mx.array(RNG.standard_normal((5, 33)).astype(np.float32))

    def f(x, w, b):
        return mx.fast.layer_norm(x, w, b, 1e-5) if layer else mx.fast.rms_norm(x, w, 1e-5) + 0 * b

    _, (jt,) = mx.jvp(f, [x, w, b], [tx, tw, tb])
    _, grads = mx.vjp(f, [x, w, b], [c])
    lhs = float((jt * c).sum())
    rhs = sum(float((gr * t).sum()) for gr, t in zip(grads, (tx, tw, tb)))
    assert abs(lhs - rhs) < 1e-3 * max(1.0, abs(rhs))


@pytest.mark.nuvec_only
def test_add_rms_norm_gradients_are_the_two_steps():
    x, r = (mx.array(RNG.standard_normal((4, 19)).astype(np.float32)) for _ in range(2))
    w = mx.array(RNG.standard_normal(19).astype(np.float32))
    c1, c2 = (mx.array(RNG.standard_normal((4, 19)).astype(np.float32)) for _ in range(2))

    def fused(x, r, w):
        y, h = mx.fast.add_rms_norm(x, r, w, 1e-5)
        return (y * c1).sum() + (h * c2).sum()

    def steps(x, r, w):
        h = x + r
        return (mx.fast.rms_norm(h, w, 1e-5) * c1).sum() + (h * c2).sum()

    a = mx.grad(fused, argnums=(0, 1, 2))(x, r, w)
    b = mx.grad(steps, argnums=(0, 1, 2))(x, r, w)
    for u, v in zip(a, b):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-5)
    _, (ty, th) = mx.jvp(
        lambda x, r, w: mx.fast.add_rms_norm(x, r, w, 1e-5), [x, r, w], [c1, c2, w]
    )
    _, (sy,) = mx.jvp(lambda x, r, w: mx.fast.rms_norm(x + r, w, 1e-5), [x, r, w], [c1, c2, w])
    np.testing.assert_allclose(np.asarray(ty), np.asarray(sy), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(th), np.asarray(c1 + c2), rtol=1e-6)


@pytest.mark.parametrize("wax, bax", [(None, None), (0, None), (None, 0), (0, 0)])
def test_vmap_matches_a_loop(wax, bax):
    x = mx.array(RNG.standard_normal((3, 4, 6)).astype(np.float32))  # batch on axis 1
    w = mx.array(RNG.standard_normal((4, 6) if wax == 0 else (6,)).astype(np.float32))
    b = mx.array(RNG.standard_normal((4, 6) if bax == 0 else (6,)).astype(np.float32))
    for fn in (
        lambda x, w, b: mx.fast.layer_norm(x, w, b, 1e-5),
        lambda x, w, b: mx.fast.rms_norm(x, w, 1e-5) + b,
    ):
        y = mx.vmap(fn, in_axes=(1, wax, bax))(x, w, b)
        for i in range(4):
            wi = w[i] if wax == 0 else w
            bi = b[i] if bax == 0 else b
            np.testing.assert_allclose(
                np.asarray(y[i]), np.asarray(fn(x[:, i], wi, bi)), 1e-5, 1e-6
            )


@pytest.mark.nuvec_only
def test_vmap_add_rms_norm():
    x, r = (mx.array(RNG.standard_normal((5, 3, 8)).astype(np.float32)) for _ in range(2))
    w = mx.array(RNG.standard_normal((3, 8)).astype(np.float32))
    y, h = mx.vmap(lambda x, r, w: mx.fast.add_rms_norm(x, r, w, 1e-5), in_axes=(1, 1, 0))(x, r, w)
    for i in range(3):
        yi, hi = mx.fast.add_rms_norm(x[:, i], r[:, i], w[i], 1e-5)
        np.testing.assert_allclose(np.asarray(y[i]), np.asarray(yi), 1e-6)
        assert np.array_equal(np.asarray(h[i]), np.asarray(hi))


@pytest.mark.nuvec_only
def test_outputs_past_the_caches_keep_the_bits():
    # Outputs of 16 MiB and more are written with streaming stores: same bits as small calls.
    x = mx.array(RNG.standard_normal((4096, 1025)).astype(np.float32))
    w = mx.array(RNG.standard_normal(1025).astype(np.float32))
    q = mx.array(RNG.standard_normal((2, 16, 1024, 128)).astype(np.float32))
    big = [mx.fast.rms_norm(x, w, 1e-5), mx.fast.layer_norm(x, w, w, 1e-5)]
    rows = [0, 1, 777, 4095]
    small = [mx.fast.rms_norm(x[rows], w, 1e-5), mx.fast.layer_norm(x[rows], w, w, 1e-5)]
    for b, s in zip(big, small):
        assert np.array_equal(np.asarray(b)[rows], np.asarray(s))
    kw = dict(traditional=False, base=10000.0, scale=1.0, offset=3)
    yq = np.asarray(mx.fast.rope(q, 128, **kw))
    assert np.array_equal(yq[1:2, 5:6], np.asarray(mx.fast.rope(q[1:2, 5:6], 128, **kw)))
