"""nuvec.linalg's LU / triangular / Cholesky family against mlx.core.linalg (on MLX's CPU stream):
the same snippets, their values, output structure (dtypes, shapes, MLX's pivot and permutation
formats), errors, and the gradients MLX has (det, slogdet, solve and solve_triangular in b)."""

import numpy as np
import pytest

import nuvec as nv

mlx = pytest.importorskip("mlx.core")
RNG = np.random.default_rng(171)


def on_both(fn, *arrays):
    """fn(module, *arrays) on nuvec and on MLX (CPU stream): results as NumPy trees."""

    def run(m, **kw):
        with m.stream(m.cpu):
            out = fn(m, *(m.array(a) for a in arrays))
        return [np.asarray(o) for o in out] if isinstance(out, (tuple, list)) else [np.asarray(out)]

    return run(nv), run(mlx)


def agree(got, want, tol):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if np.issubdtype(w.dtype, np.integer):
            assert np.array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def square(*shape, dtype=np.float32):
    return (RNG.standard_normal(shape) + 3 * np.eye(shape[-1])).astype(dtype)


def spd(n, dtype=np.float32):
    a = RNG.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


CASES = {
    "lu_factor": (
        lambda m, a: m.linalg.lu_factor(a),
        [RNG.standard_normal((2, 5, 5)).astype(np.float32)],
    ),
    "lu_factor_wide": (
        lambda m, a: m.linalg.lu_factor(a),
        [RNG.standard_normal((3, 5)).astype(np.float32)],
    ),
    "lu": (lambda m, a: m.linalg.lu(a), [RNG.standard_normal((6, 6)).astype(np.float32)]),
    "lu_tall": (lambda m, a: m.linalg.lu(a), [RNG.standard_normal((5, 3)).astype(np.float32)]),
    "inv": (lambda m, a: m.linalg.inv(a), [square(2, 4, 4)]),
    "inv64": (lambda m, a: m.linalg.inv(a), [square(5, 5, dtype=np.float64)]),
    "tri_inv": (lambda m, a: m.linalg.tri_inv(a), [square(4, 4)]),
    "tri_inv_upper": (lambda m, a: m.linalg.tri_inv(a, upper=True), [square(4, 4)]),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), [spd(5)]),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a, upper=True), [spd(5)]),
    "cholesky_inv": (lambda m, a: m.linalg.cholesky_inv(m.linalg.cholesky(a)), [spd(4)]),
    "cholesky_inv_upper": (
        lambda m, a: m.linalg.cholesky_inv(m.linalg.cholesky(a, True), True),
        [spd(4)],
    ),
    "solve_vec": (
        lambda m, a, b: m.linalg.solve(a, b),
        [square(4, 4), RNG.standard_normal(4).astype(np.float32)],
    ),
    "solve_mat": (
        lambda m, a, b: m.linalg.solve(a, b),
        [square(2, 4, 4), RNG.standard_normal((2, 4, 3)).astype(np.float32)],
    ),
    "solve_mixed": (lambda m, a, b: m.linalg.solve(a, b), [square(3, 3), RNG.standard_normal(3)]),
    "solve_triangular": (
        lambda m, a, b: m.linalg.solve_triangular(a, b),
        [square(4, 4), RNG.standard_normal((4, 2)).astype(np.float32)],
    ),
    "solve_triangular_upper": (
        lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
        [square(4, 4), RNG.standard_normal(4).astype(np.float32)],
    ),
    "solve_triangular_batch_b": (
        lambda m, a, b: m.linalg.solve_triangular(a, b),
        [square(3, 3), RNG.standard_normal((2, 3, 4)).astype(np.float32)],
    ),
    "det": (lambda m, a: m.linalg.det(a), [RNG.standard_normal((3, 4, 4)).astype(np.float32)]),
    "det_int": (lambda m, a: m.linalg.det(a), [np.array([[2, 1], [1, 3]], np.int32)]),
    "det_f16": (lambda m, a: m.linalg.det(a), [np.array([[2, 1], [1, 3]], np.float16)]),
    "det_singular": (lambda m, a: m.linalg.det(a), [np.zeros((3, 3), np.float32)]),
    "slogdet": (
        lambda m, a: m.linalg.slogdet(a),
        [RNG.standard_normal((3, 4, 4)).astype(np.float32)],
    ),
    "slogdet_singular": (lambda m, a: m.linalg.slogdet(a), [np.zeros((3, 3), np.float32)]),
    "cholesky_not_pd": (
        lambda m, a: m.linalg.cholesky(a),
        [np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_mlx(name):
    fn, args = CASES[name]
    got, want = on_both(fn, *args)
    agree(got, want, 1e-4)


ERRORS = {
    "inv_rect": lambda m: m.linalg.inv(m.zeros((2, 3))),
    "inv_int": lambda m: m.linalg.inv(m.zeros((3, 3), dtype=m.int32)),
    "inv_complex": lambda m: m.linalg.inv(m.eye(3).astype(m.complex64)),
    "cholesky_complex": lambda m: m.linalg.cholesky(m.eye(3).astype(m.complex64)),
    "lu_factor_complex": lambda m: m.linalg.lu_factor(m.eye(3).astype(m.complex64)),
    "solve_complex": lambda m: m.linalg.solve(
        m.eye(3).astype(m.complex64), m.ones(3).astype(m.complex64)
    ),
    "solve_shapes": lambda m: m.linalg.solve(m.eye(3), m.ones(4)),
    "solve_1d": lambda m: m.linalg.solve(m.ones(3), m.ones(3)),
    "det_complex": lambda m: m.linalg.det(m.eye(3).astype(m.complex64)),
    "det_rect": lambda m: m.linalg.det(m.ones((2, 3))),
    "tri_inv_int": lambda m: m.linalg.tri_inv(m.eye(3, dtype=m.int32)),
    "solve_triangular_rect": lambda m: m.linalg.solve_triangular(m.ones((3, 4)), m.ones(4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_mlx(name):
    for m in (nv, mlx):
        with m.stream(m.cpu), pytest.raises(ValueError):
            ERRORS[name](m)


@pytest.mark.parametrize("name", ["inv", "solve"])
def test_singular_raises_like_mlx(name):
    for m in (nv, mlx):
        with m.stream(m.cpu), pytest.raises(RuntimeError):
            z = m.zeros((3, 3))
            m.eval(m.linalg.inv(z) if name == "inv" else m.linalg.solve(z, m.ones(3)))


CONST = square(3, 3)
GRADS = {
    # MLX differentiates det and slogdet of matrices up to 3 x 3 only (closed forms).
    "det": (lambda m, a: m.linalg.det(a), square(2, 3, 3)),
    "det2": (lambda m, a: m.linalg.det(a), square(2, 2)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1], square(3, 3)),
    "solve_b": (lambda m, b: m.linalg.solve(m.array(CONST), b), np.ones(3, np.float32)),
    "solve_triangular_b": (
        lambda m, b: m.linalg.solve_triangular(m.array(CONST), b),
        np.ones(3, np.float32),
    ),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads_match_mlx(name):
    fn, x = GRADS[name]
    res = []
    for m in (nv, mlx):
        with m.stream(m.cpu):
            shape = fn(m, m.array(x)).shape
            w = m.array(np.arange(1.0, 1 + np.prod(shape)).reshape(shape).astype(np.float32))
            g = m.grad(lambda a: (fn(m, a) * w).sum())(m.array(x))
            _, t = m.jvp(lambda a: fn(m, a), [m.array(x)], [m.array(np.ones_like(x))])
            res.append((np.asarray(g), np.asarray(t[0])))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-4, atol=1e-4)
