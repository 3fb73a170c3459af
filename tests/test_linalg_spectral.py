"""nuvec.linalg's decompositions (qr, svd, eigh, eigvalsh, eig, eigvals, pinv): NumPy float64
references by reconstruction and invariants, MLX's shapes, dtypes, orders and errors."""

import numpy as np
import pytest

import nuvec as mx

LA = mx.linalg
RNG = np.random.default_rng(17)
SHAPES = [(4, 3), (3, 5), (3, 3), (2, 4, 4), (2, 3, 1, 1), (5, 2, 6), (1, 7, 7)]
DTYPES = {
    "float32": (mx.float32, 2e-5),
    "float64": (mx.float64, 1e-11),
    "complex64": (mx.complex64, 3e-5),
}


def rand(shape, dt):
    a = RNG.standard_normal(shape)
    if dt == mx.complex64:
        a = a + 1j * RNG.standard_normal(shape)
    return a


def arr(a, dt):
    return mx.array(np.asarray(a), dtype=dt)


def npy(x):
    return np.array(x)


def tol_scale(a):
    return max(1.0, float(np.abs(a).max(initial=0)))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dname", ["float32", "float64"])
def test_qr_reconstructs(shape, dname):
    dt, tol = DTYPES[dname]
    a = rand(shape, dt)
    q, r = LA.qr(arr(a, dt))
    assert q.dtype == dt and r.dtype == dt
    k = min(shape[-2:])
    assert q.shape == shape[:-1] + (k,) and r.shape == shape[:-2] + (k, shape[-1])
    q, r = npy(q), npy(r)
    a = npy(arr(a, dt))
    np.testing.assert_allclose(q @ r, a, atol=tol * tol_scale(a) * 10)
    np.testing.assert_allclose(
        np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), atol=tol
    )
    assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dname", list(DTYPES))
def test_svd_reconstructs(shape, dname):
    dt, tol = DTYPES[dname]
    a = npy(arr(rand(shape, dt), dt))
    u, s, vt = LA.svd(arr(a, dt))
    real = mx.float32 if dt == mx.complex64 else dt
    assert (u.dtype, s.dtype, vt.dtype) == (dt, real, dt)
    m, n = shape[-2:]
    k = min(m, n)
    assert (
        u.shape == shape[:-2] + (m, m)
        and s.shape == shape[:-2] + (k,)
        and vt.shape == shape[:-2] + (n, n)
    )
    u, s, vt = npy(u), npy(s), npy(vt)
    sm = np.zeros(shape, dtype=s.dtype)
    sm[..., range(k), range(k)] = s
    np.testing.assert_allclose(u @ sm @ vt, a, atol=tol * 10 * tol_scale(a))
    for x in (u, vt):
        eye = np.broadcast_to(np.eye(x.shape[-1]), x.shape)
        np.testing.assert_allclose(np.conj(np.swapaxes(x, -1, -2)) @ x, eye, atol=tol * 10)
    ref = np.linalg.svd(
        a.astype(np.complex128 if dt == mx.complex64 else np.float64), compute_uv=False
    )
    np.testing.assert_allclose(s, ref, atol=tol * 10 * tol_scale(a))
    assert np.all(np.diff(s, axis=-1) <= 0)
    np.testing.assert_allclose(
        npy(LA.svd(arr(a, dt), compute_uv=False)), s, atol=tol * 10 * tol_scale(a)
    )


def hermitian(shape, dt):
    a = rand(shape, dt)
    return a + np.conj(np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (6, 6), (3, 2, 5, 5)])
@pytest.mark.parametrize("dname", list(DTYPES))
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_invariants(shape, dname, uplo):
    dt, tol = DTYPES[dname]
    a = npy(arr(hermitian(shape, dt), dt))
    # Garbage in the triangle not read: the result must not see it.
    junk = np.triu(np.full(shape, 7.0), 1) if uplo == "L" else np.tril(np.full(shape, 7.0), -1)
    w, v = LA.eigh(arr(a + junk, dt), UPLO=uplo)
    real = mx.float32 if dt == mx.complex64 else dt
    assert (w.dtype, v.dtype) == (real, dt) and w.shape == shape[:-1] and v.shape == shape
    w, v = npy(w), npy(v)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10 * tol_scale(a))
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol * 10)
    np.testing.assert_allclose(
        w,
        np.linalg.eigvalsh(a.astype(np.complex128 if dt == mx.complex64 else np.float64)),
        atol=tol * 10 * tol_scale(a),
    )
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose(
        npy(LA.eigvalsh(arr(a + junk, dt), UPLO=uplo)), w, atol=tol * 10 * tol_scale(a)
    )


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (6, 6)])
@pytest.mark.parametrize("dname", list(DTYPES))
def test_eig_invariants(shape, dname):
    dt, tol = DTYPES[dname]
    a = npy(arr(rand(shape, dt), dt))
    w, v = LA.eig(arr(a, dt))
    assert (
        (w.dtype, v.dtype) == (mx.complex64, mx.complex64)
        and w.shape == shape[:-1]
        and v.shape == shape
    )
    w, v = npy(w), npy(v)
    tol = max(tol, 3e-5)  # complex64 outputs
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * 10 * tol_scale(a))
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol * 10)
    ref = np.linalg.eigvals(a.astype(np.complex128))
    # The same multiset: every value has a reference within tolerance, and back.
    dist = np.abs(w[..., :, None] - ref[..., None, :])
    assert dist.min(-1).max(initial=0) < tol * 10 * tol_scale(a)
    assert dist.min(-2).max(initial=0) < tol * 10 * tol_scale(a)
    np.testing.assert_allclose(npy(LA.eigvals(arr(a, dt))), w, atol=tol * 10 * tol_scale(a))


def test_eig_complex_pair_vectors_are_conjugates():
    a = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    w, v = (npy(x) for x in LA.eig(arr(a, mx.float64)))
    pair = np.flatnonzero(w.imag > 0)[0]
    np.testing.assert_array_equal(v[:, pair + 1], np.conj(v[:, pair]))
    np.testing.assert_allclose(a @ v, v * w, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (4, 4), (2, 3, 2), (0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("dname", ["float32", "float64"])
def test_pinv_matches_numpy(shape, dname):
    dt, tol = DTYPES[dname]
    a = npy(arr(rand(shape, dt), dt))
    p = LA.pinv(arr(a, dt))
    assert p.dtype == dt and p.shape == shape[:-2] + (shape[-1], shape[-2])
    ref = np.linalg.pinv(a.astype(np.float64)) if a.size else np.zeros(p.shape)
    np.testing.assert_allclose(npy(p), ref, atol=tol * 1e3)


def test_pinv_rank_deficient():
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
    np.testing.assert_allclose(
        npy(LA.pinv(arr(a, mx.float64))), np.linalg.pinv(a, rcond=30 * 2.0**-52), atol=1e-12
    )


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3), (3, 0), (1, 1)])
def test_empty_and_one_by_one_shapes(shape):
    a = arr(np.ones(shape), mx.float32)
    m, n = shape[-2:]
    k, b = min(m, n), shape[:-2]
    assert [x.shape for x in LA.qr(a)] == [b + (m, k), b + (k, n)]
    u, s, vt = LA.svd(a)
    assert (u.shape, s.shape, vt.shape) == (b + (m, m), b + (k,), b + (n, n))
    np.testing.assert_array_equal(npy(u), np.broadcast_to(np.eye(m), u.shape) if k == 0 else npy(u))
    if m == n:
        w, v = LA.eigh(a)
        assert (w.shape, v.shape) == (b + (n,), shape)
        w, v = LA.eig(a)
        assert (w.shape, v.shape, w.dtype) == (b + (n,), shape, mx.complex64)


@pytest.mark.parametrize(
    "call",
    [
        lambda a: LA.qr(a),
        lambda a: LA.svd(a),
        lambda a: LA.svd(a, compute_uv=False),
        lambda a: LA.eigh(a),
        lambda a: LA.eigvalsh(a),
        lambda a: LA.eig(a),
        lambda a: LA.eigvals(a),
        lambda a: LA.pinv(a),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(mx.ones((3,)))  # one axis
    for dt in (mx.int32, mx.float16, mx.bfloat16, mx.bool_):
        with pytest.raises(ValueError):
            call(mx.ones((3, 3), dtype=dt))


@pytest.mark.parametrize("f", [LA.eigh, LA.eigvalsh, LA.eig, LA.eigvals])
def test_eigen_need_square(f):
    with pytest.raises(ValueError):
        f(mx.ones((3, 4)))


@pytest.mark.parametrize("f", [LA.qr, LA.pinv])
def test_complex_rejected_where_mlx_rejects(f):
    with pytest.raises(ValueError):
        f(mx.ones((3, 3), dtype=mx.complex64))


def test_svd_nan_fails_at_evaluation():
    with pytest.raises(RuntimeError):
        mx.eval(LA.svd(mx.array([[np.nan, 1.0], [1.0, 1.0]])))


def test_strided_and_transposed_inputs():
    a = RNG.standard_normal((5, 6))
    x = arr(a, mx.float64)
    u, s, vt = (npy(t) for t in LA.svd(x.T))
    np.testing.assert_allclose(s, np.linalg.svd(a.T, compute_uv=False), atol=1e-12)
    q, r = (npy(t) for t in LA.qr(x[::2, 1:]))
    np.testing.assert_allclose(q @ r, a[::2, 1:], atol=1e-12)


@pytest.mark.parametrize(
    "name,make",
    [
        ("qr", lambda a: LA.qr(a)),
        ("svd", lambda a: LA.svd(a)),
        ("svd_values", lambda a: LA.svd(a, compute_uv=False)),
        ("eigh", lambda a: LA.eigh(a)),
        ("eigvalsh", lambda a: LA.eigvalsh(a, UPLO="U")),
        ("eig", lambda a: LA.eig(a)),
        ("eigvals", lambda a: LA.eigvals(a)),
        ("pinv", lambda a: LA.pinv(a)),
    ],
)
def test_vmap_is_the_batched_call(name, make):
    a = arr(hermitian((3, 4, 4), mx.float32), mx.float32)
    for axis in (0, 1, 2):
        xs = mx.moveaxis(a, 0, axis)
        got = mx.vmap(make, in_axes=axis)(xs)
        want = make(a)
        got, want = (
            (got if isinstance(got, tuple) else (got,)),
            (want if isinstance(want, tuple) else (want,)),
        )
        for g, w in zip(got, want):
            np.testing.assert_array_equal(npy(g), npy(w))


def test_compile_gives_the_same_bits():
    a = arr(hermitian((2, 5, 5), mx.float32), mx.float32)

    def f(x):
        w, v = LA.eigh(x)
        u, s, vt = LA.svd(x)
        return w, v, s, LA.pinv(x), LA.norm(x, 2, axis=(1, 2))

    for g, w in zip(mx.compile(f)(a), f(a)):
        np.testing.assert_array_equal(npy(g), npy(w))


@pytest.mark.parametrize(
    "f", [lambda x: LA.eigvals(x).real.sum(), lambda x: LA.eig(x)[0].real.sum()]
)
def test_no_gradient_of_eig_as_mlx(f):
    # MLX 0.32 has no vjp or jvp for Eig: it raises ValueError; so does nuvec.
    a = mx.eye(3)
    with pytest.raises(ValueError):
        mx.grad(f)(a)
    with pytest.raises(ValueError):
        mx.jvp(f, [a], [a])


def test_many_small_matrices_match_one_by_one():
    a = arr(RNG.standard_normal((300, 3, 3)), mx.float32)
    u, s, vt = LA.svd(a)
    for i in (0, 17, 299):
        ui, si, vti = LA.svd(a[i])
        for x, y in ((u[i], ui), (s[i], si), (vt[i], vti)):
            np.testing.assert_array_equal(npy(x), npy(y))
