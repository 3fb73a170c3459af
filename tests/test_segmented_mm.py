"""segmented_mm: NumPy float64 references, MLX differentials (shapes, dtypes, errors), gradients
(which MLX lacks) against finite differences, the vmap rule, and rows with the bits of the
one-row product over the segment."""

import numpy as np
import pytest

from _impl import mx
from helpers import seeded_rng

# The CPU kernel: on a GPU, segmented_mm runs it on host copies, so its rows are not the GPU
# product's bits (docs/cuda.md).
pytestmark = pytest.mark.cpu_backend

nuvec_only = pytest.mark.nuvec_only


def reference(a, b, segments):
    segments = np.asarray(segments)
    out = np.zeros(segments.shape[:-1] + (a.shape[0], b.shape[1]))
    for idx in np.ndindex(*segments.shape[:-1]):
        s0, s1 = segments[idx]
        if s1 > s0:
            out[idx] = a[:, s0:s1].astype(np.float64) @ b[s0:s1].astype(np.float64)
    return out


def f64(x):
    return mx.array(np.asarray(x, np.float64), dtype=mx.float64)


SEGMENTS = [
    [[0, 2], [2, 6]],
    [[0, 6]],
    [[4, 2], [3, 3], [1, 5]],
    [[[0, 1], [1, 6]], [[2, 4], [0, 0]], [[5, 6], [0, 3]]],
    [0, 4],
    np.zeros((0, 2), np.int64),
]


@pytest.mark.parametrize("seg", SEGMENTS, ids=[str(i) for i in range(len(SEGMENTS))])
def test_values_against_numpy(seg):
    rng = seeded_rng("segmented", str(seg))
    a, b = (
        rng.standard_normal((3, 6)).astype(np.float32),
        rng.standard_normal((6, 5)).astype(np.float32),
    )
    out = mx.segmented_mm(mx.array(a), mx.array(b), mx.array(np.asarray(seg, np.int32)))
    ref = reference(a, b, seg)
    assert out.shape == ref.shape and out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-5, atol=1e-5)


def test_against_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("segmented mlx")
    a, b = (
        rng.standard_normal((7, 40)).astype(np.float32),
        rng.standard_normal((40, 9)).astype(np.float32),
    )
    for seg in SEGMENTS + [[[0, 13], [13, 40], [7, 31]]]:
        s = np.asarray(seg, np.uint32)
        got = mx.segmented_mm(mx.array(a), mx.array(b), mx.array(s))
        want = mlx.segmented_mm(mlx.array(a), mlx.array(b), mlx.array(s))
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-5)


def test_dtypes():
    a16 = mx.array(np.ones((3, 4), np.float16))
    b32 = mx.array(np.ones((4, 2), np.float32))
    seg = mx.array([[0, 3]])
    assert mx.segmented_mm(a16, b32, seg).dtype == mx.float32
    assert mx.segmented_mm(a16, a16.T, seg).dtype == mx.float16
    assert mx.segmented_mm(a16, b32, mx.array([[0, 3]], mx.uint8)).shape == (1, 3, 2)


@nuvec_only
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float64"])
def test_half_and_double_values(dt):
    rng = seeded_rng("segmented dtypes", dt)
    d = getattr(mx, dt)
    a, b = f64(rng.standard_normal((4, 32))).astype(d), f64(rng.standard_normal((32, 8))).astype(d)
    seg = [[0, 10], [10, 32], [5, 6]]
    out = mx.segmented_mm(a, b, mx.array(seg))
    A, B = np.array(a.astype(mx.float64)), np.array(b.astype(mx.float64))
    tol = 1e-12 if dt == "float64" else 5e-2
    np.testing.assert_allclose(
        np.array(out.astype(mx.float64)), reference(A, B, seg), rtol=tol, atol=tol
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.segmented_mm(mx.ones((2, 3, 4)), mx.ones((4, 2)), mx.array([[0, 1]])),
        lambda: mx.segmented_mm(mx.ones((4,)), mx.ones((4, 2)), mx.array([[0, 1]])),
        lambda: mx.segmented_mm(mx.ones((3, 4)), mx.ones((4, 2)), mx.array([0, 1, 2])),
        lambda: mx.segmented_mm(mx.ones((3, 4)), mx.ones((4, 2)), mx.array(2)),
        lambda: mx.segmented_mm(mx.ones((3, 4)), mx.ones((4, 2)), mx.array([[0.0, 1.0]])),
        lambda: mx.segmented_mm(
            mx.ones((3, 4), mx.int32), mx.ones((4, 2), mx.int32), mx.array([[0, 1]])
        ),
    ],
    ids=["batched", "vector", "segments shape", "0-d segments", "float segments", "int"],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@nuvec_only
def test_nuvec_refuses_what_mlx_reads_past():
    # MLX takes an inner-dimension mismatch and segments past K (reading out of bounds).
    with pytest.raises(ValueError):
        mx.segmented_mm(mx.ones((3, 4)), mx.ones((5, 2)), mx.array([[0, 1]]))
    with pytest.raises(IndexError):
        mx.eval(mx.segmented_mm(mx.ones((3, 4)), mx.ones((4, 2)), mx.array([[0, 5]])))


@nuvec_only
def test_rows_have_the_bits_of_the_one_row_segment_product():
    rng = seeded_rng("segmented bits")
    a = mx.array(rng.standard_normal((64, 300)).astype(np.float32))
    b = mx.array(rng.standard_normal((300, 70)).astype(np.float32))
    seg = [[0, 100], [100, 300], [17, 211]]
    out = mx.segmented_mm(a, b, mx.array(seg))
    for s, (s0, s1) in enumerate(seg):
        for r in (0, 5, 63):
            one = mx.matmul(a[r : r + 1, s0:s1], b[s0:s1])[0]
            assert np.array(out[s, r]).tobytes() == np.array(one).tobytes()


def _fd(f, xs, i, h=1e-6):
    g = np.zeros_like(xs[i])
    for idx in np.ndindex(*xs[i].shape):
        up, dn = [x.copy() for x in xs], [x.copy() for x in xs]
        up[i][idx] += h
        dn[i][idx] -= h
        g[idx] = (f(*up) - f(*dn)) / (2 * h)
    return g


@nuvec_only
def test_gradients_against_finite_differences():
    rng = seeded_rng("segmented grad")
    a, b = rng.standard_normal((3, 6)), rng.standard_normal((6, 4))
    seg = [[[0, 2], [2, 6]], [[1, 4], [5, 3]]]
    w = rng.standard_normal((2, 2, 3, 4))
    s = mx.array(seg)
    ga, gb = mx.grad(lambda x, y: (mx.segmented_mm(x, y, s) * f64(w)).sum(), argnums=(0, 1))(
        f64(a), f64(b)
    )
    loss = lambda x, y: float((reference(x, y, seg) * w).sum())  # noqa: E731
    np.testing.assert_allclose(np.array(ga), _fd(loss, [a, b], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.array(gb), _fd(loss, [a, b], 1), rtol=1e-6, atol=1e-8)
    ta, tb = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    _, (t,) = mx.jvp(lambda x, y: mx.segmented_mm(x, y, s), [f64(a), f64(b)], [f64(ta), f64(tb)])
    np.testing.assert_allclose(
        np.array(t), reference(ta, b, seg) + reference(a, tb, seg), rtol=1e-10, atol=1e-12
    )


@nuvec_only
@pytest.mark.parametrize(
    "axes", [(0, None, None), (None, 1, None), (2, 0, None), (None, None, 0), (1, None, 1)]
)
def test_vmap_matches_a_loop(axes):
    rng = seeded_rng("segmented vmap", axes)
    n = 3
    a, b = rng.standard_normal((3, 6)), rng.standard_normal((6, 4))
    seg = np.array([[0, 2], [2, 6], [1, 5]])
    ins = [a, b, seg]
    batched = []
    for j, (x, ax) in enumerate(zip(ins, axes)):
        if ax is None:
            batched.append(x)
        elif j < 2:
            batched.append(np.stack([x * (k + 1) for k in range(n)], axis=ax))
        else:
            batched.append(np.stack([np.roll(x, k, axis=0) for k in range(n)], axis=ax))
    xs = [f64(batched[0]), f64(batched[1]), mx.array(batched[2].astype(np.uint32))]
    got = np.array(mx.vmap(mx.segmented_mm, in_axes=axes)(*xs))
    for k in range(n):
        one = [np.take(x, k, axis=ax) if ax is not None else x for x, ax in zip(batched, axes)]
        np.testing.assert_allclose(got[k], reference(*one), rtol=1e-12)
