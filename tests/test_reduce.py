"""Reductions against NumPy (float64 / int64 references): every op of the table below over all
its dtypes, axis sets (None, ints, negative, tuples, empty), keepdims, empty and 0-d arrays and
non-contiguous inputs (transposed, stepped, reversed); Hypothesis for shapes and axes; sizes
that reach the engine's chunked paths; accuracy of float32 sums; errors; MLX side by side."""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import IS_MLX, mx
from helpers import (
    ALL,
    FLOATS,
    INTS,
    NP,
    assert_array_equal_np,
    dtype_name,
    np_values,
    seeded_rng,
    to_mx,
)


# ----------------------------------------------------------------------------- the op table
def _sum_dtype(dt):
    return {
        "bool": "int32",
        "int8": "int32",
        "int16": "int32",
        "uint8": "uint32",
        "uint16": "uint32",
    }.get(dt, dt)


def _float_result(dt):
    return dt if dt in FLOATS + ("complex64",) else "float32"


def _var_result(dt):
    return "float32" if dt == "complex64" else _float_result(dt)


def _wide(x):
    """x in the widest NumPy type of its kind: the reference computes there."""
    if x.dtype.kind == "b":
        return x.astype(np.int64)
    if x.dtype.kind == "u":
        return x.astype(np.uint64)
    if x.dtype.kind == "i":
        return x.astype(np.int64)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    return x.astype(np.float64)


def _logsumexp(x, axis, keepdims):
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def _softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@dataclass
class Red:
    name: str
    ref: Callable  # ref(x_wide, axis, keepdims)
    dtypes: tuple
    result: Callable  # input dtype name -> result dtype name
    empty_ok: bool = True  # defined over zero elements
    floaty: bool = False  # values are statistics (tolerance even for integer inputs)
    positive: bool = False  # sample values near 1 (products)

    def call(self, x, axis, keepdims):
        return getattr(mx, self.name)(x, axis=axis, keepdims=keepdims)


def _kw(f):
    return lambda x, axis, keepdims: f(x, axis=axis, keepdims=keepdims)


REDUCTIONS = [
    Red("sum", _kw(np.sum), ALL, _sum_dtype),
    Red("prod", _kw(np.prod), ALL, _sum_dtype, positive=True),
    Red("max", _kw(np.max), ALL, lambda d: d, empty_ok=False),
    Red("min", _kw(np.min), ALL, lambda d: d, empty_ok=False),
    Red("all", _kw(np.all), ALL, lambda d: "bool"),
    Red("any", _kw(np.any), ALL, lambda d: "bool"),
    Red("mean", _kw(np.mean), ALL, _float_result, floaty=True),
    Red("var", _kw(np.var), ALL, _var_result, floaty=True),
    Red("std", _kw(np.std), ALL, _var_result, floaty=True),
    Red(
        "logsumexp",
        _logsumexp,
        tuple(d for d in ALL if d != "complex64"),
        _float_result,
        empty_ok=False,
        floaty=True,
    ),
]
BY_NAME = {r.name: r for r in REDUCTIONS}


def mlx_differs(red, dt):
    """Where MLX 0.32 is wrong or less precise, nuvec follows NumPy."""
    # MLX subtracts the max of bool and unsigned inputs in their own dtype (it wraps) and
    # computes float64 logsumexp in single precision.
    return red.name == "logsumexp" and (dt in ("bool", "float64") or dt.startswith("uint"))


CASES = [
    pytest.param(
        r, d, id=f"{r.name}-{d}", marks=[pytest.mark.nuvec_only] if mlx_differs(r, d) else []
    )
    for r in REDUCTIONS
    for d in r.dtypes
]


def sample(rng, shape, dt, positive=False):
    n = int(np.prod(shape))
    if dt == "bool":
        v = rng.random(n) < 0.6
    elif dt in INTS:
        lo = 0 if dt.startswith("u") else -3
        v = rng.integers(1 if positive else lo, 3 if positive else 4, n)
    elif positive:
        v = rng.uniform(0.7, 1.3, n)
    else:
        v = rng.uniform(-2, 2, n)
    if dt == "complex64":
        v = v + 1j * (rng.uniform(0.7, 1.3, n) if positive else rng.uniform(-2, 2, n))
    return np_values(v.reshape(shape), dt)


def reference(red, x, dt, axis, keepdims):
    ax = tuple(axis) if isinstance(axis, list) else axis
    with np.errstate(all="ignore"):
        r = np.asarray(red.ref(_wide(x), ax, keepdims))
    res = red.result(dt)
    if res in INTS:
        return r.astype(NP[res])  # wraps as the framework does
    return r


def tolerance(red, res, x, axis):
    """rtol and atol for result dtype `res`, scaled by the magnitudes summed."""
    eps = {
        "float16": 2e-3,
        "bfloat16": 1.6e-2,
        "float32": 4e-6,
        "float64": 1e-12,
        "complex64": 4e-6,
    }.get(res)
    if eps is None:
        return 0.0, 0.0
    ax = tuple(axis) if isinstance(axis, list) else axis
    with np.errstate(all="ignore"):
        scale = float(np.max(np.sum(np.abs(_wide(x).astype(np.complex128)), axis=ax), initial=1.0))
    if red.name == "prod":
        scale = 1.0
    return 2 * eps, eps * scale


def check(red, x, X, dt, axis, keepdims, what=""):
    got = red.call(X, axis, keepdims)
    ref = reference(red, x, dt, axis, keepdims)
    rtol, atol = tolerance(red, red.result(dt), x, axis)
    assert_array_equal_np(
        got,
        ref,
        rtol,
        atol,
        dtype=red.result(dt),
        err_msg=f"{red.name}[{dt}] axis={axis} keepdims={keepdims} {what}",
    )


# ----------------------------------------------------------------------------- values and dtypes
AXES_3D = [None, 0, 1, 2, -1, -3, (0, 1), (1, 2), (0, 2), [2, 0], (0, 1, 2)]


@pytest.mark.parametrize("red,dt", CASES)
def test_reduction_matches_numpy(red, dt):
    rng = seeded_rng("reduce", red.name, dt)
    x = sample(rng, (3, 4, 5), dt, red.positive)
    X = to_mx(x, dt)
    for axis in AXES_3D:
        for keepdims in (False, True):
            check(red, x, X, dt, axis, keepdims)


LAYOUTS = {
    "transposed": lambda X: X.T,
    "stepped": lambda X: X[::2, 1:],
    "reversed": lambda X: X[::-1, ::-3],
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("red,dt", CASES)
def test_reduction_of_views(red, dt, layout):
    rng = seeded_rng("reduce-views", red.name, dt, layout)
    base = sample(rng, (9, 14), dt, red.positive)
    X = LAYOUTS[layout](to_mx(base, dt))
    x = LAYOUTS[layout](base)
    for axis in (None, 0, 1, -1):
        check(red, x, X, dt, axis, False, layout)


@pytest.mark.nuvec_only  # MLX 0.32: prod of no elements is 0, all() of an empty int32 array False
@pytest.mark.parametrize("red", [r for r in REDUCTIONS if r.empty_ok], ids=lambda r: r.name)
def test_empty_reductions(red):
    for dt in ("float32", "int32", "bool"):
        x = np.zeros((0, 3), NP[dt])
        X = to_mx(x, dt)
        for axis in (None, 0, 1):
            check(red, x, X, dt, axis, False, "empty")


@pytest.mark.parametrize("red", REDUCTIONS, ids=lambda r: r.name)
def test_0d(red):
    x = np.array(1.5, np.float32)
    check(red, x, mx.array(x), "float32", None, False, "0-d")
    check(red, x, mx.array(x), "float32", None, True, "0-d")


@given(data=st.data())
def test_hypothesis_shapes_and_axes(data):
    ndim = data.draw(st.integers(1, 4), "ndim")
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim), "shape"))
    axes = data.draw(
        st.lists(st.integers(-ndim, ndim - 1), max_size=ndim, unique_by=lambda a: a % ndim)
        | st.none(),
        "axes",
    )
    keepdims = data.draw(st.booleans(), "keepdims")
    red = data.draw(st.sampled_from(REDUCTIONS), "op")
    dt = data.draw(st.sampled_from(red.dtypes), "dtype")
    if axes == [] and (red.name in ("sum", "prod") and dt != _sum_dtype(dt)):
        axes = None  # MLX keeps small integer dtypes when no axis is reduced; nuvec widens
    rng = seeded_rng("hyp", shape, str(axes), dt)
    x = sample(rng, shape, dt, red.positive)
    X = to_mx(x, dt)
    if data.draw(st.booleans(), "transposed"):
        x, X = x.T, X.T
    check(red, x, X, dt, axes, keepdims, "hypothesis")


# ----------------------------------------------------------------------------- engine paths
BIG = [
    ((3, 70_001), 1),  # rows longer than one task's chunk
    ((200_001,), None),  # one long row
    ((5000, 3), 0),  # few columns, many rows: rows cut into chunks
    ((1500, 2100), 0),  # several column tiles with a ragged edge
    ((4, 700, 33), 1),  # (outer, reduced, inner) blocks
    ((6, 5, 700), (0, 2)),  # reduced axes interleaved with a kept one
]


@pytest.mark.parametrize("shape,axis", BIG, ids=[str(s) for s, _ in BIG])
@pytest.mark.parametrize(
    "name,dt",
    [
        ("sum", "float32"),
        ("sum", "float16"),
        ("sum", "bfloat16"),
        ("sum", "int8"),
        ("sum", "uint64"),
        ("max", "float32"),
        ("min", "int16"),
        ("prod", "float64"),
        ("any", "float32"),
        ("all", "uint8"),
        ("mean", "float16"),
        ("logsumexp", "float32"),
    ],
)
def test_large_paths(shape, axis, name, dt):
    red = BY_NAME[name]
    rng = seeded_rng("big", shape, name, dt)
    x = sample(rng, shape, dt, red.positive)
    if name == "prod":
        x = np.exp(rng.uniform(-1e-3, 1e-3, shape))
    if name == "all":
        x = np.ones(shape, np.uint8)
        x.flat[len(x.flat) // 2] = 0
    check(red, x, to_mx(x, dt), dt, axis, False, "large")


@pytest.mark.nuvec_only  # MLX sums serially
def test_float32_sum_is_pairwise_accurate():
    # Serial float32 accumulation of 0.1 drifts by about 1e-2 relative at this size.
    n = 1 << 22
    x = np.full(n, 0.1, np.float32)
    exact = n * float(np.float32(0.1))
    assert abs(mx.sum(mx.array(x)).item() - exact) <= 1e-6 * exact
    cols = np.full((n // 8, 8), 0.1, np.float32)
    got = np.array(mx.sum(mx.array(cols), axis=0))
    assert np.all(np.abs(got - exact / 8) <= 1e-6 * exact / 8)


@pytest.mark.nuvec_only  # MLX accumulates half types in their own precision
def test_half_sums_accumulate_in_float32():
    x = np.full(4096, 1.0, np.float16)
    for dt in ("float16", "bfloat16"):
        assert mx.sum(to_mx(x, dt)).item() == 4096.0  # float16 accumulation stops at 2048
        assert mx.mean(to_mx(np.full(100_000, 1.0, np.float32), dt)).item() == 1.0


def test_integer_sums_wrap():
    x = np.array([2**31 - 1, 1], np.int32)
    assert mx.sum(mx.array(x)).item() == -(2**31)
    assert mx.sum(mx.array(np.array([200, 100], np.uint8))).item() == 300
    assert mx.sum(mx.array(np.array([2**32 - 1, 2], np.uint32))).item() == 1


# ----------------------------------------------------------------------------- NaN and infinities
def test_nan_and_inf():
    x = mx.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf]])
    assert np.isnan(np.array(mx.max(x, axis=1))[0]) and np.isnan(np.array(mx.min(x, axis=1))[0])
    assert np.array(mx.max(x, axis=1))[1] == -np.inf
    lse = np.array(mx.logsumexp(x, axis=1))
    assert np.isnan(lse[0]) and lse[1] == -np.inf
    assert mx.logsumexp(mx.array([np.inf, 1.0])).item() == np.inf
    assert mx.argmax(mx.array([1.0, np.nan, 3.0, np.nan])).item() == 1
    assert mx.argmin(mx.array([1.0, np.nan, 3.0, np.nan])).item() == 1
    assert mx.any(mx.array([0.0, np.nan])).item() is True


# ----------------------------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name, dt):
    rng = seeded_rng(name, dt)
    x = sample(rng, (4, 5, 6), dt)  # few distinct values: ties must give the first index
    X = to_mx(x, dt)
    f = getattr(np, name)
    for axis in (None, 0, 1, 2, -1):
        for keepdims in (False, True):
            ref = f(x, axis=axis, keepdims=keepdims)
            got = getattr(mx, name)(X, axis=axis, keepdims=keepdims)
            assert_array_equal_np(got, ref, dtype="uint32", err_msg=f"{name}[{dt}] axis={axis}")
    for layout, view in LAYOUTS.items():
        base = sample(rng, (9, 14), dt)
        got = getattr(mx, name)(view(to_mx(base, dt)), axis=0)
        assert_array_equal_np(got, f(view(base), axis=0), dtype="uint32", err_msg=layout)


def test_arg_reduction_large():
    rng = seeded_rng("arg-large")
    x = rng.standard_normal((3000, 1100)).astype(np.float32)
    X = mx.array(x)
    for axis in (0, 1, None):
        assert_array_equal_np(mx.argmax(X, axis=axis), np.argmax(x, axis=axis), dtype="uint32")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 16, 17, 33, 1000, 49152])
def test_arg_reductions_along_rows(n, dt):
    # Rows of logits: the first extreme whatever the lane it falls in, NaN first, ties and zeros
    # of either sign first, rows of -inf.
    rng = seeded_rng("arg-rows", n)
    x = rng.standard_normal((6, n)).astype(dt)
    x[1] = np.round(x[1])
    x[2, rng.integers(n, size=2)] = np.nan
    x[3] = -np.inf
    x[4] = 0.0
    x[4, rng.integers(n, size=n // 2)] = -0.0
    x[5, -1] = 9.0
    for name in ("argmax", "argmin"):
        assert_array_equal_np(
            getattr(mx, name)(mx.array(x), axis=-1), getattr(np, name)(x, axis=-1), dtype="uint32"
        )


# ----------------------------------------------------------------------------- softmax
@pytest.mark.parametrize(
    "dt", ["float16", "bfloat16", "float32", pytest.param("float64", marks=pytest.mark.nuvec_only)]
)  # MLX: float32
def test_softmax(dt):
    rng = seeded_rng("softmax", dt)
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}[dt]
    for shape, axis in [
        ((7, 33), -1),
        ((7, 33), None),
        ((3, 4, 5), (1, 2)),
        ((3, 4, 5), 0),
        ((3, 4, 5), (0, 2)),
        ((2, 40_000), -1),
        ((5,), 0),
    ]:
        x = np_values(rng.uniform(-20, 20, shape), dt)
        got = mx.softmax(to_mx(x, dt), axis=axis, precise=True)
        ax = tuple(range(len(shape))) if axis is None else axis
        assert_array_equal_np(
            got, _softmax(x, ax), tol, tol * 1e-2, dtype=dt, err_msg=f"softmax {shape} axis={axis}"
        )
    x = np_values(rng.uniform(-5, 5, (6, 10)), dt)
    got = mx.softmax(to_mx(x, dt).T, axis=-1, precise=True)
    assert_array_equal_np(got, _softmax(x.T, -1), tol, tol * 1e-2, dtype=dt, err_msg="transposed")


def test_softmax_is_safe_from_overflow():
    x = mx.array([[1000.0, 1000.0], [-1000.0, -1001.0]])
    np.testing.assert_allclose(
        np.array(mx.softmax(x, axis=-1)), [[0.5, 0.5], [0.7310586, 0.26894143]], rtol=1e-6
    )
    np.testing.assert_allclose(
        mx.logsumexp(mx.array([1000.0, 1000.0])).item(), 1000 + np.log(2), rtol=1e-7
    )


@pytest.mark.nuvec_only
def test_softmax_of_integers_is_float32():
    # MLX returns int32 zeros along axis 0 of an integer array; nuvec always computes in float32.
    got = mx.softmax(mx.array([[1, 2], [3, 4]]), axis=0)
    assert_array_equal_np(got, _softmax(np.array([[1, 2], [3, 4]]), 0), 1e-6, dtype="float32")


# ----------------------------------------------------------------------------- methods
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "all", "any", "logsumexp"])
def test_methods(name):
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 4
    X = mx.array(x)
    red = BY_NAME[name]
    for axis, keepdims in ((None, False), (0, True), ((0, 1), False), (-1, False)):
        got = getattr(X, name)(axis=axis, keepdims=keepdims)
        ref = red.call(X, axis, keepdims)
        assert_array_equal_np(got, np.array(ref), dtype=dtype_name(ref.dtype))
    assert_array_equal_np(
        getattr(X, name)(1), np.array(red.call(X, 1, False)), dtype=dtype_name(ref.dtype)
    )


def test_methods_var_std_arg():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) ** 2
    X = mx.array(x)
    assert_array_equal_np(X.var(1, True, 1), x.var(1, keepdims=True, ddof=1), 1e-6, dtype="float32")
    assert_array_equal_np(X.std(axis=0, ddof=1), x.std(0, ddof=1), 1e-6, dtype="float32")
    assert_array_equal_np(X.argmax(axis=1), x.argmax(1), dtype="uint32")
    assert_array_equal_np(X.argmin(), np.argmin(x), dtype="uint32")
    assert_array_equal_np(X.argmax(0, True), x.argmax(0, keepdims=True), dtype="uint32")


def test_var_ddof():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], np.float32)
    for ddof in (0, 1, 2):
        assert_array_equal_np(mx.var(mx.array(x), axis=1, ddof=ddof), x.var(1, ddof=ddof), 1e-6)
        assert_array_equal_np(mx.std(mx.array(x), axis=1, ddof=ddof), x.std(1, ddof=ddof), 1e-6)


@pytest.mark.nuvec_only
def test_var_ddof_at_least_n_divides_by_zero_as_numpy():
    with np.errstate(all="ignore"):
        ref = np.array([[1.0, 2.0], [3.0, 3.0]], np.float32).var(1, ddof=2)
    assert_array_equal_np(mx.var(mx.array([[1.0, 2.0], [3.0, 3.0]]), axis=1, ddof=2), ref)


# ----------------------------------------------------------------------------- errors
def test_bad_axes():
    X = mx.zeros((2, 3))
    for red in REDUCTIONS:
        for bad in (2, -3, (0, 5)):
            with pytest.raises(IndexError):
                red.call(X, bad, False)
        with pytest.raises(ValueError):
            red.call(X, (0, -2), False)  # the same axis twice
    for name in ("argmax", "argmin"):
        with pytest.raises(IndexError):
            getattr(mx, name)(X, axis=2)
    with pytest.raises(IndexError):
        mx.softmax(X, axis=2)
    with pytest.raises(ValueError):
        mx.softmax(X, axis=(1, 1))
    with pytest.raises(IndexError):
        mx.sum(mx.array(1.0), axis=0)
    with pytest.raises(TypeError):
        mx.sum(X, axis=1.5)


@pytest.mark.nuvec_only
def test_errors_are_op_errors():
    X = mx.zeros((2, 3))
    with pytest.raises(mx.AxisError):
        mx.sum(X, axis=2)
    with pytest.raises(mx.OpError, match="duplicate"):
        mx.mean(X, axis=(0, 0))
    with pytest.raises(mx.OpError, match="zero elements"):
        mx.max(mx.zeros((0, 3)), axis=0)
    with pytest.raises(mx.OpError, match="empty"):
        mx.argmax(mx.zeros((0, 3)), axis=1)
    with pytest.raises(mx.OpError):
        mx.logsumexp(mx.zeros((0,)))
    with pytest.raises(mx.OpError, match="complex"):
        mx.softmax(mx.zeros((3,), dtype=mx.complex64))


def test_empty_extremes_raise():
    for f in (mx.max, mx.min):
        with pytest.raises(ValueError):
            f(mx.zeros((0, 3)), axis=0)
        assert f(mx.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(ValueError):
        mx.argmin(mx.zeros((0,)))


def test_allclose_and_array_equal_still_reduce():
    a = mx.array([1.0, 2.0])
    assert mx.allclose(a, a + 1e-9).item() is True
    assert mx.array_equal(a, mx.array([1.0, 3.0])).item() is False


# ----------------------------------------------------------------------------- MLX side by side
@pytest.fixture(scope="module")
def mlx():
    if IS_MLX:
        pytest.skip("nothing to compare when the suite runs on MLX")
    return pytest.importorskip("mlx.core")


MLX_CASES = [p for p in CASES if not p.marks]


@pytest.mark.parametrize("red,dt", MLX_CASES)
def test_matches_mlx(mlx, red, dt):
    rng = seeded_rng("mlx", red.name, dt)
    x = sample(rng, (4, 6), dt, red.positive)
    mdt = getattr(mlx, "bool_" if dt == "bool" else dt)
    M = mlx.array(x, dtype=mlx.float32).astype(mdt) if dt == "bfloat16" else mlx.array(x, dtype=mdt)
    for axis in (None, 0, -1, (0, 1)):
        got = red.call(to_mx(x, dt), axis, False)
        ref = getattr(mlx, red.name)(M, axis=axis)
        assert str(ref.dtype).split(".")[-1] == dtype_name(got.dtype), f"{red.name}[{dt}]"
        r = np.array(ref.astype(mlx.float32) if ref.dtype == mlx.bfloat16 else ref)
        rtol, atol = tolerance(red, red.result(dt), x, axis)
        assert_array_equal_np(
            got, r, 2 * rtol, 2 * atol, dtype=red.result(dt), err_msg=f"{red.name}[{dt}]"
        )
    for name in ("argmax", "argmin"):
        got, ref = getattr(mx, name)(to_mx(x, dt), axis=1), getattr(mlx, name)(M, axis=1)
        np.testing.assert_array_equal(np.array(got), np.array(ref))


def test_softmax_matches_mlx(mlx):
    x = np.random.default_rng(0).standard_normal((5, 300)).astype(np.float32)
    for axis in (-1, 0, None):
        np.testing.assert_allclose(
            np.array(mx.softmax(mx.array(x), axis=axis)),
            np.array(mlx.softmax(mlx.array(x), axis=axis)),
            rtol=1e-5,
            atol=1e-9,
        )


# ----------------------------------------------------------------------------- every kernel build
_ISA_SCRIPT = r"""
import json, sys
import numpy as np
import nuvec as mx
x = np.random.default_rng(3).uniform(-3, 3, (37, 1037)).astype(np.float32)  # ragged widths
out = {"isa": mx._core._cpu_isa()}
for dt in ("float32", "float16", "bfloat16", "int8"):
    X = mx.array(x * (20 if dt == "int8" else 1), dtype=getattr(mx, dt))
    for axis in (0, 1, None):
        for op in ("sum", "max", "min", "prod"):
            r = getattr(mx, op)(X[:, :5] if op == "prod" else X, axis=axis).astype(mx.float64)
            out[f"{op}-{dt}-{axis}"] = np.asarray(r).tolist()
    if dt != "int8":
        out[f"softmax-{dt}"] = np.asarray(mx.softmax(X, axis=-1).astype(mx.float32)).tolist()
        out[f"logsumexp-{dt}"] = np.asarray(mx.logsumexp(X, axis=-1).astype(mx.float32)).tolist()
json.dump(out, sys.stdout)
"""


@pytest.mark.nuvec_only
@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_kernel_builds_agree(isa):
    """The lower builds (chosen with NUVEC_CPU_ISA) agree with the default one."""
    runs = {}
    for which in (isa, None):
        env = dict(os.environ)
        env.pop("NUVEC_CPU_ISA", None)
        if which:
            env["NUVEC_CPU_ISA"] = which
        r = subprocess.run(
            [sys.executable, "-c", _ISA_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        runs[which] = json.loads(r.stdout)
    low, default = runs[isa], runs[None]
    if low["isa"] == default["isa"]:
        pytest.skip(f"the processor's build is {default['isa']}")
    for key, ref in default.items():
        if key == "isa":
            continue
        tol = 2e-2 if "bfloat16" in key else 2e-3 if "float16" in key else 2e-5
        np.testing.assert_allclose(low[key], ref, rtol=tol, atol=tol, err_msg=f"{isa} {key}")


@pytest.mark.parametrize("op", ["exp", "sigmoid", "softmax", "logsumexp"])
def test_masked_lanes_do_not_change_their_neighbours(op):
    # exp of lanes below -104 (masks' -inf and finfo.min among them) is +0 and is set without
    # computing it (csrc/backend/cpu/simd/expsin.h, exp_or_zero): every other element of a vector
    # that holds such lanes has the bits it has among ordinary values, and the row results are
    # NumPy's.
    rng = np.random.default_rng(11)
    x = rng.uniform(-120.0, 80.0, (7, 300)).astype(np.float32)
    masked = x.copy()
    masked[:, ::3] = -np.inf
    masked[:, 1::7] = np.finfo(np.float32).min
    masked[2] = -np.inf
    masked[2, 5] = 1.0
    keep = np.isfinite(masked) & (masked > np.finfo(np.float32).min)
    if op in ("exp", "sigmoid"):
        f = getattr(mx, op)
        got = np.asarray(f(mx.array(masked)))
        alone = np.asarray(f(mx.array(np.where(keep, masked, 0.0).astype(np.float32))))
        np.testing.assert_array_equal(got[keep], alone[keep])
        if op == "exp":
            assert (got[~keep] == 0).all() and not np.signbit(got[~keep]).any()
        return
    f = getattr(mx, op)
    got = np.asarray(f(mx.array(masked), axis=-1)).astype(np.float64)
    m64 = np.where(keep, masked, -np.inf).astype(np.float64)
    if op == "softmax":
        want = np.exp(m64 - m64.max(-1, keepdims=True))
        want /= want.sum(-1, keepdims=True)
        assert (got[~keep] == 0).all() and got[2, 5] == 1.0
    else:
        want = np.log(np.exp(m64 - m64.max(-1, keepdims=True)).sum(-1)) + m64.max(-1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int32", "int8"])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_a_row_reduces_to_the_same_bits_alone_and_among_others(op, dt):
    """Rows of the last axis are reduced several at once (their loads interleaved): each row's
    result has the bits of that row reduced alone, whatever its neighbours and their count."""
    rng = seeded_rng(f"rows-at-once-{op}-{dt}")
    for n in (1, 7, 8, 33, 256, 257, 1000, 4099):
        for rows in (1, 3, 4, 5, 9):
            a = rng.standard_normal((rows, n)).astype(np.float32)
            if op == "prod":
                a = 1 + a / 64  # no overflow to inf or underflow to 0 over long rows
            x = (
                mx.array(a).astype(getattr(mx, dt))
                if dt != "int8"
                else mx.array((a * 20).astype(np.int8))
            )
            together = np.asarray(getattr(mx, op)(x, axis=-1).astype(mx.float32))
            for r in range(rows):
                alone = np.asarray(getattr(mx, op)(x[r : r + 1], axis=-1).astype(mx.float32))
                assert together[r].tobytes() == alone[0].tobytes(), (n, rows, r)
