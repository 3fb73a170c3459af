"""Derivatives and vmap of nuvec.linalg's LU / triangular / Cholesky family: vjp and jvp against
central finite differences in float64 (a directional derivative along a random direction, which
also checks that a primitive reading one triangle has its gradient there), and vmap over any
axis of either operand against a loop; the functions under nuvec.compile."""

import numpy as np
import pytest

from _impl import mx

pytestmark = (
    pytest.mark.nuvec_only
)  # MLX lacks most of these rules (and its vmap of tri_inv is wrong)


def arr(x):
    """x as an array of its own dtype (float64 stays float64)."""
    x = np.asarray(x)
    return mx.array(x, dtype=mx.float64) if x.dtype == np.float64 else mx.array(x)


RNG = np.random.default_rng(1717)
la = mx.linalg
N = 4


def square(*shape):
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-1])


def spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def tri_factor(*shape):
    return np.linalg.cholesky(spd(*shape))


# name -> (function of arrays, inputs); the output weighted by fixed values gives a scalar.
FUNCS = {
    "inv": (lambda a: la.inv(a), [square(2, N, N)]),
    "tri_inv": (lambda a: la.tri_inv(a), [square(N, N)]),
    "tri_inv_upper": (lambda a: la.tri_inv(a, upper=True), [square(N, N)]),
    "solve": (lambda a, b: la.solve(a, b), [square(2, N, N), RNG.standard_normal((2, N, 3))]),
    "solve_vec": (lambda a, b: la.solve(a, b), [square(N, N), RNG.standard_normal(N)]),
    "solve_one_a": (lambda a, b: la.solve(a, b), [square(N, N), RNG.standard_normal((2, N, 3))]),
    "solve_triangular_one_a": (
        lambda a, b: la.solve_triangular(a, b),
        [square(N, N), RNG.standard_normal((2, N, 3))],
    ),
    "solve_triangular": (
        lambda a, b: la.solve_triangular(a, b),
        [square(N, N), RNG.standard_normal((N, 2))],
    ),
    "solve_triangular_upper": (
        lambda a, b: la.solve_triangular(a, b, upper=True),
        [square(N, N), RNG.standard_normal(N)],
    ),
    "cholesky": (lambda a: la.cholesky(a), [spd(2, N, N)]),
    "cholesky_upper": (lambda a: la.cholesky(a, upper=True), [spd(N, N)]),
    "cholesky_inv": (lambda a: la.cholesky_inv(a), [tri_factor(N, N)]),
    "det": (lambda a: la.det(a), [square(3, N, N)]),
    "slogdet": (lambda a: la.slogdet(a)[1], [square(N, N)]),
    "lu_factor": (lambda a: la.lu_factor(a)[0], [square(N, N)]),
    "lu_L": (lambda a: la.lu(a)[1], [RNG.standard_normal((N, N))]),
    "lu_U": (lambda a: la.lu(a)[2], [RNG.standard_normal((2, N, N))]),
}


def weighted(fn):
    def f(*xs):
        y = fn(*xs)
        w = arr(np.cos(np.arange(y.size)).reshape(y.shape))
        return (y * w).sum()

    return f


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_vjp_jvp_match_finite_differences(name):
    fn, inputs = FUNCS[name]
    f = weighted(fn)
    xs = [arr(x) for x in inputs]
    dirs = [RNG.standard_normal(x.shape) for x in inputs]
    eps = 1e-6
    plus = f(*[arr(x + eps * d) for x, d in zip(inputs, dirs)]).item()
    minus = f(*[arr(x - eps * d) for x, d in zip(inputs, dirs)]).item()
    fd = (plus - minus) / (2 * eps)
    grads = mx.grad(f, argnums=list(range(len(xs))))(*xs)
    grads = grads if len(xs) > 1 else [grads]  # as MLX: one argnum gives one array
    via_vjp = sum(float((np.asarray(g) * d).sum()) for g, d in zip(grads, dirs))
    _, t = mx.jvp(f, xs, [arr(d) for d in dirs])
    assert abs(via_vjp - fd) <= 1e-5 * max(1.0, abs(fd)), (via_vjp, fd)
    assert abs(t[0].item() - fd) <= 1e-5 * max(1.0, abs(fd)), (t[0].item(), fd)


def test_second_derivative_of_inv():
    a = square(N, N)
    f = lambda x: la.inv(x).sum()  # noqa: E731
    h = mx.grad(lambda x: (mx.grad(f)(x) ** 2).sum())(arr(a))
    d = RNG.standard_normal(a.shape)
    g = lambda x: float((np.asarray(mx.grad(f)(arr(x))) ** 2).sum())  # noqa: E731
    fd = (g(a + 1e-6 * d) - g(a - 1e-6 * d)) / 2e-6
    assert abs(float((np.asarray(h) * d).sum()) - fd) <= 1e-4 * max(1.0, abs(fd))


VMAPS = {
    "inv": (la.inv, [square(N, N)]),
    "tri_inv": (lambda a: la.tri_inv(a, upper=True), [square(N, N)]),
    "cholesky": (la.cholesky, [spd(N, N)]),
    "cholesky_inv": (la.cholesky_inv, [tri_factor(N, N)]),
    "det": (la.det, [square(N, N)]),
    "slogdet": (lambda a: la.slogdet(a)[1], [square(N, N)]),
    "lu_factor": (lambda a: la.lu_factor(a)[1], [RNG.standard_normal((N, N))]),
    "lu": (lambda a: la.lu(a)[0], [RNG.standard_normal((N, 3))]),
    "solve": (la.solve, [square(N, N), RNG.standard_normal((N, 2))]),
    "solve_vec": (la.solve, [square(N, N), RNG.standard_normal(N)]),
    "solve_triangular": (la.solve_triangular, [square(N, N), RNG.standard_normal((N, 2))]),
}


VMAP_CASES = [
    (name, axis, which)
    for name in sorted(VMAPS)
    for axis in (0, 1, -1)
    for which in (("all", "first", "second") if len(VMAPS[name][1]) == 2 else ("all",))
]


@pytest.mark.parametrize("name,axis,which", VMAP_CASES)
def test_vmap_matches_loop(name, axis, which):
    fn, inputs = VMAPS[name]
    k = 3
    mapped = [which in ("all", "first"), which in ("all", "second")][: len(inputs)]
    batched, axes = [], []
    for x, m in zip(inputs, mapped):
        if m:
            stack = np.stack(
                [x + 0.1 * i * np.eye(*x.shape[-2:]) if x.ndim == 2 else x + i for i in range(k)]
            )
            ax = axis % (x.ndim + 1)
            batched.append(np.moveaxis(stack, 0, ax))
            axes.append(ax)
        else:
            batched.append(x)
            axes.append(None)
    got = np.asarray(mx.vmap(fn, in_axes=tuple(axes))(*[arr(b) for b in batched]))
    for i in range(k):
        args = [np.take(b, i, axis=a) if a is not None else b for b, a in zip(batched, axes)]
        want = np.asarray(fn(*[arr(x) for x in args]))
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-10)


def test_under_compile():
    a, b = square(2, N, N), RNG.standard_normal((2, N, 1))

    def f(a, b):
        return (
            la.solve(a, b),
            la.det(a),
            la.cholesky(a @ a.swapaxes(-1, -2)),
            la.inv(a),
            la.lu(a)[2],
        )

    for got, want in zip(mx.compile(f)(arr(a), arr(b)), f(arr(a), arr(b))):
        assert np.array_equal(np.asarray(got), np.asarray(want))
    g = mx.compile(mx.grad(lambda x: la.det(x).sum()))(arr(a))
    np.testing.assert_allclose(
        np.asarray(g), np.linalg.det(a)[:, None, None] * np.linalg.inv(a).swapaxes(-1, -2)
    )
