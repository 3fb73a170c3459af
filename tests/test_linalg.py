"""nuvec.linalg's LU / triangular / Cholesky family against NumPy and SciPy float64 references:
shapes (empty to 300 x 300), batches, broadcasting, both dtypes, reconstructions (P L U = A,
L L^T = A), MLX's output formats, and bad input."""

import numpy as np
import pytest
import scipy.linalg as sl

from _impl import mx


def arr(x):
    """x as an array of its own dtype (float64 stays float64)."""
    x = np.asarray(x)
    return mx.array(x, dtype=mx.float64) if x.dtype == np.float64 else mx.array(x)


RNG = np.random.default_rng(17)
SIZES = (1, 2, 17, 64, 300)
TOL = {"float32": 2e-3, "float64": 1e-9}
la = mx.linalg


def general(*shape, dtype="float64"):
    """Well-conditioned square matrices (a scaled identity added)."""
    a = RNG.standard_normal(shape)
    return (a + shape[-1] ** 0.5 * 2 * np.eye(shape[-1])).astype(dtype)


def spd(*shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def close(got, want, dtype):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[str(dtype)] * scale)


DT = pytest.mark.parametrize("dtype", ["float32", "float64"])


@DT
@pytest.mark.parametrize("n", SIZES)
def test_inv_solve(n, dtype):
    a = general(n, n, dtype=dtype)
    b = RNG.standard_normal((n, 3)).astype(dtype)
    ref = np.linalg.inv(a.astype(np.float64))
    x = la.inv(arr(a))
    assert x.dtype == getattr(mx, dtype)
    close(x, ref, dtype)
    close(la.solve(arr(a), arr(b)), ref @ b, dtype)
    close(la.solve(arr(a), arr(b[:, 0])), ref @ b[:, 0], dtype)


@DT
@pytest.mark.parametrize("n", SIZES)
def test_lu_reconstructs(n, dtype):
    a = RNG.standard_normal((n, n)).astype(dtype)
    p, lo, up = (np.asarray(x) for x in la.lu(arr(a)))
    assert p.dtype == np.uint32 and sorted(p.tolist()) == list(range(n))
    assert (
        np.array_equal(lo, np.tril(lo))
        and np.all(np.diag(lo) == 1)
        and np.array_equal(up, np.triu(up))
    )
    close((lo.astype(np.float64) @ up)[p], a.astype(np.float64), dtype)
    lu, piv = (np.asarray(x) for x in la.lu_factor(arr(a)))
    # LAPACK's pivots (scipy's lu_factor: the same partial pivoting) and the packed factors.
    want_lu, want_piv = sl.lu_factor(a.astype(np.float64))
    assert piv.dtype == np.uint32
    if n <= 64:  # ties in pivoting are rare at float32 rounding; sizes kept small
        assert piv.tolist() == want_piv.tolist()
        close(lu, want_lu, dtype)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 1), (1, 6)])
def test_lu_rectangular(shape):
    a = RNG.standard_normal(shape)
    p, lo, up = (np.asarray(x) for x in la.lu(arr(a)))
    k = min(shape[-2:])
    assert lo.shape == shape[:-1] + (k,) and up.shape == shape[:-2] + (k, shape[-1])
    assert p.shape == shape[:-1]
    rec = np.take_along_axis(lo @ up, p[..., None].astype(np.int64), axis=-2)
    close(rec, a, "float64")
    _, piv = la.lu_factor(arr(a))
    assert piv.shape == shape[:-2] + (k,)


@DT
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(n, dtype, upper):
    s = spd(n, n, dtype=dtype)
    f = np.asarray(la.cholesky(arr(s), upper=upper), np.float64)
    want = np.linalg.cholesky(s.astype(np.float64))
    close(f, want.T if upper else want, dtype)
    close(f.T @ f if upper else f @ f.T, s.astype(np.float64), dtype)
    # Only one triangle is read.
    junk = s + np.triu(np.full_like(s, 7), 1) if not upper else s + np.tril(np.full_like(s, 7), -1)
    assert np.array_equal(np.asarray(la.cholesky(arr(junk), upper=upper)), np.asarray(f, dtype))
    close(
        la.cholesky_inv(arr(f.astype(dtype)), upper=upper),
        np.linalg.inv(s.astype(np.float64)),
        dtype,
    )


@DT
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("upper", [False, True])
def test_triangular(n, dtype, upper):
    a = general(n, n, dtype=dtype)
    t = np.triu(a) if upper else np.tril(a)
    b = RNG.standard_normal((n, 4)).astype(dtype)
    want = sl.solve_triangular(t.astype(np.float64), b.astype(np.float64), lower=not upper)
    close(la.solve_triangular(arr(a), arr(b), upper=upper), want, dtype)
    close(la.solve_triangular(arr(a), arr(b[:, 1]), upper=upper), want[:, 1], dtype)
    ti = np.asarray(la.tri_inv(arr(a), upper=upper))
    close(ti, np.linalg.inv(t.astype(np.float64)), dtype)
    assert np.array_equal(ti, np.triu(ti) if upper else np.tril(ti))


@DT
@pytest.mark.parametrize("n", (1, 2, 5, 17, 64))
def test_det_slogdet(n, dtype):
    a = (RNG.standard_normal((3, n, n)) * 1.5 / n**0.5).astype(dtype)
    want = np.linalg.det(a.astype(np.float64))
    d = la.det(arr(a))
    assert d.dtype == getattr(mx, dtype) and d.shape == (3,)
    np.testing.assert_allclose(np.asarray(d, np.float64), want, rtol=TOL[dtype] * n)
    sign, logabs = la.slogdet(arr(a))
    ws, wl = np.linalg.slogdet(a.astype(np.float64))
    assert np.array_equal(np.asarray(sign), ws.astype(dtype))
    np.testing.assert_allclose(np.asarray(logabs, np.float64), wl, atol=TOL[dtype] * n)


def test_det_singular_and_dtypes():
    z = mx.zeros((3, 3))
    assert la.det(z).item() == 0
    sign, logabs = la.slogdet(z)
    assert sign.item() == 0 and logabs.item() == -np.inf
    assert la.det(mx.eye(3, dtype=mx.int32)).dtype == mx.float32
    assert la.det(mx.eye(3, dtype=mx.float16)).dtype == mx.float16
    assert la.det(mx.zeros((2, 0, 0))).tolist() == [1.0, 1.0]


def test_batches_and_broadcasting():
    a = general(2, 3, 6, 6)
    b = RNG.standard_normal((3, 6, 2))
    want = np.linalg.solve(a, np.broadcast_to(b, (2, 3, 6, 2)))
    close(la.solve(arr(a), arr(b)), want, "float64")
    # A batch of a against one b, a vector b against batched a (NumPy 2's vector rule).
    close(la.solve(arr(a[0, 0]), arr(b)), np.linalg.solve(a[0, 0], b), "float64")
    close(la.solve(arr(a), arr(b[0, :, 0])), np.linalg.solve(a, b[0, :, :1])[..., 0], "float64")
    close(la.inv(arr(a)), np.linalg.inv(a), "float64")
    # Strided and broadcast operands.
    at = np.swapaxes(a, -1, -2)
    close(la.inv(mx.swapaxes(arr(a), -1, -2)), np.linalg.inv(at), "float64")
    close(
        la.inv(mx.broadcast_to(arr(a[0, 0]), (4, 6, 6))),
        np.broadcast_to(np.linalg.inv(a[0, 0]), (4, 6, 6)),
        "float64",
    )


def test_many_small():
    a = general(1000, 4, 4, dtype="float32")
    close(la.inv(arr(a)), np.linalg.inv(a.astype(np.float64)), "float32")
    s = spd(500, 3, 3)
    close(la.cholesky(arr(s)), np.linalg.cholesky(s), "float64")


def test_mixed_dtypes_promote():
    a = general(4, 4, dtype="float32")
    b = RNG.standard_normal(4)
    x = la.solve(arr(a), arr(b))
    assert x.dtype == mx.float64
    close(x, np.linalg.solve(a.astype(np.float64), b), "float32")
    assert la.solve_triangular(arr(a), arr(b)).dtype == mx.float64


def test_empty():
    for f in (la.inv, la.cholesky, la.tri_inv):
        assert f(mx.zeros((0, 0))).shape == (0, 0)
        assert f(mx.zeros((0, 3, 3))).shape == (0, 3, 3)
    assert la.solve(mx.zeros((0, 0)), mx.zeros((0,))).shape == (0,)
    assert la.solve(mx.zeros((2, 2)) + mx.eye(2), mx.zeros((2, 0))).shape == (2, 0)
    assert [x.shape for x in la.lu(mx.zeros((0, 0)))] == [(0,), (0, 0), (0, 0)]


def test_singular_raises_at_evaluation():
    # As MLX: the call records a node, evaluation raises (MLX: RuntimeError).
    for f in (
        lambda: la.inv(mx.zeros((3, 3))),
        lambda: la.solve(mx.zeros((3, 3)), mx.ones(3)),
        lambda: la.tri_inv(mx.zeros((3, 3))),
        lambda: la.solve_triangular(mx.zeros((3, 3)), mx.ones(3)),
    ):
        x = f()
        with pytest.raises(RuntimeError):
            mx.eval(x)


def test_cholesky_not_positive_definite_does_not_raise():
    # As MLX: no error; LAPACK stops at the failing column ([[1, 2], [2, 1]]: 1 - 2*2 = -3 left there).
    got = np.asarray(la.cholesky(arr([[1.0, 2.0], [2.0, 1.0]])))
    assert got.tolist() == [[1.0, 0.0], [2.0, -3.0]]


BAD = [
    (lambda: la.inv(mx.zeros((2, 3))), "square"),
    (lambda: la.inv(mx.zeros((3,))), ">= 2 dimensions"),
    (lambda: la.inv(mx.zeros((3, 3), dtype=mx.int32)), "float32 or float64"),
    (lambda: la.inv(mx.zeros((3, 3), dtype=mx.float16)), "float32 or float64"),
    (lambda: la.inv(mx.zeros((3, 3), dtype=mx.complex64)), "float32 or float64"),
    (lambda: la.cholesky(mx.zeros((2, 3))), "square"),
    (lambda: la.cholesky(mx.zeros((3, 3), dtype=mx.int32)), "float32 or float64"),
    (lambda: la.cholesky_inv(mx.zeros((3, 3), dtype=mx.int32)), "float32 or float64"),
    (lambda: la.tri_inv(mx.zeros((3,))), ">= 2 dimensions"),
    (lambda: la.lu_factor(mx.zeros((3,))), ">= 2 dimensions"),
    (lambda: la.lu(mx.zeros((3, 3), dtype=mx.int32)), "float32 or float64"),
    (lambda: la.solve(mx.zeros((3, 3)), mx.zeros((4,))), "must match"),
    (lambda: la.solve(mx.zeros((3, 4)), mx.zeros((4,))), "square"),
    (lambda: la.solve(mx.zeros((3,)), mx.zeros((3,))), ">= 2 dimensions"),
    (lambda: la.solve(mx.zeros((3, 3)), arr(1.0)), ">= 1 dimensions"),
    (lambda: la.solve(mx.eye(3, dtype=mx.int32), mx.ones((3,), mx.int32)), "promote"),
    (lambda: la.solve(mx.zeros((2, 3, 3)), mx.zeros((2, 3))), "must match"),
    (lambda: la.solve_triangular(mx.ones((3, 4)), mx.ones((4,))), "square"),
    (lambda: la.solve_triangular(mx.eye(3, dtype=mx.int32), mx.ones((3,))), "float32 or float64"),
    (lambda: la.det(mx.ones((2, 3))), "square"),
    (lambda: la.det(mx.ones((3,))), ">= 2 dimensions"),
    (lambda: la.det(mx.eye(3, dtype=mx.complex64)), "Complex"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_input(case):
    f, msg = BAD[case]
    with pytest.raises(ValueError, match=msg):
        f()


@pytest.mark.parametrize("n", (17, 150))
def test_transposed_solve(n):
    # solve's vjp solves with a^T: both kernels (blocked below 128, LAPACK above) in both senses.
    a, ct = general(n, n), RNG.standard_normal((n, 2))
    b = RNG.standard_normal((n, 2))
    _, (g,) = mx.vjp(lambda x: la.solve(arr(a), x), [arr(b)], [arr(ct)])
    close(g, np.linalg.solve(a.T, ct), "float64")


@DT
def test_large_matrices_on_the_pool(dtype):
    # From order 512 one matrix's LU, inverse and solves are cut into column blocks on the pool.
    n = 600
    a = general(n, n, dtype=dtype)
    b = RNG.standard_normal((n, 300)).astype(dtype)
    a64 = a.astype(np.float64)
    close(la.solve(arr(a), arr(b)), np.linalg.solve(a64, b), dtype)
    close(la.solve(arr(a), arr(b[:, 0])), np.linalg.solve(a64, b[:, 0]), dtype)
    close(la.inv(arr(a)), np.linalg.inv(a64), dtype)
    want = sl.solve_triangular(np.triu(a64), b, lower=False)
    close(la.solve_triangular(arr(a), arr(b), upper=True), want, dtype)
    p, lo, up = (np.asarray(x, np.float64) for x in la.lu(arr(a)))
    close((lo @ up)[p.astype(np.int64)], a64, dtype)
    _, piv = la.lu_factor(arr(a))
    assert np.asarray(piv).tolist() == (sl.lu_factor(a64)[1]).tolist()
    _, (g,) = mx.vjp(lambda x: la.solve(arr(a), x), [arr(b)], [arr(b)])
    close(g, np.linalg.solve(a64.T, b), dtype)
    # A singular large matrix still raises.
    z = a.copy()
    z[:, 5] = 0
    with pytest.raises(RuntimeError):
        mx.eval(la.inv(arr(z)))


@pytest.mark.parametrize("upper", [False, True])
def test_large_cholesky_on_the_pool(upper):
    s = spd(600, 600)
    f = np.asarray(la.cholesky(arr(s), upper=upper))
    want = np.linalg.cholesky(s)
    close(f, want.T if upper else want, "float64")


@pytest.mark.parametrize("k", (1, 3, 0))
def test_one_matrix_many_right_hand_sides(k):
    # One a against a batch of b: the batch is solved as columns of one right-hand side.
    a, b = general(5, 5), RNG.standard_normal((4, 2, 5, k))
    close(la.solve(arr(a), arr(b)), np.linalg.solve(a, b), "float64")
    want = sl.solve_triangular(np.tril(a), b.transpose(2, 0, 1, 3).reshape(5, -1), lower=True)
    got = la.solve_triangular(arr(a), arr(b))
    close(np.moveaxis(np.asarray(got), 2, 0).reshape(5, -1), want, "float64")
