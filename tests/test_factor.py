"""nuvec's own factorisation kernels (backend/cpu/factor.h) through their private bindings on
nuvec._core: LU with partial pivoting, triangular solves with many right-hand sides, Cholesky.
References: LAPACK through SciPy (getrf's pivots and info, potrf's info) and float64 NumPy;
backward errors and residuals against LAPACK's own; bits across thread counts and builds."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX

pytestmark = pytest.mark.nuvec_only  # kernels of nuvec's, with no MLX counterpart
sl = pytest.importorskip("scipy.linalg")
lapack = pytest.importorskip("scipy.linalg.lapack")

if not IS_MLX:
    from nuvec import _core

DTYPES = [np.float32, np.float64]
EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}
GETRF = {np.float32: lapack.sgetrf, np.float64: lapack.dgetrf}
POTRF = {np.float32: lapack.spotrf, np.float64: lapack.dpotrf}


def strided(a, pad):
    """`a` copied into the left columns of a wider array (leading dimension n + pad)."""
    wide = np.full((a.shape[0], a.shape[1] + pad), np.nan, a.dtype)
    wide[:, : a.shape[1]] = a
    return wide[:, : a.shape[1]]


def lu(a, pad=0):
    w = strided(a, pad)
    piv = np.zeros(min(a.shape), np.int32)
    info = _core._factor_lu(w, piv)
    return np.array(w), piv, info


def apply_pivots(a, piv):
    p = a.copy()
    for i, j in enumerate(piv):
        p[[i, j]] = p[[j, i]]
    return p


def lu_backward_error(a, f, piv):
    m, n = a.shape
    k = min(m, n)
    lo = np.tril(f[:, :k].astype(np.float64), -1) + np.eye(m, k)
    up = np.triu(f[:k].astype(np.float64))
    scale = np.abs(a).max() or 1.0
    return np.abs(apply_pivots(a.astype(np.float64), piv) - lo @ up).max() / scale


LU_SHAPES = [(0, 0), (1, 1), (2, 2), (3, 3), (17, 17), (64, 64), (65, 65), (257, 257), (1000, 1000)]
LU_SHAPES += [(5, 3), (3, 5), (100, 37), (37, 100), (300, 129), (129, 300), (1, 7), (7, 1)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", LU_SHAPES)
def test_lu_matches_lapack(shape, dt):
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    a = rng.standard_normal(shape).astype(dt)
    f, piv, info = lu(a, pad=3)
    assert info == 0
    if min(shape) == 0:  # (LAPACK refuses a zero leading dimension)
        assert f.shape == shape and piv.shape == (0,)
        return
    ref, ref_piv, ref_info = GETRF[dt](a.copy())
    assert ref_info == 0
    # Gaussian matrices have no near ties among the candidates: the pivots are LAPACK's.
    np.testing.assert_array_equal(piv, ref_piv)
    err, ref_err = lu_backward_error(a, f, piv), lu_backward_error(a, ref, ref_piv)
    assert err <= 4 * ref_err + 4 * max(shape) * EPS[dt], (err, ref_err)
    np.testing.assert_allclose(f, ref, rtol=0, atol=200 * max(shape) * EPS[dt] * np.abs(ref).max())


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_singular(dt):
    rng = np.random.default_rng(7)
    cases = [np.zeros((5, 5)), np.zeros((100, 70)), np.zeros((1, 1))]
    for col in (0, 3, 40, 99):  # a zero column: U[col, col] is exactly zero
        a = rng.standard_normal((100, 100))
        a[:, col] = 0
        cases.append(a)
    a = np.ones((90, 90))  # rank one
    cases.append(a)
    for a in cases:
        a = a.astype(dt)
        f, piv, info = lu(a)
        ref, ref_piv, ref_info = GETRF[dt](a.copy())
        assert info == ref_info and info > 0, (info, ref_info)
        assert np.isfinite(f).all()
        np.testing.assert_array_equal(piv, ref_piv)
        assert lu_backward_error(a, f, piv) <= 100 * max(a.shape) * EPS[dt]


@pytest.mark.parametrize("dt", DTYPES)
def test_lu_repeated_row_is_exactly_singular(dt):
    """Both copies of a row get the same operations (products give each row its own fixed
    sequence), so the second becomes exactly zero: U's last diagonal entry is 0. (OpenBLAS's
    getrf leaves a rounding error there and reports no singularity.)"""
    a = np.random.default_rng(1).integers(-4, 5, (80, 80)).astype(dt)
    a[50] = a[10]
    f, piv, info = lu(a)
    assert info == 80 and f[79, 79] == 0 and np.isfinite(f).all()
    assert lu_backward_error(a, f, piv) <= 100 * 80 * EPS[dt]


def test_lu_subnormal_pivot():
    """A subnormal pivot divides (its reciprocal would overflow), as LAPACK's getrf2 does.
    (OpenBLAS's getrf leaves that column unscaled.)"""
    a = np.array([[1e-310, 1.0], [5e-311, 2.0]])
    f, piv, info = lu(a)
    assert info == 0
    np.testing.assert_array_equal(piv, [0, 1])
    np.testing.assert_allclose(f, [[1e-310, 1.0], [0.5, 1.5]], rtol=1e-12)


def triangle(n, lower, unit, dt, rng):
    t = rng.standard_normal((n, n)) / np.sqrt(max(n, 1)) + 2 * np.eye(n)
    t = np.tril(t) if lower else np.triu(t)
    # What the solve must not read: the other triangle, and a unit diagonal.
    t = t + (np.triu(np.full((n, n), np.nan), 1) if lower else np.tril(np.full((n, n), np.nan), -1))
    if unit:
        np.fill_diagonal(t, np.nan)
    return t.astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize(
    "n,nrhs", [(0, 3), (3, 0), (1, 1), (2, 5), (17, 3), (64, 64), (65, 70), (257, 33), (300, 300)]
)
def test_triangular_solve(n, nrhs, lower, transpose, unit, dt):
    rng = np.random.default_rng(n * 100 + nrhs)
    t = strided(triangle(n, lower, unit, dt, rng), 2)
    b = rng.standard_normal((n, nrhs)).astype(dt)
    x = strided(b, 5)
    _core._factor_triangular_solve(t, x, lower, transpose, unit)
    # The reference: float64, with the unread parts as the solve sees them.
    t64 = np.nan_to_num(np.array(t, np.float64), nan=0.0)
    if unit:
        np.fill_diagonal(t64, 1.0)
    op = t64.T if transpose else t64
    assert np.isfinite(x).all()
    ref = np.linalg.solve(op, b.astype(np.float64)) if n else b
    np.testing.assert_allclose(
        x, ref, rtol=0, atol=50 * max(n, 1) * EPS[dt] * max(np.abs(ref).max(initial=0), 1)
    )
    if n and nrhs:  # a residual as small as LAPACK's
        ours = np.abs(op @ x - b).max()
        theirs = sl.solve_triangular(t64, b, lower=lower, trans=int(transpose), unit_diagonal=unit)
        theirs = np.abs(op @ theirs.astype(dt).astype(np.float64) - b).max()
        assert ours <= 8 * theirs + 8 * n * EPS[dt] * np.abs(op).max() * np.abs(x).max()


def spd(n, dt, rng):
    m = rng.standard_normal((n, n))
    return (m @ m.T / max(n, 1) + np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 64, 65, 257, 600])
def test_cholesky(n, upper, dt):
    rng = np.random.default_rng(n)
    s = spd(n, dt, rng)
    # The other triangle is NaN: never read, never written.
    other = np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1)
    a = s.copy()
    a[other] = np.nan
    w = strided(a, 4)
    info = _core._factor_cholesky(w, upper)
    assert info == 0
    w = np.array(w)
    assert np.isnan(w[other]).all()
    got = np.where(other, 0, w).astype(np.float64)
    ref = np.linalg.cholesky(s.astype(np.float64))
    if upper:
        ref = ref.T
    np.testing.assert_allclose(
        got, ref, rtol=0, atol=20 * max(n, 1) * EPS[dt] * max(np.abs(ref).max(initial=0), 1)
    )
    if n:
        lapack_f, lapack_info = POTRF[dt](s.copy(), lower=not upper, clean=True)
        recon = got.T @ got if upper else got @ got.T
        theirs = lapack_f.T @ lapack_f if upper else lapack_f @ lapack_f.T
        err = np.abs(recon - s).max()
        assert err <= 4 * np.abs(theirs.astype(np.float64) - s).max() + 4 * n * EPS[dt]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n,bad", [(1, 0), (5, 2), (200, 0), (200, 150), (300, 299)])
def test_cholesky_not_positive_definite(n, bad, upper, dt):
    s = spd(n, np.float64, np.random.default_rng(n + bad))
    s[bad, bad] = -10.0
    s = s.astype(dt)
    info = _core._factor_cholesky(s.copy(), upper)
    _, ref_info = POTRF[dt](s.copy(), lower=not upper)
    assert info == ref_info == bad + 1
    # As LAPACK's unblocked potf2 (and MLX): the failing pivot's value is left on the diagonal.
    two = np.array([[1.0, 2.0], [2.0, 1.0]], dt)
    assert _core._factor_cholesky(two, upper) == 2
    np.testing.assert_array_equal(two, [[1.0, 2.0], [2.0, -3.0]])
    nan = s.copy()
    nan[bad, bad] = np.nan
    assert _core._factor_cholesky(nan, upper) == bad + 1


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize(
    "m,n,k", [(1, 1, 1), (7, 5, 3), (300, 70, 129), (64, 300, 257), (2, 40, 0)]
)
def test_multiply_add(m, n, k, dt):
    """cpu::gemm's accumulate form, C += A B, which the factorisations' updates use: each row has
    the bits of its own one-row call, and the float64 value of c + a @ b."""
    rng = np.random.default_rng(m * n + k)
    a, b = (rng.standard_normal(s).astype(dt) for s in ((m, k), (k, n)))
    c = rng.standard_normal((m, n)).astype(dt)
    out = strided(c, 3)
    _core._factor_multiply_add(strided(a, 2), b, out)
    ref = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(
        out, ref, rtol=0, atol=4 * (k + 1) * EPS[dt] * (np.abs(ref).max() + k)
    )
    for i in range(m):
        row = c[i : i + 1].copy()
        _core._factor_multiply_add(a[i : i + 1], b, row)
        np.testing.assert_array_equal(row[0], out[i])


def test_bad_buffers():
    with pytest.raises(ValueError):
        _core._factor_lu(np.zeros((3, 3), np.int32), np.zeros(3, np.int32))
    with pytest.raises(ValueError):
        _core._factor_lu(np.zeros((3, 3), np.float32), np.zeros(2, np.int32))
    with pytest.raises(ValueError):
        _core._factor_cholesky(np.zeros((3, 4)), False)
    with pytest.raises(ValueError):
        _core._factor_triangular_solve(np.eye(3), np.zeros((3, 2), np.float32), True, False, False)
    with pytest.raises(ValueError):
        _core._factor_lu(np.zeros((4, 4))[:, ::2], np.zeros(2, np.int32))


def run_all():
    """Every kernel on shapes that reach the recursion, threaded products and the leaf pieces."""
    rng = np.random.default_rng(3)
    out = []
    for dt in DTYPES:
        for shape in [(300, 300), (257, 400), (500, 190)]:
            f, piv, info = lu(rng.standard_normal(shape).astype(dt), pad=1)
            out += [f.tobytes(), piv.tobytes()]
        for lower, transpose in [(True, False), (False, True), (False, False)]:
            t = triangle(300, lower, False, dt, rng)
            t = np.nan_to_num(t, nan=0.0)
            b = rng.standard_normal((300, 700)).astype(dt)
            _core._factor_triangular_solve(t, b, lower, transpose, False)
            out.append(b.tobytes())
        for upper in (False, True):
            a = spd(400, dt, rng)
            _core._factor_cholesky(a, upper)
            out.append(a.tobytes())
    return hashlib.sha256(b"".join(out)).hexdigest()


_SCRIPT = r"""
import sys
sys.path.insert(0, {tests!r})
from test_factor import run_all
print(run_all())
"""


@pytest.mark.skipif(IS_MLX, reason="nuvec's kernels")
@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_bits_do_not_depend_on_threads(isa):
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, NUVEC_NUM_THREADS=threads, NUVEC_CPU_ISA=isa)
        res = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, res.stderr
        digests.add(res.stdout.strip())
    assert len(digests) == 1
