"""nuvec.linalg.norm and cross against NumPy (every order, axis form and keepdims), and the
spectral family against MLX where it is installed (bits where both compose the same ops)."""

import math

import numpy as np
import pytest

import nuvec as mx

LA = mx.linalg
RNG = np.random.default_rng(23)
A3 = RNG.standard_normal((3, 4, 5))
VEC_ORDS = [None, 0, 1, -1, 2, -2, 3, 0.5, -3.5, math.inf, -math.inf]
MAT_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


@pytest.mark.parametrize("ord", VEC_ORDS)
@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_match_numpy(ord, axis, keepdims):
    got = LA.norm(mx.array(A3, dtype=mx.float64), ord, axis, keepdims)
    want = np.linalg.norm(A3, ord, axis, keepdims)
    assert got.dtype == mx.float64 and got.shape == want.shape
    np.testing.assert_allclose(np.array(got), want, rtol=1e-12)


@pytest.mark.parametrize("ord", MAT_ORDS)
@pytest.mark.parametrize("axis", [(0, 1), (1, 0), (-1, -2), (2, 0), (-2, -1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms_match_numpy(ord, axis, keepdims):
    got = LA.norm(mx.array(A3, dtype=mx.float64), ord, axis, keepdims)
    want = np.linalg.norm(A3, ord, axis, keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.array(got), want, rtol=1e-12)


@pytest.mark.parametrize("ord", MAT_ORDS)
def test_norm_of_a_matrix_without_axis(ord):
    a = A3[0]
    np.testing.assert_allclose(
        np.array(LA.norm(mx.array(a, dtype=mx.float64), ord)), np.linalg.norm(a, ord), rtol=1e-12
    )


def test_norm_defaults():
    a = mx.array(A3, dtype=mx.float64)
    assert LA.norm(a, keepdims=True).shape == (1, 1, 1)  # ord None, no axis: all axes
    np.testing.assert_allclose(np.array(LA.norm(a)), np.linalg.norm(A3.ravel()), rtol=1e-12)
    assert LA.norm(mx.array([1, 0, 3])).dtype == mx.float32
    assert LA.norm(mx.array([1, 0, 3]), 0).item() == 2.0
    assert LA.norm(mx.array([1.0, 2.0], dtype=mx.float16), 3).dtype == mx.float16
    assert mx.matrix_norm is LA.norm


@pytest.mark.parametrize(
    "args",
    [
        dict(ord=1),  # three axes
        dict(ord="fro"),
        dict(ord="fro", axis=1),
        dict(ord=0, axis=(1, 2)),
        dict(ord=3, axis=(1, 2)),
        dict(ord="foo", axis=(1, 2)),
        dict(axis=(0, 1, 2)),
    ],
)
def test_norm_bad_orders_raise_value_error(args):
    with pytest.raises(ValueError):
        LA.norm(mx.array(A3), **args)


def test_singular_value_norms_need_a_float_matrix():
    with pytest.raises(ValueError):
        LA.norm(mx.ones((3, 3), dtype=mx.int32), 2)


@pytest.mark.parametrize("na,nb", [(3, 3), (2, 3), (3, 2), (2, 2)])
@pytest.mark.parametrize("axis", [-1, 0])
def test_cross_matches_numpy(na, nb, axis):
    a = RNG.standard_normal((na, 4) if axis == 0 else (4, na))
    b = RNG.standard_normal((nb, 1) if axis == 0 else (1, nb))
    got = np.array(LA.cross(mx.array(a, dtype=mx.float64), mx.array(b, dtype=mx.float64), axis))
    aa, bb = (
        np.concatenate([x, np.zeros_like(x.take([0], axis))], axis) if x.shape[axis] == 2 else x
        for x in (a, b)
    )
    np.testing.assert_allclose(got, np.cross(aa, bb, axis=axis), rtol=1e-12, atol=1e-15)


def test_cross_dtypes_and_errors():
    assert LA.cross(mx.array([1, 2, 3]), mx.array([3, 4, 5])).dtype == mx.int32
    np.testing.assert_array_equal(
        np.array(LA.cross(mx.array([1, 2, 3]), mx.array([3, 4, 5]))), [-2, 4, -2]
    )
    with pytest.raises(ValueError):
        LA.cross(mx.ones((4,)), mx.ones((4,)))
    with pytest.raises(IndexError):
        LA.cross(mx.ones((3, 2)), mx.ones((3, 2)), axis=3)


# MLX differential tests: MLX 0.32.4 links reference LAPACK 3.10, nuvec OpenBLAS's LAPACK (the
# same algorithms, other BLAS kernels): decompositions agree to rounding, the composed ops in bits.


def mlx_pair(a, dtype):
    mlx = pytest.importorskip("mlx.core")
    return mlx, mlx.array(a, dtype=getattr(mlx, dtype)), mx.array(a, dtype=getattr(mx, dtype))


@pytest.mark.parametrize("ord", VEC_ORDS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_as_mlx(ord, keepdims):
    # Bits where the ops are exact or sum along the last axis; pow's bits are nuvec's own.
    mlx, m, n = mlx_pair(A3.astype(np.float32), "float32")
    want = np.array(mlx.linalg.norm(m, ord, -1, keepdims))
    got = np.array(LA.norm(n, ord, -1, keepdims))
    if ord in (None, 0, 1, 2, math.inf, -math.inf):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("axis", [(0, 1), (2, 0), (-1, -2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_composed_matrix_norms_as_mlx(ord, axis, keepdims):
    # Sums over inner or several axes add in nuvec's order: MLX's values to rounding.
    mlx, m, n = mlx_pair(A3.astype(np.float32), "float32")
    want = np.array(mlx.linalg.norm(m, ord, axis, keepdims, stream=mlx.cpu))
    got = LA.norm(n, ord, axis, keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.array(got), want, rtol=1e-6)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("axis", [(0, 1), (2, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_singular_value_norms_as_mlx(ord, axis, keepdims):
    mlx, m, n = mlx_pair(A3.astype(np.float32), "float32")
    want = np.array(mlx.linalg.norm(m, ord, axis, keepdims, stream=mlx.cpu))
    got = LA.norm(n, ord, axis, keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.array(got), want, rtol=2e-6)


def test_cross_is_mlx_bits():
    a, b = (
        RNG.standard_normal((5, 3)).astype(np.float32),
        RNG.standard_normal((1, 3)).astype(np.float32),
    )
    mlx = pytest.importorskip("mlx.core")
    for x, y in ((a, b), (a[:, :2], b), (a, b[:, :2]), (a[:, :2], b[:, :2])):
        want = np.array(mlx.linalg.cross(mlx.array(x), mlx.array(y)))
        np.testing.assert_array_equal(np.array(LA.cross(mx.array(x), mx.array(y))), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_decompositions_agree_with_mlx(dtype):
    a = RNG.standard_normal((2, 5, 4))
    mlx, m, n = mlx_pair(a, dtype)
    sym = a[:, :4, :4] + np.swapaxes(a[:, :4, :4], -1, -2)
    ms, ns = mlx.array(sym, dtype=getattr(mlx, dtype)), mx.array(sym, dtype=getattr(mx, dtype))
    tol = 2e-5 if dtype == "float32" else 1e-12
    cpu = mlx.cpu
    pairs = [
        (mlx.linalg.qr(m, stream=cpu), LA.qr(n)),  # Householder signs agree: same vectors
        (mlx.linalg.svd(m, compute_uv=False, stream=cpu), LA.svd(n, compute_uv=False)),
        (mlx.linalg.svd(m, stream=cpu), LA.svd(n)),  # and the same singular vectors (signs too)
        (mlx.linalg.eigh(ms, stream=cpu), LA.eigh(ns)),
        (mlx.linalg.eig(m[:, :3, :3], stream=cpu), LA.eig(n[:, :3, :3])),
        (mlx.linalg.eigvalsh(ms, stream=cpu), LA.eigvalsh(ns)),
        (mlx.linalg.eigvalsh(ms, UPLO="U", stream=cpu), LA.eigvalsh(ns, UPLO="U")),
        (mlx.linalg.eigvals(m[:, :3, :3], stream=cpu), LA.eigvals(n[:, :3, :3])),  # LAPACK's order
        (mlx.linalg.pinv(m, stream=cpu), LA.pinv(n)),
    ]
    for want, got in pairs:
        want, got = (
            (want if isinstance(want, tuple) else (want,)),
            (got if isinstance(got, tuple) else (got,)),
        )
        for w, g in zip(want, got):
            assert (
                g.shape == tuple(w.shape)
                and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
            )
            np.testing.assert_allclose(np.array(g), np.array(w), atol=tol * 10)


def test_shapes_and_dtypes_as_mlx():
    mlx = pytest.importorskip("mlx.core")
    for shape in [(0, 0), (3, 0), (0, 3), (1, 1), (2, 3, 4)]:
        a = np.ones(shape, np.float32)
        for name in ("qr", "svd", "pinv"):
            want = getattr(mlx.linalg, name)(mlx.array(a), stream=mlx.cpu)
            got = getattr(LA, name)(mx.array(a))
            want, got = (
                (want if isinstance(want, tuple) else (want,)),
                (got if isinstance(got, tuple) else (got,)),
            )
            assert [tuple(w.shape) for w in want] == [g.shape for g in got]


# Derivatives (norm and cross are composed of differentiable ops; the singular-value orders go
# through the SVD, which MLX does not differentiate) and vmap.


def finite_difference(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize(
    "ord,axis",
    [
        (None, None),
        (1, -1),
        (2, -1),
        (3, 0),
        (math.inf, -1),
        ("fro", (0, 1)),
        (1, (0, 1)),
        (-math.inf, (1, 0)),
    ],
)
def test_norm_gradient_matches_finite_differences(ord, axis):
    x = RNG.standard_normal((3, 4))

    def f(v):
        return float(np.sum(np.array(LA.norm(mx.array(v, dtype=mx.float64), ord, axis))))

    g = mx.grad(lambda v: mx.sum(LA.norm(v, ord, axis)))(mx.array(x, dtype=mx.float64))
    np.testing.assert_allclose(np.array(g), finite_difference(f, x), atol=1e-6)


def test_cross_gradient_matches_finite_differences():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    w = RNG.standard_normal((2, 3))

    def f(v):
        return float(
            np.sum(
                np.array(LA.cross(mx.array(v, dtype=mx.float64), mx.array(b, dtype=mx.float64))) * w
            )
        )

    g = mx.grad(lambda v: mx.sum(LA.cross(v, mx.array(b, dtype=mx.float64)) * mx.array(w)))(
        mx.array(a, dtype=mx.float64)
    )
    np.testing.assert_allclose(np.array(g), finite_difference(f, a), atol=1e-7)


@pytest.mark.parametrize(
    "ord,axis", [(None, None), (1, -1), (3, 0), (math.inf, (0, 1)), ("fro", (0, 1))]
)
def test_norm_and_cross_gradients_as_mlx(ord, axis):
    mlx = pytest.importorskip("mlx.core")
    x = RNG.standard_normal((3, 3)).astype(np.float32)
    want = mlx.grad(lambda v: mlx.sum(mlx.linalg.norm(v, ord, axis)))(mlx.array(x))
    got = mx.grad(lambda v: mx.sum(LA.norm(v, ord, axis)))(mx.array(x))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)
    want = mlx.grad(lambda v: mlx.sum(mlx.linalg.cross(v, mlx.array(x[::-1].copy()))))(mlx.array(x))
    got = mx.grad(lambda v: mx.sum(LA.cross(v, mx.array(x[::-1].copy()))))(mx.array(x))
    np.testing.assert_array_equal(np.array(got), np.array(want))


@pytest.mark.parametrize(
    "ord,axis", [(None, None), (1, -1), (2, (0, 1)), ("nuc", (0, 1)), (-math.inf, (0, 1))]
)
def test_norm_vmap_is_the_loop(ord, axis):
    x = mx.array(A3.astype(np.float32))
    got = mx.vmap(lambda v: LA.norm(v, ord, axis), in_axes=1)(x)
    for i in range(x.shape[1]):
        np.testing.assert_array_equal(np.array(got[i]), np.array(LA.norm(x[:, i], ord, axis)))


def test_cross_vmap_is_the_loop():
    a, b = (
        mx.array(RNG.standard_normal((4, 3)).astype(np.float32)),
        mx.array(RNG.standard_normal((3,)).astype(np.float32)),
    )
    got = mx.vmap(LA.cross, in_axes=(0, None))(a, b)
    for i in range(4):
        np.testing.assert_array_equal(np.array(got[i]), np.array(LA.cross(a[i], b)))


def test_complex_eig_vectors_are_mlx_conjugated():
    # MLX 0.32 returns, for complex64 input, the conjugates of the right eigenvectors (A v != v w);
    # nuvec returns the eigenvectors themselves: eigenvalues agree, vectors are MLX's conjugates.
    mlx = pytest.importorskip("mlx.core")
    a = (RNG.standard_normal((5, 5)) + 1j * RNG.standard_normal((5, 5))).astype(np.complex64)
    w, v = (np.array(x) for x in LA.eig(mx.array(a)))
    w2, v2 = (np.array(x) for x in mlx.linalg.eig(mlx.array(a), stream=mlx.cpu))
    np.testing.assert_allclose(w, w2, atol=2e-5)
    np.testing.assert_allclose(v, np.conj(v2), atol=2e-5)
    np.testing.assert_allclose(a @ v, v * w, atol=2e-5)


@pytest.mark.parametrize("ord", [None, 1, 3, 0, math.inf])
def test_bool_vector_norms_as_mlx(ord):
    mlx = pytest.importorskip("mlx.core")
    v = [True, False, True]
    want = mlx.linalg.norm(mlx.array(v), ord)
    got = LA.norm(mx.array(v), ord)
    assert got.dtype == mx.float32
    np.testing.assert_array_equal(np.array(got), np.array(want))


@pytest.mark.parametrize("ord", [None, 2, "fro", "nuc", 1, -math.inf])
def test_complex_matrix_norms_as_mlx(ord):
    # MLX casts the 2-norm and the 1/inf norms back to the input's complex dtype; 'fro' and 'nuc' are real.
    mlx = pytest.importorskip("mlx.core")
    a = (RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))).astype(np.complex64)
    want = mlx.linalg.norm(mlx.array(a), ord, stream=mlx.cpu)
    got = LA.norm(mx.array(a), ord)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=2e-6)
    np.testing.assert_allclose(
        np.abs(np.array(got)), np.linalg.norm(a.astype(np.complex128), ord), rtol=2e-6
    )
