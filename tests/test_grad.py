"""The function transforms vjp, jvp, grad and value_and_grad: higher-order derivatives against
closed forms, trees of arguments and outputs, argnums / argnames, error messages,
stop_gradient, laziness, evaluation inside the differentiated function, and differential tests
against MLX's gradients.

The per-op rules are checked against finite differences in test_grad_registry.py;
custom_function and checkpoint in test_custom_checkpoint.py.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import mx
from helpers import seeded_rng

RTOL, ATOL = 2e-5, 2e-6  # float32 against float64 closed forms


def _np(x):
    return np.array(x.astype(mx.float32)) if x.dtype == mx.bfloat16 else np.array(x)


def _close(got, want, rtol=RTOL, atol=ATOL, msg=""):
    assert hasattr(got, "shape") and not isinstance(got, np.ndarray), (
        f"{msg}: not an array: {got!r}"
    )
    np.testing.assert_allclose(_np(got), np.asarray(want), rtol=rtol, atol=atol, err_msg=msg)


def _f32(a):
    return mx.array(np.asarray(a, dtype=np.float32))


# ----------------------------------------------------------------------------- higher order
def _derivative(fn, order):
    """The order-th derivative of an element-wise fn, by nesting grad over fn(x).sum()."""
    g = fn
    for _ in range(order):
        g = (lambda inner: lambda x: mx.grad(lambda y: inner(y).sum())(x))(g)
    return g


_u = np.exp
CLOSED_FORMS = {
    # name: (fn, [np derivative 1, 2, 3], domain)
    "sin": (mx.sin, [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x)], (-3, 3)),
    "cos": (mx.cos, [lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin], (-3, 3)),
    "exp": (mx.exp, [np.exp, np.exp, np.exp], (-2, 2)),
    "cube": (lambda x: x**3, [lambda x: 3 * x**2, lambda x: 6 * x, lambda x: 6 + 0 * x], (-2, 2)),
    "x_sin_x": (
        lambda x: x * mx.sin(x),
        [
            lambda x: np.sin(x) + x * np.cos(x),
            lambda x: 2 * np.cos(x) - x * np.sin(x),
            lambda x: -3 * np.sin(x) - x * np.cos(x),
        ],
        (-3, 3),
    ),
    "tanh": (
        mx.tanh,
        [
            lambda x: 1 - np.tanh(x) ** 2,
            lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
            lambda x: (1 - np.tanh(x) ** 2) * (6 * np.tanh(x) ** 2 - 2),
        ],
        (-2, 2),
    ),
    "sin_of_exp": (
        lambda x: mx.sin(mx.exp(x)),
        [
            lambda x: np.cos(_u(x)) * _u(x),
            lambda x: _u(x) * np.cos(_u(x)) - _u(x) ** 2 * np.sin(_u(x)),
            lambda x: (
                _u(x) * np.cos(_u(x)) - 3 * _u(x) ** 2 * np.sin(_u(x)) - _u(x) ** 3 * np.cos(_u(x))
            ),
        ],
        (-1, 1),
    ),
    "log1p_square": (
        lambda x: mx.log(1 + x * x),
        [
            lambda x: 2 * x / (1 + x * x),
            lambda x: 2 * (1 - x * x) / (1 + x * x) ** 2,
            lambda x: 4 * x * (x * x - 3) / (1 + x * x) ** 3,
        ],
        (-2, 2),
    ),
    "sigmoid": (
        mx.sigmoid,
        [
            lambda x: _sig(x) * (1 - _sig(x)),
            lambda x: _sig(x) * (1 - _sig(x)) * (1 - 2 * _sig(x)),
            lambda x: _sig(x) * (1 - _sig(x)) * (1 - 6 * _sig(x) + 6 * _sig(x) ** 2),
        ],
        (-3, 3),
    ),
    # a chain of element-wise ops, no matmul: exp(-x^2/2) * cos(3x)
    "gauss_cos": (
        lambda x: mx.exp(-x * x / 2) * mx.cos(3 * x),
        [
            lambda x: np.exp(-x * x / 2) * (-x * np.cos(3 * x) - 3 * np.sin(3 * x)),
            lambda x: np.exp(-x * x / 2) * ((x * x - 10) * np.cos(3 * x) + 6 * x * np.sin(3 * x)),
            lambda x: (
                np.exp(-x * x / 2)
                * ((-(x**3) + 30 * x) * np.cos(3 * x) + (-9 * x * x + 36) * np.sin(3 * x))
            ),
        ],
        (-2, 2),
    ),
}


def _sig(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
@pytest.mark.parametrize("order", [1, 2, 3])
def test_nested_grad_matches_closed_form(name, order):
    fn, derivs, (lo, hi) = CLOSED_FORMS[name]
    xs = np.linspace(lo, hi, 13)
    got = _derivative(fn, order)(_f32(xs))
    want = derivs[order - 1](xs.astype(np.float64))
    scale = max(1.0, float(np.abs(want).max()))
    _close(got, want, rtol=1e-4, atol=2e-5 * scale, msg=f"d^{order}/dx^{order} {name}")


def test_third_derivative_in_float64():
    xs = np.linspace(-2, 2, 9)
    x = mx.array(xs, dtype=mx.float64)
    got = _derivative(lambda v: v * mx.sin(v), 3)(x)
    assert got.dtype == mx.float64
    np.testing.assert_allclose(
        np.array(got), -3 * np.sin(xs) - xs * np.cos(xs), rtol=1e-5, atol=1e-6
    )


def test_mixed_partials():
    # f(x, y) = x^2 y^3: f_xy = 6 x y^2, f_xxy = 6 y^2, f_xyy = 12 x y
    x, y = _f32([0.5, -1.5, 2.0]), _f32([1.5, 0.5, -1.0])
    f = lambda a, b: (a * a * b**3).sum()  # noqa: E731
    fx = lambda a, b: mx.grad(f, argnums=0)(a, b).sum()  # noqa: E731
    fxy = mx.grad(fx, argnums=1)
    xn, yn = np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)
    _close(fxy(x, y), 6 * xn * yn**2)
    _close(mx.grad(lambda a, b: fxy(a, b).sum(), argnums=0)(x, y), 6 * yn**2)
    _close(mx.grad(lambda a, b: fxy(a, b).sum(), argnums=1)(x, y), 12 * xn * yn)


def _logsumexp_hessian(xn):
    p = np.exp(xn - xn.max())
    p /= p.sum()
    return np.diag(p) - np.outer(p, p)


def test_hessian_vector_products_all_modes_agree_with_closed_form():
    """Forward-over-reverse (jvp of grad / of vjp), reverse-over-forward (grad of jvp) and
    reverse-over-reverse (vjp of vjp) Hessian-vector products of logsumexp."""
    rng = seeded_rng("hvp")
    xn, tn = rng.standard_normal(6), rng.standard_normal(6)
    x, t = _f32(xn), _f32(tn)
    want = _logsumexp_hessian(xn) @ tn
    f = lambda a: mx.logsumexp(a)  # noqa: E731

    _, (fwd_rev,) = mx.jvp(mx.grad(f), [x], [t])
    _close(fwd_rev, want, msg="jvp of grad")

    _, (fwd_vjp,) = mx.jvp(lambda a: mx.vjp(f, [a], [mx.array(1.0)])[1][0], [x], [t])
    _close(fwd_vjp, want, msg="jvp of vjp")

    rev_fwd = mx.grad(lambda a: mx.jvp(f, [a], [t])[1][0])(x)
    _close(rev_fwd, want, msg="grad of jvp")

    g = lambda a: mx.vjp(f, [a], [mx.array(1.0)])[1][0]  # noqa: E731
    _, (rev_rev,) = mx.vjp(g, [x], [t])  # H is symmetric: t^T H = H t
    _close(rev_rev, want, msg="vjp of vjp")

    # second directional derivative t^T H t by jvp of jvp
    _, (tht,) = mx.jvp(lambda a: mx.jvp(f, [a], [t])[1][0], [x], [t])
    _close(tht, tn @ want, msg="jvp of jvp")


def test_grad_of_grad_of_grad_of_a_two_argument_function():
    # f(x, w) = sum(sin(w x)); d^3/dw^3 = -x^3 cos(w x)
    xn = np.array([0.3, -0.7, 1.1])
    x = _f32(xn)
    d1 = mx.grad(lambda w, a: mx.sin(w * a).sum())
    d2 = mx.grad(lambda w, a: d1(w, a))
    d3 = mx.grad(lambda w, a: d2(w, a))
    w = mx.array(0.8)
    _close(d3(w, x), np.sum(-(xn**3) * np.cos(0.8 * xn)))


def test_higher_order_through_reductions_and_broadcasting():
    # f(x) = sum(x)^3 over a broadcast: d/dx_i = 3 s^2 * 2 (x appears twice), H = 36 s * ones
    xn = np.array([[0.5, -0.25], [1.0, 0.25]])
    x = _f32(xn)
    f = lambda a: (mx.broadcast_to(a, (2, 2, 2)).sum() / 2) ** 3  # noqa: E731
    s = xn.sum()
    _close(mx.grad(f)(x), np.full((2, 2), 3 * s**2))
    _close(mx.grad(lambda a: mx.grad(f)(a).sum())(x), np.full((2, 2), 6 * s * 4))


# ----------------------------------------------------------------------------- vjp / jvp API
def test_vjp_and_jvp_with_lists_of_several_primals_and_outputs():
    x, y = _f32([1.0, 2.0]), _f32([3.0, -1.0])
    xn, yn = np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)

    def f(a, b):
        return [a * b, mx.sin(a) + b * b]

    outs, cots = mx.vjp(f, [x, y], [_f32([1.0, 1.0]), _f32([2.0, -1.0])])
    assert isinstance(outs, list) and len(outs) == 2 and isinstance(cots, list) and len(cots) == 2
    _close(outs[0], xn * yn)
    _close(outs[1], np.sin(xn) + yn * yn)
    _close(cots[0], yn + np.array([2.0, -1.0]) * np.cos(xn))
    _close(cots[1], xn + np.array([2.0, -1.0]) * 2 * yn)
    outs, tans = mx.jvp(f, [x, y], [_f32([1.0, 0.0]), _f32([0.0, 1.0])])
    assert isinstance(tans, list) and len(tans) == 2
    _close(tans[0], [yn[0], xn[1]])
    _close(tans[1], [np.cos(xn[0]), 2 * yn[1]])


@pytest.mark.nuvec_only  # MLX's vjp/jvp take lists of arrays only
def test_vjp_and_jvp_over_trees():
    p = {"w": _f32([1.0, 2.0]), "b": (_f32([0.5]),)}

    def f(q):
        return {"y": q["w"] * q["b"][0], "s": (q["w"] ** 2).sum()}

    outs, (g,) = mx.vjp(f, [p], [{"y": _f32([1.0, -1.0]), "s": mx.array(2.0)}])
    _close(outs[0]["y"], [0.5, 1.0])
    _close(g["w"], [0.5 + 4.0, -0.5 + 8.0])
    _close(g["b"][0], [1.0 - 2.0])
    outs, tans = mx.jvp(f, [p], [{"w": _f32([1.0, 0.0]), "b": (_f32([1.0]),)}])
    _close(tans[0]["y"], [0.5 + 1.0, 2.0])
    _close(tans[0]["s"], 2.0)


def test_same_array_passed_twice_gets_separate_gradients():
    x = _f32([1.0, 2.0])
    ga, gb = mx.grad(lambda a, b: (a * b * b).sum(), argnums=(0, 1))(x, x)
    _close(ga, [1.0, 4.0])
    _close(gb, [2.0, 8.0])


def test_ties_of_maximum_and_minimum_send_the_gradient_to_the_second_argument():
    # As MLX: d max(a, b) / da is (a > b), d / db is (a <= b), and alike for min; so relu's
    # gradient is 0 at 0 and clip's is 0 at its bounds.
    a, b = _f32([1.0, 2.0, 3.0]), _f32([2.0, 2.0, 2.0])
    ga, gb = mx.grad(lambda a, b: mx.maximum(a, b).sum(), argnums=(0, 1))(a, b)
    _close(ga, [0.0, 0.0, 1.0])
    _close(gb, [1.0, 1.0, 0.0])
    ga, gb = mx.grad(lambda a, b: mx.minimum(a, b).sum(), argnums=(0, 1))(a, b)
    _close(ga, [1.0, 0.0, 0.0])
    _close(gb, [0.0, 1.0, 1.0])
    _, (t,) = mx.jvp(lambda a: mx.maximum(a, b), [a], [mx.ones((3,))])
    _close(t, [0.0, 0.0, 1.0])
    x = _f32([-1.0, 0.0, 0.5, 1.0, 2.0])
    _close(mx.grad(lambda x: mx.maximum(x, 0.0).sum())(x), [0.0, 0.0, 1.0, 1.0, 1.0])
    _close(mx.grad(lambda x: mx.clip(x, 0.0, 1.0).sum())(x), [0.0, 0.0, 1.0, 0.0, 0.0])


def test_output_independent_of_input_gives_zeros():
    x = mx.array(np.array([[1.0, 2.0, 3.0]]), dtype=mx.float32)
    g = mx.grad(lambda a: mx.array(3.0))(x)
    assert tuple(g.shape) == (1, 3) and g.dtype == mx.float32
    _close(g, np.zeros((1, 3)))
    gx, gy = mx.grad(lambda a, b: (b * 2).sum(), argnums=(0, 1))(x, _f32([1.0]))
    _close(gx, np.zeros((1, 3)))
    _close(gy, [2.0])
    _, (t,) = mx.jvp(lambda a: mx.ones((2,)), [x], [x])
    _close(t, [0.0, 0.0])


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_gradient_has_the_input_dtype(dt):
    d = getattr(mx, dt)
    x = mx.array(np.array([0.5, -1.0, 2.0]), dtype=d)
    g = mx.grad(lambda a: (a * a * 3).sum())(x)
    assert g.dtype == d
    _close(g, [3.0, -6.0, 12.0], rtol=1e-2)


def test_gradient_through_mixed_precision():
    x16 = mx.array(np.array([0.5, 2.0]), dtype=mx.float16)
    g = mx.grad(lambda a: (a.astype(mx.float32) ** 2).sum())(x16)
    assert g.dtype == mx.float16
    _close(g, [1.0, 4.0])
    w = _f32([3.0, 4.0])
    g = mx.grad(lambda a: (a * x16).sum())(w)  # float16 * float32 -> float32
    assert g.dtype == mx.float32
    _close(g, [0.5, 2.0])


# ----------------------------------------------------------------------------- stop_gradient
def test_stop_gradient():
    x = _f32([1.0, -2.0, 3.0])
    xn = np.array([1.0, -2.0, 3.0])
    _close(mx.grad(lambda a: mx.stop_gradient(a * a).sum())(x), np.zeros(3))
    _close(mx.grad(lambda a: (a * mx.stop_gradient(a)).sum())(x), xn)
    _close(mx.grad(lambda a: (a * a + mx.stop_gradient(a * a * a)).sum())(x), 2 * xn)
    _, (t,) = mx.jvp(lambda a: mx.stop_gradient(a * a) + 3 * a, [x], [mx.ones_like(x)])
    _close(t, np.full(3, 3.0))
    # second order: d2/dx2 of x^2 * sg(x) is 2 sg(x)
    _close(_derivative(lambda a: a * a * mx.stop_gradient(a), 2)(x), 2 * xn)
    # the forward value is unchanged
    _close(mx.stop_gradient(x * 2), 2 * xn)


# ----------------------------------------------------------------------------- non-differentiable ops
def test_integer_and_bool_valued_ops_contribute_zero_gradient():
    xn = np.array([0.5, -1.5, 2.5, -0.25])
    x = _f32(xn)
    cases = {
        "where_cond": (lambda a: mx.where(a > 0, a * a, -a).sum(), np.where(xn > 0, 2 * xn, -1.0)),
        "comparison": (lambda a: (a * (a >= 0.5)).sum(), (xn >= 0.5).astype(float)),
        "argmax": (lambda a: (a * mx.argmax(a)).sum(), np.full(4, 2.0)),
        "argmin": (lambda a: (a * mx.argmin(a, keepdims=True)).sum(), np.full(4, 1.0)),
        "isfinite": (lambda a: mx.where(mx.isfinite(a), a, 0).sum(), np.ones(4)),
        "logical": (
            lambda a: (a * mx.logical_and(a > -1, a < 1)).sum(),
            (np.abs(xn) < 1).astype(float),
        ),
        "floor": (lambda a: (mx.floor(a) * a).sum(), np.floor(xn)),
    }
    for name, (f, want) in cases.items():
        _close(mx.grad(f)(x), want, msg=name)
        _, (t,) = mx.jvp(f, [x], [mx.ones_like(x)])
        _close(t, want.sum(), rtol=1e-5, msg=f"{name} (jvp)")


@pytest.mark.nuvec_only  # MLX raises: "Cannot calculate VJP with respect to indices"
def test_indices_computed_from_the_differentiated_input_get_zero_gradient():
    xn = np.array([0.5, -1.5, 2.5, -0.25])
    x = _f32(xn)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    f = lambda a: (mx.take_along_axis(a, mx.argsort(a), axis=0) * _f32(w)).sum()  # noqa: E731
    want = np.empty(4)
    want[np.argsort(xn)] = w
    _close(mx.grad(f)(x), want)
    f2 = lambda a: a[mx.argmax(a)] * 2 + a[mx.argpartition(a, 1)[:1]].sum()  # noqa: E731
    want2 = np.zeros(4)
    want2[np.argmax(xn)] += 2
    want2[np.argmin(xn)] += 1
    _close(mx.grad(f2)(x), want2)


# ----------------------------------------------------------------------------- laziness, eval inside
def test_gradients_are_lazy_until_evaluated():
    n = 1 << 20
    x = mx.ones((n,), dtype=mx.float32) * 0.5
    mx.eval(x)
    mx.clear_cache()
    before = mx.get_active_memory()
    g = mx.grad(lambda a: (mx.exp(a) * mx.sin(a)).sum())(x)
    built = mx.get_active_memory()
    assert built - before < n, f"building the gradient allocated {built - before} bytes"
    mx.eval(g)
    assert mx.get_active_memory() - before >= 4 * n  # the gradient now holds its data
    want = np.exp(0.5) * (np.sin(0.5) + np.cos(0.5))
    _close(g[:3], np.full(3, want), rtol=1e-5)
    _close(g[-1:], [want], rtol=1e-5)
    # value_and_grad's value is lazy too, and both evaluate together
    v, g = mx.value_and_grad(lambda a: (a * a).sum())(x[:4])
    mx.eval(v, g)
    _close(v, 1.0)
    _close(g, np.full(4, 1.0))


def _run_isolated(call):
    """Runs `call` (Python source using this module as `t`) in a fresh interpreter, so that a
    crash there (heap corruption, abort) fails the calling test instead of the whole run."""
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(
        [sys.executable, "-c", f"import test_grad as t; {call}"],
        cwd=here,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, (
        f"{call} exited with {r.returncode}\n--- stdout\n{r.stdout[-2000:]}\n"
        f"--- stderr\n{r.stderr[-4000:]}"
    )
    return r.stdout


def _eval_inside(kind):
    """grad, jvp and grad of grad of a function that evaluates an intermediate (in a `kind`
    way) while being differentiated; a value taken out of the graph (item, NumPy) is a
    constant."""
    xn = np.array([0.3, -1.2, 2.0], dtype=np.float32).astype(np.float64)
    x = _f32(xn)
    y_np = np.sin(xn) * xn
    s = float(y_np.sum())
    dy = np.sin(xn) + xn * np.cos(xn)
    d2y = 2 * np.cos(xn) - xn * np.sin(xn)

    if kind == "eval":  # mx.eval of an intermediate, which is then used further

        def f(a):
            y = mx.sin(a) * a
            mx.eval(y)
            return (y * 2).sum()

        want, want2 = 2 * dy, 2 * d2y
    elif kind == "print":  # printing evaluates

        def f(a):
            y = mx.sin(a) * a
            print("intermediate:", y)
            return y.sum()

        want, want2 = dy, d2y
    elif kind == "item":  # a Python float taken out of the graph is a constant

        def f(a):
            y = mx.sin(a) * a
            c = y.sum().item()
            assert abs(c - s) < 1e-5, (c, s)
            return (y * c).sum()

        want, want2 = s * dy, s * d2y
    elif kind == "numpy":  # so is a NumPy copy

        def f(a):
            y = mx.sin(a) * a
            arr = np.array(y)
            np.testing.assert_allclose(arr, y_np, rtol=1e-6)
            return y.sum() + (a * float(arr[0])).sum()

        want, want2 = dy + y_np[0], d2y
    elif kind == "aux":  # an intermediate evaluated inside and returned as aux stays valid

        def f(a):
            y = mx.sin(a) * a
            mx.eval(y)
            return y.sum(), y

        for _ in range(2):
            (v, aux), g = mx.value_and_grad(f)(x)
            _close(aux, y_np, rtol=1e-5, atol=1e-6, msg="aux")
            _close(v, s, rtol=1e-5, msg="value")
            _close(g, dy, rtol=1e-5, atol=1e-5, msg="aux: grad")
        print("ok", kind)
        return
    else:
        raise AssertionError(kind)

    for rep in range(3):  # repeated: a call must not corrupt the next ones
        _close(mx.grad(f)(x), want, rtol=1e-5, atol=1e-5, msg=f"{kind}: grad (call {rep})")
    _, (t,) = mx.jvp(f, [x], [mx.ones_like(x)])
    _close(t, want.sum(), rtol=1e-5, atol=1e-5, msg=f"{kind}: jvp")
    g2 = mx.grad(lambda a: mx.grad(f)(a).sum())(x)
    _close(g2, want2, rtol=1e-4, atol=1e-4, msg=f"{kind}: grad of grad")
    print("ok", kind)


@pytest.mark.parametrize("kind", ["eval", "print", "item", "numpy", "aux"])
def test_evaluating_inside_the_differentiated_function(kind):
    out = _run_isolated(f"t._eval_inside({kind!r})")
    assert f"ok {kind}" in out
    if kind == "print":
        assert "intermediate:" in out


def test_evaluating_the_traced_input_inside_the_differentiated_function():
    # evaluating the traced input itself (not an intermediate) already works
    xn = np.array([0.3, -1.2, 2.0])
    x = _f32(xn)

    def f(a):
        mx.eval(a)
        return mx.sin(a).sum()

    for _ in range(2):
        _close(mx.grad(f)(x), np.cos(xn))


def test_grad_of_a_closure_treats_captured_arrays_as_constants():
    w = _f32([2.0, 3.0])
    x = _f32([1.0, -1.0])
    g = mx.grad(lambda a: (a * w * w).sum())(x)
    _close(g, [4.0, 9.0])
    # and a gradient taken inside another is a function of the outer variable
    h = mx.grad(lambda v: mx.grad(lambda a: (a * v * a).sum())(x).sum())(w)
    _close(h, 2 * np.array([1.0, -1.0]))


# ----------------------------------------------------------------------------- against MLX
def _mlp_loss(lib):
    def loss(params, x, y):
        h = x
        for w, b in params["layers"][:-1]:
            h = lib.tanh(h @ w + b)
        w, b = params["layers"][-1]
        logits = h @ w + b
        lse = lib.logsumexp(logits, axis=-1)
        picked = lib.take_along_axis(logits, y[:, None], axis=-1)[:, 0]
        return (lse - picked).mean() + 1e-3 * sum((w * w).sum() for w, _ in params["layers"])

    return loss


def _layernorm_loss(lib):
    def loss(x, g, b):
        mu = lib.mean(x, axis=-1, keepdims=True)
        var = lib.var(x, axis=-1, keepdims=True)
        y = (x - mu) * lib.rsqrt(var + 1e-5) * g + b
        return (lib.softmax(y, axis=-1) * lib.arange(x.shape[-1]).astype(x.dtype)).sum()

    return loss


def _attention_loss(lib):
    def loss(q, k, v):
        s = (q @ lib.swapaxes(k, -1, -2)) / 2.0
        a = lib.softmax(s, axis=-1)
        return (lib.sigmoid(a @ v) ** 2).sum()

    return loss


def _indexing_loss(lib):
    def loss(x, u):
        idx = lib.array(np.array([0, 2, 2, 5], dtype=np.int32))
        y = x.at[idx].add(u[:4] * 2)
        z = lib.take(y, lib.array(np.array([5, 1, 1], dtype=np.int32)), axis=0)
        c = lib.cumsum(lib.sort(y.reshape(-1)), axis=0)
        return (z * z).sum() + lib.max(c) + lib.pad(y, ((1, 0), (0, 2))).std()

    return loss


def _mlx_diff_cases(rng):
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "mlp": (
            _mlp_loss,
            lambda lib, a: (
                {"layers": [(a(f(5, 8)), a(f(8))), (a(f(8, 8)), a(f(8))), (a(f(8, 3)), a(f(3)))]},
                a(f(6, 5)),
                lib.array(np.array([0, 1, 2, 1, 0, 2], dtype=np.int32)),
            ),
            0,
        ),
        "layernorm": (_layernorm_loss, lambda lib, a: (a(f(4, 6)), a(f(6)), a(f(6))), (0, 1, 2)),
        "attention": (
            _attention_loss,
            lambda lib, a: (a(f(2, 3, 4)), a(f(2, 5, 4)), a(f(2, 5, 3))),
            (0, 1, 2),
        ),
        "indexing": (_indexing_loss, lambda lib, a: (a(f(6, 3)), a(f(5, 3))), (0, 1)),
    }


@pytest.mark.nuvec_only  # compares nuvec with MLX: nothing to compare when running on MLX
@pytest.mark.parametrize("case", ["mlp", "layernorm", "attention", "indexing"])
def test_gradients_match_mlx(case):
    mlx = pytest.importorskip("mlx.core")
    from mlx.utils import tree_flatten as mlx_flatten

    from nuvec.utils import tree_flatten as nv_flatten

    make_loss, make_args, argnums = _mlx_diff_cases(seeded_rng("vs-mlx", case))[case]
    # same NumPy values for both (the generator is re-created for each framework)
    args_nv = _mlx_diff_cases(seeded_rng("vs-mlx", case))[case][1](mx, mx.array)
    args_mlx = _mlx_diff_cases(seeded_rng("vs-mlx", case))[case][1](mlx, mlx.array)
    v_nv, g_nv = mx.value_and_grad(make_loss(mx), argnums=argnums)(*args_nv)
    v_mlx, g_mlx = mlx.value_and_grad(make_loss(mlx), argnums=argnums)(*args_mlx)
    np.testing.assert_allclose(np.array(v_nv), np.array(v_mlx), rtol=1e-5, atol=1e-6)
    flat_nv, flat_mlx = nv_flatten(g_nv), mlx_flatten(g_mlx)
    assert [p for p, _ in flat_nv] == [p for p, _ in flat_mlx]
    for (path, a), (_, b) in zip(flat_nv, flat_mlx):
        np.testing.assert_allclose(
            np.array(a), np.array(b), rtol=1e-4, atol=1e-5, err_msg=f"{case}: gradient at {path}"
        )


@pytest.mark.nuvec_only  # compares nuvec with MLX
def test_hessian_vector_product_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("hvp-vs-mlx")
    xn, tn = (
        rng.standard_normal((3, 4)).astype(np.float32),
        rng.standard_normal((3, 4)).astype(np.float32),
    )

    def hvp(lib):
        f = lambda a: (lib.tanh(a @ a.T) * lib.sin(a).sum(axis=1)).sum()  # noqa: E731
        return lib.jvp(lib.grad(f), [lib.array(xn)], [lib.array(tn)])[1][0]

    np.testing.assert_allclose(np.array(hvp(mx)), np.array(hvp(mlx)), rtol=1e-4, atol=1e-5)
