"""Transforms against MLX (issue 11): grad / value_and_grad / vjp / jvp / vmap / custom_function
error paths with MLX's exception types, tangent dtypes, gradients of the scans and combining
scatters, masked updates under vmap, value-dependent shapes and async_eval inside transforms.

Each ``same`` case runs one snippet on nuvec and on mlx.core and compares the outcome: the same
exception type, or the same tree of values (shapes, dtypes, values). Where MLX fails by accident
(a raw ``std::bad_cast``, a crash) or computes something nuvec extends, the test is marked
nuvec_only and says why; docs/transforms.md lists those differences."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

mlx = pytest.importorskip("mlx.core")
nv = mx if not IS_MLX else mlx


def _plain(r):
    """Arrays as (dtype name, shape, values); trees kept; other leaves as they are."""
    if isinstance(r, (mlx.array, nv.array)):
        name = str(r.dtype).rsplit(".", 1)[-1]
        return ("array", name, tuple(r.shape), np.array(r).tolist())
    if isinstance(r, (list, tuple)):
        return type(r).__name__, [_plain(x) for x in r]
    if isinstance(r, dict):
        return {k: _plain(v) for k, v in r.items()}
    return r


def _outcome(lib, f):
    try:
        return _plain(f(lib))
    except Exception as e:  # the exception's type is the outcome
        return e


def _close(a, b):
    if isinstance(a, tuple) and a and a[0] == "array":
        assert a[1:3] == b[1:3], (a, b)
        np.testing.assert_allclose(
            np.array(a[3], dtype=float), np.array(b[3], dtype=float), rtol=1e-5, atol=1e-5
        )
    elif isinstance(a, tuple):
        assert a[0] == b[0] and len(a[1]) == len(b[1]), (a, b)
        for x, y in zip(a[1], b[1]):
            _close(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    else:
        assert a == b


def same(f, error=None):
    """f(lib) gives the same on nuvec and MLX: equal values, or exceptions that are both an
    instance of `error` (MLX's type)."""
    got, ref = _outcome(nv, f), _outcome(mlx, f)
    if error is not None:
        assert isinstance(ref, error), f"MLX: {ref!r}"
        assert isinstance(got, error), f"nuvec: {got!r}, MLX: {ref!r}"
        return
    assert not isinstance(ref, Exception), f"MLX raised {ref!r}"
    assert not isinstance(got, Exception), f"nuvec raised {got!r}"
    _close(got, ref)


def _x(m):
    return m.array([1.0, 2.0, 3.0])


# ----------------------------------------------------------------------------- grad error paths
GRAD_ERRORS = {
    "non-scalar": lambda m: m.grad(lambda a: a * 2)(_x(m)),
    "shape-(1,)": lambda m: m.value_and_grad(lambda a: a[:1])(_x(m)),
    "returns-int": lambda m: m.grad(lambda a: 3)(_x(m)),
    "returns-None": lambda m: m.grad(lambda a: None)(_x(m)),
    "grad-aux-tuple": lambda m: m.grad(lambda a: (a.sum(), a))(_x(m)),
    "grad-list": lambda m: m.grad(lambda a: [a.sum()])(_x(m)),
    "vag-list-aux": lambda m: m.value_and_grad(lambda a: [a.sum(), a])(_x(m)),
    "vag-empty-tuple": lambda m: m.value_and_grad(lambda a: ())(_x(m)),
    "vag-first-not-array": lambda m: m.value_and_grad(lambda a: (3, a.sum()))(_x(m)),
    "argnums-out-of-range": lambda m: m.grad(lambda a, b: a.sum(), argnums=2)(_x(m), _x(m)),
    "argnums-negative": lambda m: m.grad(lambda a, b: a.sum(), argnums=-1),
    "argnums-duplicate": lambda m: m.grad(lambda a, b: a.sum(), argnums=(0, 0)),
    "argnums-empty": lambda m: m.grad(lambda a: a.sum(), argnums=()),
    "argnames-missing": lambda m: m.grad(lambda a, b=None: a.sum(), argnames="b")(_x(m)),
    "no-positional": lambda m: m.grad(lambda a=None: a.sum())(a=_x(m)),
    "int-leaf": lambda m: m.grad(lambda a: a[0].sum())((_x(m), 3)),
    "str-leaf": lambda m: m.grad(lambda a: a[0].sum())((_x(m), "s")),
    "None-leaf": lambda m: m.grad(lambda a: a[0].sum())((_x(m), None)),
    "None-arg": lambda m: m.grad(lambda a: m.array(1.0))(None),
    "float-arg": lambda m: m.grad(lambda a: a)(1.0),
    "empty-tuple-arg": lambda m: m.grad(lambda a: m.array(1.0))(()),
    "empty-dict-arg": lambda m: m.grad(lambda a: m.array(1.0))({}),
    "vjp-cotangent-shape": lambda m: m.vjp(lambda a: a * 2, [_x(m)], [m.ones((2,))]),
    "vjp-too-few-cotangents": lambda m: m.vjp(lambda a: (a, a * 2), [_x(m)], [_x(m)]),
    "jvp-tangent-shape": lambda m: m.jvp(lambda a: a * 2, [_x(m)], [m.ones((1,))]),
    "jvp-tangent-count": lambda m: m.jvp(lambda a, b: a * b, [_x(m), _x(m)], [_x(m)]),
    "async_eval-in-grad": lambda m: m.grad(lambda a: (m.async_eval(a), a.sum())[1])(_x(m)),
    "async_eval-in-vjp": lambda m: m.vjp(
        lambda a: (m.async_eval(a * 2), a.sum())[1], [_x(m)], [m.array(1.0)]
    ),
    "async_eval-in-vmap": lambda m: m.vmap(lambda a: (m.async_eval(a), a * 2)[1])(_x(m)),
    "eval-in-vmap": lambda m: m.vmap(lambda a: (m.eval(a), a * 2)[1])(_x(m)),
    "item-in-vmap": lambda m: m.vmap(lambda a: a * a.sum().item())(m.ones((2, 3))),
    "traced-mask-in-grad": lambda m: m.grad(lambda a: a[a > 2].sum())(_x(m)),
    "traced-mask-in-vmap": lambda m: m.vmap(lambda a: a[a > 2])(m.ones((2, 3))),
}


@pytest.mark.parametrize("case", list(GRAD_ERRORS))
def test_error_paths_raise_value_error_as_mlx(case):
    same(GRAD_ERRORS[case], ValueError)


TYPE_ERRORS = {
    "grad-not-callable": lambda m: m.grad(3),
    "value_and_grad-not-callable": lambda m: m.value_and_grad(3),
    "vmap-not-callable": lambda m: m.vmap(3),
    "argnums-str": lambda m: m.grad(lambda a: a.sum(), argnums="a"),
    "argnums-float": lambda m: m.grad(lambda a: a.sum(), argnums=1.0),
    "argnames-int": lambda m: m.grad(lambda a, b: a.sum(), argnames=1),
    "vjp-int-primal": lambda m: m.vjp(lambda a: a, [1], [m.array(1.0)]),
    "vjp-None-primal": lambda m: m.vjp(lambda a: m.array(1.0), [None], [m.array(1.0)]),
    "vjp-int-cotangent": lambda m: m.vjp(lambda a: a, [_x(m)], [1]),
    "jvp-int-primal": lambda m: m.jvp(lambda a: a, [1], [m.array(1.0)]),
    "vmap-in_axes-None": lambda m: m.vmap(lambda a: a, in_axes=None),
}


@pytest.mark.parametrize("case", list(TYPE_ERRORS))
def test_bad_arguments_raise_type_error_as_mlx(case):
    same(TYPE_ERRORS[case], TypeError)


@pytest.mark.nuvec_only  # MLX raises RuntimeError('std::bad_cast'), a raw C++ exception
@pytest.mark.parametrize("t", ["vjp", "jvp"])
def test_non_array_output_of_vjp_jvp_raises_value_error(t):
    with pytest.raises(ValueError, match=t):
        getattr(mx, t)(lambda a: (a, 3), [_x(mx)], [_x(mx)])


# ----------------------------------------------------------------------------- values as MLX
VALUES = {
    "vag-aux": lambda m: m.value_and_grad(lambda a: (a.sum(), a * 2, 3))(_x(m)),
    "vag-aux-tree": lambda m: m.value_and_grad(lambda a: ((a * a).sum(), {"k": [a]}))(_x(m)),
    "argnums-sorted": lambda m: m.grad(lambda a, b: (a * b * b).sum(), argnums=(1, 0))(
        _x(m), _x(m) * 2
    ),
    "argnums-numpy-int": lambda m: m.grad(lambda a, b: (a * b).sum(), argnums=np.int64(1))(
        _x(m), _x(m) * 2
    ),
    "argnums-list": lambda m: m.grad(lambda a, b: (a * b).sum(), argnums=[0, 1])(_x(m), _x(m)),
    "argnames": lambda m: m.grad(lambda a, b: (a * b).sum(), argnums=0, argnames="b")(
        _x(m), b=_x(m) * 3
    ),
    "argnames-duplicate": lambda m: m.grad(lambda a, b: (a * b).sum(), argnames=["b", "b"])(
        _x(m), b=_x(m)
    ),
    "argnames-empty": lambda m: m.grad(lambda a, b: (a * b).sum(), argnames=[])(_x(m), b=_x(m)),
    "constant-output": lambda m: m.grad(lambda a: m.array(1.0))(_x(m)),
    "int-output": lambda m: m.value_and_grad(lambda a: (a > 1).sum())(_x(m)),
    "vjp-extra-cotangents": lambda m: m.vjp(lambda a: a * 2, [_x(m)], [_x(m), _x(m)]),
    "vjp-cotangent-dtype": lambda m: m.vjp(lambda a: a * 2, [_x(m)], [m.ones((3,), m.float16)]),
    "vjp-empty-primals": lambda m: m.vjp(lambda: m.array(1.0), [], [m.array(1.0)]),
    "jvp-empty-primals": lambda m: m.jvp(lambda: m.array(1.0), [], []),
    "jvp-comparison": lambda m: m.jvp(lambda a: a > 1, [_x(m)], [_x(m)]),
    "jvp-equal": lambda m: m.jvp(lambda a: m.equal(a, 2.0), [_x(m)], [_x(m)]),
    "jvp-isnan": lambda m: m.jvp(lambda a: m.isnan(a), [_x(m)], [_x(m)]),
    "jvp-logical-not-of-comparison": lambda m: m.jvp(
        lambda a: m.logical_not(a > 1), [_x(m)], [_x(m)]
    ),
    "jvp-logical-not": lambda m: m.jvp(lambda a: m.logical_not(a), [_x(m)], [_x(m)]),
    "jvp-any": lambda m: m.jvp(lambda a: m.any(a > 1), [_x(m)], [_x(m)]),
    "jvp-argmax": lambda m: m.jvp(lambda a: m.argmax(a), [_x(m)], [_x(m)]),
    "jvp-astype-int": lambda m: m.jvp(lambda a: a.astype(m.int32), [_x(m)], [_x(m)]),
    "jvp-partly-traced": lambda m: m.jvp(
        lambda a, b: (a * b, m.array([1, 2]), a > b), [_x(m), m.array([2.0, 2, 2])], [_x(m), _x(m)]
    ),
    "jvp-unrelated-int-output": lambda m: m.jvp(lambda a: m.array([1, 2]), [_x(m)], [_x(m)]),
    "jvp-int-primal": lambda m: m.jvp(lambda a: a * 2, [m.array([1, 2])], [m.array([1, 1])]),
}


@pytest.mark.parametrize("case", list(VALUES))
def test_values_and_dtypes_as_mlx(case):
    same(VALUES[case])


# ----------------------------------------------------------------------------- vmap axes
V2 = lambda m: m.arange(6, dtype=m.float32).reshape(2, 3)  # noqa: E731
VMAP = {
    "dict-in_axes-one-arg": lambda m: m.vmap(
        lambda d: d["a"] + d["b"], in_axes={"a": 0, "b": None}
    )({"a": V2(m), "b": m.ones(3)}),
    "nested-in_axes-one-arg": lambda m: m.vmap(
        lambda d: d["a"][0] + d["a"][1].T, in_axes={"a": (0, 1)}
    )({"a": (V2(m), V2(m).T)}),
    "tuple-in_axes-one-array": lambda m: m.vmap(lambda a: a * 2, in_axes=(1,))(V2(m)),
    "one-tuple-arg": lambda m: m.vmap(lambda t: t[0] * t[1], in_axes=(0, None))((V2(m), m.ones(3))),
    "bool-axis": lambda m: m.vmap(lambda a: a * 2, in_axes=True)(V2(m)),
    "negative-axis": lambda m: m.vmap(lambda a: a * 2, in_axes=-1)(V2(m)),
    "out_axes-tuple": lambda m: m.vmap(lambda a: (a, a.sum()), out_axes=(1, 0))(V2(m)),
    "out_axes-one-tuple-for-array": lambda m: m.vmap(lambda a: a * 2, out_axes=(1,))(V2(m)),
    "out_axes-dict": lambda m: m.vmap(lambda a: {"p": a, "q": a.sum()}, out_axes={"p": 1, "q": 0})(
        V2(m)
    ),
    "out_axes-prefix": lambda m: m.vmap(lambda a: (a, (a * 2, a * 3)), out_axes=(0, 1))(V2(m)),
    "constant-output": lambda m: m.vmap(lambda a: m.ones(3))(V2(m)),
}

VMAP_ERRORS = {
    "dict-in_axes-missing-key": lambda m: m.vmap(lambda d: d["a"], in_axes={"a": 0})(
        {"a": V2(m), "b": V2(m)}
    ),
    "in_axes-too-short": lambda m: m.vmap(lambda a, b: a + b, in_axes=(0,))(V2(m), V2(m)),
    "in_axes-too-long": lambda m: m.vmap(lambda a, b: a + b, in_axes=(0, 0, 0))(V2(m), V2(m)),
    "in_axes-str": lambda m: m.vmap(lambda a: a, in_axes="a")(V2(m)),
    "sizes-differ": lambda m: m.vmap(lambda a, b: a + b)(V2(m), m.ones((3, 3))),
    "out_axes-too-short": lambda m: m.vmap(lambda a: (a, a.sum()), out_axes=(1,))(V2(m)),
    "out_axes-too-long": lambda m: m.vmap(lambda a: (a, a.sum()), out_axes=(1, 0, 0))(V2(m)),
    "out_axes-dict-mismatch": lambda m: m.vmap(lambda a: {"p": a, "q": a}, out_axes={"p": 1})(
        V2(m)
    ),
    "output-int": lambda m: m.vmap(lambda a: (a, 3))(V2(m)),
}

VMAP_INDEX_ERRORS = {
    "out_axes-out-of-range": lambda m: m.vmap(lambda a: a * 2, out_axes=2)(V2(m)),
    "scalar-input": lambda m: m.vmap(lambda a: a)(m.array(1.0)),
    "in_axes-out-of-range": lambda m: m.vmap(lambda a: a, in_axes=2)(V2(m)),
}


@pytest.mark.parametrize("case", list(VMAP))
def test_vmap_axes_as_mlx(case):
    same(VMAP[case])


@pytest.mark.parametrize("case", list(VMAP_ERRORS))
def test_vmap_axes_errors_as_mlx(case):
    same(VMAP_ERRORS[case], ValueError)


@pytest.mark.parametrize("case", list(VMAP_INDEX_ERRORS))
def test_vmap_axes_out_of_range_raise_index_error_as_mlx(case):
    same(VMAP_INDEX_ERRORS[case], IndexError)


# ----------------------------------------------------------------------------- masked updates
def _masked(v, mask_of=lambda m, a: a > 2, in_axes=0):
    def f(m):
        def g(a, *rest):
            a = a * 1
            a[mask_of(m, a)] = v(m) if callable(v) else v
            return a

        return m.vmap(g, in_axes=in_axes)(V2(m))

    return f


MASKED = {
    "vmap-scalar": _masked(0.0),
    "vmap-values-in-order": _masked(
        lambda m: m.array([7.0, 8.0, 9.0]), lambda m, a: m.array([True, False, True])
    ),
    "vmap-traced-mask-array-value": _masked(lambda m: m.array(5.0)),
}


@pytest.mark.parametrize("case", list(MASKED))
def test_masked_setitem_under_vmap_as_mlx(case):
    same(MASKED[case])


def _setitem(mask, v):
    def f(m):
        a = m.arange(6, dtype=m.float32).reshape(2, 3)
        a[m.array(mask)] = v(m) if callable(v) else v
        return a

    return f


@pytest.mark.parametrize(
    "mask,v",
    [
        ([[True, False, True], [False, True, True]], 9.0),
        ([[True, False, True], [False, True, True]], lambda m: m.array([10.0, 11, 12, 13])),
        ([[True, False, True], [False, True, True]], lambda m: m.arange(10, 16).astype(m.float32)),
        ([False, True], lambda m: m.array([10.0, 11, 12])),
        ([True, True], lambda m: m.array([[10.0, 11, 12], [13, 14, 15]])),
        ([[False] * 3] * 2, lambda m: m.array([10.0, 11])),
    ],
    ids=["scalar", "values", "more-values", "row-broadcast", "rows", "none-selected"],
)
def test_masked_setitem_as_mlx(mask, v):
    same(_setitem(mask, v))


@pytest.mark.parametrize(
    "mask,v",
    [
        ([[True, False, True], [False, True, True]], lambda m: m.ones((2, 3))),
        ([False, True], lambda m: m.array([10.0, 11])),
        ([True, False, True], 1.0),
    ],
    ids=["too-many-axes", "not-broadcastable", "mask-shape"],
)
def test_masked_setitem_errors_as_mlx(mask, v):
    same(_setitem(mask, v), ValueError)


def test_grad_through_masked_setitem_as_mlx():
    def f(m):
        def loss(a, v):
            a = a * 1
            a[m.array([True, False, True])] = v
            return (a * m.array([1.0, 2, 3])).sum()

        return m.grad(loss, argnums=(0, 1))(_x(m), m.array([5.0, 6.0]))

    same(f)


@pytest.mark.nuvec_only  # MLX cannot differentiate through a mask computed from the input
def test_grad_through_a_traced_masked_setitem():
    def loss(a):
        a = a * 1
        a[a > 2] = 0.0
        return (a * mx.array([1.0, 2, 3])).sum()

    np.testing.assert_array_equal(np.array(mx.grad(loss)(_x(mx))), [1.0, 2.0, 0.0])


# ----------------------------------------------------------------------------- custom_function
def _custom_tuple(m):
    seen = []

    @m.custom_function
    def f(t, s):
        return t["a"] * t["b"] * s

    @f.vjp
    def f_vjp(primals, cot, out):
        seen.append((type(primals).__name__, sorted(primals[0])))
        (t, s) = primals
        return ({"a": cot * t["b"] * s, "b": cot * t["a"] * s}, cot * t["a"] * t["b"])

    g = m.grad(lambda a, b, c: f({"a": a, "b": b}, c).sum(), argnums=(0, 1, 2))(
        _x(m), _x(m) * 2, _x(m) * 3
    )
    return g, seen


def _custom_vmap_one_arg(m):
    seen = []

    @m.custom_function
    def f(t):
        return t[0] * t[1]

    @f.vmap
    def f_vmap(inputs, axes):
        seen.append((type(inputs).__name__, axes))
        return inputs[0] * inputs[1], axes[0]

    return m.vmap(lambda a, b: f((a, b)), in_axes=(0, None))(V2(m), _x(m)), seen


def _custom_vmap_array(m):
    seen = []

    @m.custom_function
    def f(a):
        return a * 2, a * 3

    @f.vmap
    def f_vmap(inputs, axes):
        seen.append(axes)
        return (m.cos(inputs), inputs * 3), (axes, axes)

    return m.vmap(f, in_axes=1)(V2(m)), seen


def _custom_jvp_tuple(m):
    @m.custom_function
    def f(t):
        return t[0] * t[1]

    @f.jvp
    def f_jvp(primals, tangents):
        (a, b), (ta, tb) = primals, tangents  # as MLX: the one argument itself
        return ta * b + tb * a

    return m.jvp(lambda a, b: f((a, b)), [_x(m), _x(m) * 2], [m.ones(3), m.zeros(3)])


def _custom_extra_grads(m):
    @m.custom_function
    def f(a, b):
        return a * b

    @f.vjp
    def f_vjp(primals, cot, out):
        return cot * primals[1], cot * primals[0], cot

    return m.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(_x(m), _x(m) * 2)


@pytest.mark.parametrize(
    "f",
    [
        _custom_tuple,
        _custom_vmap_one_arg,
        _custom_vmap_array,
        _custom_jvp_tuple,
        _custom_extra_grads,
    ],
    ids=lambda f: f.__name__,
)
def test_custom_function_rules_get_mlx_structures(f):
    same(f)


def test_custom_vmap_rule_returning_no_pair_raises_as_mlx():
    def f(m):
        g = m.custom_function(lambda a: a * 2)
        g.vmap(lambda inputs, axes: inputs * 2)
        return m.vmap(g)(V2(m))

    same(f, ValueError)


# ----------------------------------------------------------------------------- scan gradients
SCANS = [
    (op, rev, inc, ax)
    for op in ["cummax", "cummin", "cumprod", "cumsum"]
    for rev in (False, True)
    for inc in (True, False)
    for ax in (0, 1)
]
SCAN_X = [[1.0, -2.0, 3.0, 0.5], [2.0, 2.0, -1.0, 4.0]]


@pytest.mark.parametrize(
    "op,rev,inc,ax", SCANS, ids=[f"{o}-r{int(r)}-i{int(i)}-a{a}" for o, r, i, a in SCANS]
)
def test_scan_gradients_as_mlx(op, rev, inc, ax):
    def f(m):
        w = m.arange(8).reshape(2, 4).astype(m.float32)
        scan = lambda a: getattr(m, op)(a, axis=ax, reverse=rev, inclusive=inc)  # noqa: E731
        return m.grad(lambda a: (scan(a) * w).sum())(m.array(SCAN_X))

    same(f)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("rev", [False, True])
def test_exclusive_extreme_scan_gradients_match_finite_differences(op, rev):
    x = np.array([[1.0, -2.0, 3.0, 0.5], [2.5, 2.0, -1.0, 4.0]])
    w = np.arange(8.0).reshape(2, 4)

    def loss(a):
        r = getattr(mx, op)(a, axis=1, reverse=rev, inclusive=False)
        return (mx.where(mx.isinf(r), 0.0, r) * mx.array(w, dtype=mx.float32)).sum()

    g = np.array(mx.grad(loss)(mx.array(x, dtype=mx.float32)))
    eps, fd = 1e-3, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        hi = float(loss(mx.array(x + d, dtype=mx.float32)))
        lo = float(loss(mx.array(x - d, dtype=mx.float32)))
        fd[i] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(g, fd, atol=1e-2)


# ----------------------------------------------------------------------------- scatter gradients
IDX = [0, 2, 2, 4]
SCATTER_X = [1.0, 5.0, 3.0, 0.0, 2.0]


def _at(meth, index, v):
    def f(m):
        w = m.arange(1, 6).astype(m.float32)
        i = index(m) if callable(index) else index
        loss = lambda a, b: (getattr(a.at[i], meth)(b) * w).sum()  # noqa: E731
        return m.grad(loss, argnums=(0, 1))(m.array(SCATTER_X), m.array(v))

    return f


AT = {
    "maximum-indices": _at("maximum", lambda m: m.array(IDX), [4.0, 3.0, 1.0, 2.0]),
    "minimum-indices": _at("minimum", lambda m: m.array(IDX), [4.0, 3.0, 1.0, 2.0]),
    "maximum-scalar": _at("maximum", lambda m: m.array(IDX), 2.5),
    "maximum-tie-with-x": _at("maximum", lambda m: m.array([1]), [5.0]),
    "minimum-tie-with-x": _at("minimum", lambda m: m.array([1]), [5.0]),
    "maximum-slice": _at("maximum", slice(1, 4), [4.0, 3.0, 1.0]),
    "minimum-slice": _at("minimum", slice(1, 4), [4.0, 3.0, 1.0]),
    "multiply-slice": _at("multiply", slice(1, 4), [4.0, 3.0, 1.0]),
    "divide-slice": _at("divide", slice(1, 4), [4.0, 3.0, 2.0]),
    "add-indices": _at("add", lambda m: m.array(IDX), [4.0, 3.0, 1.0, 2.0]),
}


@pytest.mark.parametrize("case", list(AT))
def test_at_update_gradients_as_mlx(case):
    same(AT[case])


_V = {
    "plain": [4.0, 3.0, 1.0, 2.0],
    "zeros": [0.0, 3.0, 0.0, 2.0],
    "one-zero": [4.0, 0.0, 3.0, 2.0],
}
_AT_FD = [
    (meth, name)
    for meth in ["multiply", "divide", "maximum", "minimum"]
    for name in _V
    if meth != "divide" or name == "plain"  # no division by zero
]


@pytest.mark.nuvec_only  # MLX has no vjp for scatter_prod with index arrays, nor scatter jvps
@pytest.mark.parametrize("meth,vname", _AT_FD, ids=[f"{m}-{n}" for m, n in _AT_FD])
def test_at_update_gradients_match_finite_differences(meth, vname):
    v = _V[vname]
    x0, v0 = np.array(SCATTER_X), np.array(v)
    w = mx.arange(1, 6).astype(mx.float32)

    def loss(a, b):
        return (getattr(a.at[mx.array(IDX)], meth)(b) * w).sum()

    gx, gv = mx.grad(loss, argnums=(0, 1))(
        mx.array(x0, dtype=mx.float32), mx.array(v0, dtype=mx.float32)
    )
    # jvp is the transpose: <jvp(t), 1> = <grad, t> for the loss's linearization
    tx, tv = np.linspace(0.5, 1.5, 5), np.linspace(-1.0, 1.0, 4)
    _, (jt,) = mx.jvp(
        loss,
        [mx.array(x0, dtype=mx.float32), mx.array(v0, dtype=mx.float32)],
        [mx.array(tx, dtype=mx.float32), mx.array(tv, dtype=mx.float32)],
    )
    np.testing.assert_allclose(
        float(jt), np.dot(np.array(gx), tx) + np.dot(np.array(gv), tv), rtol=1e-4, atol=1e-4
    )
    if meth in ("maximum", "minimum"):
        return  # ties are not differentiable: the finite differences below assume none
    eps = 1e-3
    for arr, g, k in ((x0, np.array(gx), 0), (v0, np.array(gv), 1)):
        for i in range(arr.size):
            d = np.zeros_like(arr)
            d[i] = eps
            args_hi = [x0 + d, v0] if k == 0 else [x0, v0 + d]
            args_lo = [x0 - d, v0] if k == 0 else [x0, v0 - d]
            hi = float(loss(*[mx.array(a, dtype=mx.float32) for a in args_hi]))
            lo = float(loss(*[mx.array(a, dtype=mx.float32) for a in args_lo]))
            np.testing.assert_allclose(g[i], (hi - lo) / (2 * eps), rtol=1e-2, atol=1e-2)


def _tree_vjp_cases():
    """custom_function vjp rules of one tree argument return that argument's cotangent tree."""

    @mx.custom_function
    def listed(xs):
        return xs[0] * xs[1]

    @listed.vjp
    def _(primals, cotangent, output):
        return [cotangent * primals[1], cotangent * primals[0] * 10]

    @mx.custom_function
    def keyed(d):
        return d["a"] * d["b"]

    @keyed.vjp
    def _(primals, cotangent, output):
        return {"a": cotangent * primals["b"], "b": cotangent * primals["a"] * 10}

    @mx.custom_function
    def mixed(xs, y):
        return xs[0] * y

    @mixed.vjp
    def _(primals, cotangent, output):
        xs, y = primals
        return ([cotangent * y * 10], cotangent * xs[0])

    return [
        (lambda a, b: listed([a, b]), (3.0, 20.0)),
        (lambda a, b: keyed({"a": a, "b": b}), (3.0, 20.0)),
        (lambda a, b: mixed([a], b), (30.0, 2.0)),
    ]


@pytest.mark.parametrize("case", range(3))
def test_custom_vjp_of_one_tree_argument_as_mlx(case):
    f, expected = _tree_vjp_cases()[case]
    ga, gb = mx.grad(f, argnums=(0, 1))(mx.array(2.0), mx.array(3.0))
    assert (ga.item(), gb.item()) == expected
