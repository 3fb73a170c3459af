"""block_masked_mm: NumPy float64 references for boolean and float masks of the result and of
both operands, MLX differentials (values, shapes, broadcasting, errors, gradients), and the
gradient and vmap rules (the op is built from ops that have both)."""

import numpy as np
import pytest

from _impl import mx
from helpers import seeded_rng

nuvec_only = pytest.mark.nuvec_only


def spread(mask, bs, rows, cols):
    m = np.asarray(mask)
    return np.repeat(np.repeat(m, bs, axis=-2), bs, axis=-1)[..., :rows, :cols]


def reference(a, b, bs, out=None, lhs=None, rhs=None):
    a, b = a.astype(np.float64), b.astype(np.float64)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    if lhs is not None:
        e = spread(lhs, bs, M, K)
        a = (
            np.where(e, a, 0.0)
            if e.dtype == bool and (rhs is None or np.asarray(rhs).dtype == bool)
            else a * e
        )
    if rhs is not None:
        e = spread(rhs, bs, K, N)
        b = (
            np.where(e, b, 0.0)
            if e.dtype == bool and (lhs is None or np.asarray(lhs).dtype == bool)
            else b * e
        )
    r = a @ b
    if out is not None:
        e = spread(out, bs, M, N)
        r = np.where(e, r, 0.0) if e.dtype == bool else r * e
    return r


def masks(rng, kind, *shape):
    return (
        rng.random(shape) > 0.4 if kind == "bool" else rng.uniform(-1, 2, shape).astype(np.float32)
    )


def arg(x):
    return None if x is None else mx.array(x)


CASES = [(40, 70, 50, 32), (64, 64, 64, 64), (100, 33, 130, 64), (5, 200, 7, 32)]


@pytest.mark.parametrize("kind", ["bool", "float"])
@pytest.mark.parametrize("which", ["out", "lhs", "rhs", "all", "operands"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_values_against_numpy(case, which, kind):
    M, K, N, bs = case
    rng = seeded_rng("bmm", case, which, kind)
    a, b = (
        rng.standard_normal((M, K)).astype(np.float32),
        rng.standard_normal((K, N)).astype(np.float32),
    )
    tm, tk, tn = -(-M // bs), -(-K // bs), -(-N // bs)
    mo = masks(rng, kind, tm, tn) if which in ("out", "all") else None
    ml = masks(rng, kind, tm, tk) if which in ("lhs", "all", "operands") else None
    mr = masks(rng, kind, tk, tn) if which in ("rhs", "all", "operands") else None
    got = mx.block_masked_mm(mx.array(a), mx.array(b), bs, arg(mo), arg(ml), arg(mr))
    ref = reference(a, b, bs, mo, ml, mr)
    assert got.shape == ref.shape and got.dtype == mx.float32
    np.testing.assert_allclose(np.array(got), ref, rtol=1e-5, atol=1e-4)


def test_masked_blocks_are_never_read():
    a = np.ones((64, 64), np.float32)
    a[0, 0] = np.nan
    b = np.ones((64, 64), np.float32)
    skip_lhs = np.array([[False, True], [True, True]])
    out = mx.block_masked_mm(mx.array(a), mx.array(b), 32, None, mx.array(skip_lhs))
    assert not np.isnan(np.array(out)).any()
    skip_out = np.array([[False, True], [True, True]])
    out = np.array(mx.block_masked_mm(mx.array(a), mx.array(b), 32, mx.array(skip_out)))
    assert not np.isnan(out[:32, :32]).any() and np.isnan(out[0, 32:]).all()


def test_batches_and_vectors():
    rng = seeded_rng("bmm batch")
    a, b = (
        rng.standard_normal((3, 1, 40, 70)).astype(np.float32),
        rng.standard_normal((2, 70, 50)).astype(np.float32),
    )
    mo = rng.random((2, 2)) > 0.5
    got = mx.block_masked_mm(mx.array(a), mx.array(b), 32, mx.array(mo))
    np.testing.assert_allclose(np.array(got), reference(a, b, 32, mo), rtol=1e-5, atol=1e-4)
    v, m = (
        rng.standard_normal(70).astype(np.float32),
        rng.standard_normal((70, 50)).astype(np.float32),
    )
    got = mx.block_masked_mm(mx.array(v), mx.array(m), 32, mx.array(np.array([True, False])))
    want = (v.astype(np.float64) @ m) * np.repeat([1.0, 0.0], 32)[:50]
    assert got.shape == (50,)
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-4)
    got = mx.block_masked_mm(
        mx.array(m.T), mx.array(v), 32, None, None, mx.array(np.array([True, False, True]))
    )
    assert got.shape == (50,)


def test_without_masks_is_matmul():
    a, b = mx.ones((3, 4)), mx.ones((4, 2))
    assert np.array_equal(np.array(mx.block_masked_mm(a, b, 7)), np.array(a @ b))


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.block_masked_mm(
            mx.ones((40, 70)), mx.ones((70, 50)), 16, mx.ones((3, 2), mx.bool_)
        ),
        lambda: mx.block_masked_mm(
            mx.ones((40, 70)), mx.ones((70, 50)), 32, mx.ones((3, 3), mx.bool_)
        ),
        lambda: mx.block_masked_mm(
            mx.ones((40, 70)), mx.ones((60, 50)), 32, mx.ones((2, 2), mx.bool_)
        ),
        lambda: mx.block_masked_mm(mx.ones(()), mx.ones((70, 50)), 32, mx.ones((2, 2), mx.bool_)),
        lambda: mx.block_masked_mm(
            mx.ones((40, 70), mx.int32), mx.ones((70, 50), mx.int32), 32, mx.ones((2, 2), mx.bool_)
        ),
    ],
    ids=["block size", "mask shape", "inner", "0-d", "int"],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_against_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("bmm mlx")
    for M, K, N, bs in CASES:
        a, b = (
            rng.standard_normal((2, M, K)).astype(np.float32),
            rng.standard_normal((K, N)).astype(np.float32),
        )
        tm, tk, tn = -(-M // bs), -(-K // bs), -(-N // bs)
        for kind in ("bool", "float"):
            ms = [masks(rng, kind, tm, tn), masks(rng, kind, 2, tm, tk), masks(rng, "bool", tk, tn)]
            got = mx.block_masked_mm(mx.array(a), mx.array(b), bs, *[mx.array(m) for m in ms])
            want = mlx.block_masked_mm(mlx.array(a), mlx.array(b), bs, *[mlx.array(m) for m in ms])
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-4)
            f = lambda m: (
                lambda x, y: (m.block_masked_mm(x, y, bs, *[m.array(q) for q in ms]) ** 2).sum()
            )  # noqa: E731
            g1 = mx.grad(f(mx), argnums=(0, 1))(mx.array(a), mx.array(b))
            g2 = mlx.grad(f(mlx), argnums=(0, 1))(mlx.array(a), mlx.array(b))
            for x, y in zip(g1, g2):
                np.testing.assert_allclose(np.array(x), np.array(y), rtol=1e-4, atol=1e-3)


@nuvec_only
def test_float64_and_half_types():
    # MLX's CPU kernel takes float32 only.
    rng = seeded_rng("bmm dtypes")
    a, b = rng.standard_normal((40, 70)), rng.standard_normal((70, 50))
    mo, ml = rng.random((2, 2)) > 0.3, rng.uniform(0, 1, (2, 3))
    for dt, tol in (("float64", 1e-12), ("float16", 5e-2), ("bfloat16", 2e-1)):
        d = getattr(mx, dt)
        x = mx.array(a, dtype=mx.float64).astype(d)
        y = mx.array(b, dtype=mx.float64).astype(d)
        got = mx.block_masked_mm(x, y, 32, mx.array(mo), mx.array(ml, dtype=mx.float64))
        assert got.dtype == d
        ref = reference(
            np.array(x.astype(mx.float64)),
            np.array(y.astype(mx.float64)),
            32,
            mo,
            ml.astype(np.float64),
        )
        np.testing.assert_allclose(np.array(got.astype(mx.float64)), ref, rtol=tol, atol=tol * 10)
