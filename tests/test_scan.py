"""cumsum, cumprod, cummax, cummin and logcumsumexp against NumPy: every dtype with MLX's result
dtypes, any axis (negative, None), reverse and exclusive scans, empty, 0-d and non-contiguous
inputs, the array methods, bad axes; differential checks against MLX where it is installed."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from _impl import IS_MLX, mx
from helpers import (
    ALL,
    FLOATS,
    INTS,
    NP,
    assert_array_equal_np,
    np_values,
    round_to_bf16,
    seeded_rng,
    to_mx,
    to_np,
)
from test_sort import assert_all_equal, outputs_per_thread_count

OPS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")
HALF = ("float16", "bfloat16")


def result_dtype(op, name):
    if op == "cumsum" and name == "bool":
        return "int32"
    if op == "logcumsumexp" and name not in FLOATS + ("complex64",):
        return "float32"
    return name


def sample(name, shape, rng, op):
    if name == "bool":
        return rng.random(shape) < (0.9 if op == "cumprod" else 0.5)
    if op == "cumprod":  # small magnitudes keep products finite
        v = (
            rng.choice([1.0, 1.0, -1.0, 2.0, 0.5], shape)
            if name in FLOATS
            else rng.integers(-2, 3, shape)
        )
    elif name in INTS:
        v = rng.integers(0 if name.startswith("u") else -100, 100, shape)
    else:
        v = rng.standard_normal(shape) * 3
    if name == "complex64":
        v = v + 1j * (
            rng.standard_normal(shape) if op != "cumprod" else rng.choice([0.0, 0.5, -1.0], shape)
        )
    return np_values(v, name)


def identity(op, dt):
    """The value an exclusive scan starts from."""
    if op == "cumsum":
        return 0
    if op == "cumprod":
        return 1
    high = op == "cummin"
    if dt == np.bool_:
        return high
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.max if high else info.min
    if dt.kind == "c":
        return complex(np.inf, np.inf) if high else complex(-np.inf, -np.inf)
    return np.inf if high else -np.inf


def reference(op, x, name, axis, reverse=False, inclusive=True):
    """NumPy's sequential scan in the dtype the kernel computes in (float32 for half types)."""
    out_name = result_dtype(op, name)
    if axis is None:
        x, axis = x.reshape(-1), 0
    dt = np.dtype(np.float32 if out_name in HALF else NP[out_name])
    if op == "logcumsumexp" and out_name != "complex64":
        dt = np.dtype(np.float64)
    xc = x.astype(dt)
    if reverse:
        xc = np.flip(xc, axis)
    with np.errstate(all="ignore"):
        if op == "cumsum":
            r = np.cumsum(xc, axis=axis, dtype=dt)
        elif op == "cumprod":
            r = (
                np.logical_and.accumulate(xc, axis=axis)
                if dt == np.bool_
                else np.cumprod(xc, axis=axis, dtype=dt)
            )
        elif op == "cummax":
            r = np.maximum.accumulate(xc, axis=axis)
        elif op == "cummin":
            r = np.minimum.accumulate(xc, axis=axis)
        elif dt.kind == "c":
            r = np.log(np.cumsum(np.exp(xc.astype(np.complex128)), axis=axis))
        else:
            r = np.logaddexp.accumulate(xc, axis=axis)
    if not inclusive and r.shape[axis]:
        first = np.full_like(
            np.take(r, [0], axis=axis), identity(op, r.dtype if op != "logcumsumexp" else dt)
        )
        if op == "logcumsumexp":
            first[...] = -np.inf
        r = np.concatenate([first, np.take(r, np.arange(r.shape[axis] - 1), axis=axis)], axis=axis)
    if reverse:
        r = np.flip(r, axis)
    if out_name == "bfloat16":
        r = round_to_bf16(r)
    elif out_name == "float16":
        r = r.astype(np.float16)
    return r, out_name


def tolerance(op, out_name):
    if op == "logcumsumexp":
        return {"float16": 2e-3, "bfloat16": 1e-2}.get(out_name, 1e-5)
    if IS_MLX and out_name in FLOATS + ("complex64",):
        return 1e-5 if out_name in ("float32", "float64", "complex64") else 1e-2
    if out_name == "complex64":
        return 1e-6  # complex products round like the element-wise multiply, not NumPy's
    return 0.0  # the same sequential order as NumPy: bit-identical


def check(op, x, name, axis, X=None, **kw):
    X = to_mx(x, name) if X is None else X
    want, out_name = reference(op, x, name, axis, **kw)
    got = getattr(mx, op)(X, axis=axis, **kw)
    rtol = atol = tolerance(op, out_name)
    if IS_MLX and out_name in HALF:  # MLX accumulates half types in their own precision
        finite = np.abs(want[np.isfinite(want)].astype(np.float64))
        atol = 0.05 * max(1.0, finite.max() if finite.size else 1.0)
    assert_array_equal_np(
        got, want, rtol=rtol, atol=atol, dtype=out_name, err_msg=f"{op} {name} axis={axis} {kw}"
    )


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", ALL)
def test_all_dtypes(op, name):
    rng = seeded_rng(op, name)
    x = sample(name, (5, 70), rng, op)
    for axis in (None, 0, 1, -1, -2):
        check(op, x, name, axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("inclusive", [False, True])
@pytest.mark.parametrize("name", ["float32", "int8", "uint16", "float16", "bool", "float64"])
def test_reverse_and_exclusive(op, reverse, inclusive, name):
    rng = seeded_rng("flags", op, name, reverse, inclusive)
    x = sample(name, (4, 3, 19), rng, op)
    for axis in (-1, 1, 0):
        check(op, x, name, axis, reverse=reverse, inclusive=inclusive)


@pytest.mark.parametrize("op", ["cumsum", "cummax", "cumprod"])
# (MLX accumulates bfloat16 in bfloat16: long rows drift far from the float32 reference.)
@pytest.mark.parametrize(
    "name", ["float32", "int32", pytest.param("bfloat16", marks=pytest.mark.nuvec_only)]
)
def test_rows_of_many_lengths(op, name):
    """Rows interleaved in groups along the last axis: any row count, any length."""
    rng = seeded_rng("rows", op, name)
    for rows, n in [(1, 1), (3, 1000), (9, 65), (17, 128), (8, 5000), (1, 70_000), (300, 7)]:
        check(op, sample(name, (rows, n), rng, op), name, -1)


@pytest.mark.parametrize("op", OPS)
def test_non_contiguous_inputs(op):
    rng = seeded_rng("views", op)
    x = sample("float32", (30, 40), rng, op)
    X = mx.array(x)
    check(op, np.ascontiguousarray(x.T), "float32", -1, X=X.T)
    check(op, np.ascontiguousarray(x.T), "float32", 0, X=X.T)
    check(op, x[::3, 1::2], "float32", -1, X=X[::3, 1::2])
    check(op, x[::-2], "float32", 0, X=X[::-2], reverse=True)


@pytest.mark.parametrize("op", OPS)
def test_empty_and_scalar(op):
    f = getattr(mx, op)
    assert f(mx.zeros((3, 0)), axis=1).shape == (3, 0)
    assert f(mx.zeros((0, 4)), axis=0).shape == (0, 4)
    assert f(mx.zeros((0, 4))).shape == (0,)
    check(op, np.array(0.5, np.float32), "float32", None)
    with pytest.raises(IndexError):
        f(mx.array(2.0), axis=0)


@pytest.mark.parametrize("op", OPS)
def test_array_methods(op):
    x = sample("float32", (3, 8), seeded_rng("method", op), op)
    X = mx.array(x)
    for kw in ({}, {"axis": 1}, {"axis": 0, "reverse": True}, {"axis": -1, "inclusive": False}):
        want, _ = reference(
            op,
            x,
            "float32",
            kw.get("axis"),
            reverse=kw.get("reverse", False),
            inclusive=kw.get("inclusive", True),
        )
        assert_array_equal_np(getattr(X, op)(**kw), want, rtol=1e-5, atol=1e-5, dtype="float32")


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_dtype_converts_first(op):
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    got = getattr(mx, op)(mx.array(x), axis=1, dtype=mx.float32)
    want = np.cumsum(x, axis=1) if op == "cumsum" else np.cumprod(x, axis=1)
    assert_array_equal_np(got, want.astype(np.float32), dtype="float32")
    assert getattr(mx, op)(mx.array([True, True]), dtype=mx.bool_).dtype == (
        mx.int32 if op == "cumsum" else mx.bool_
    )


def test_integer_scans_wrap():
    assert_array_equal_np(
        mx.cumsum(mx.array([100, 100, 100], mx.int8)), np.array([100, -56, 44], np.int8)
    )
    assert_array_equal_np(
        mx.cumprod(mx.array([300, 300, 300], mx.uint16)),
        np.cumprod(np.array([300, 300, 300], np.uint16), dtype=np.uint16),
    )
    big = np.array([2**62, 4, 3], np.int64)
    assert_array_equal_np(mx.cumprod(mx.array(big)), np.cumprod(big))


@pytest.mark.parametrize("op", ["cummax", "cummin", "cumsum", "logcumsumexp"])
def test_nan_propagates(op):
    x = np.array([1.0, np.nan, 3.0, -np.inf, np.inf], np.float32)
    check(op, x, "float32", 0)


def test_logcumsumexp_infinities():
    x = np.array([[np.inf, np.inf, -np.inf], [-np.inf, -np.inf, 1.0]], np.float32)
    check("logcumsumexp", x, "float32", 1)


@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6), data=st.data())
def test_hypothesis_shapes_axes(shape, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    op = data.draw(st.sampled_from(OPS))
    name = data.draw(st.sampled_from(["float32", "int16", "bool", "float64"]))
    reverse, inclusive = data.draw(st.booleans()), data.draw(st.booleans())
    x = sample(name, shape, seeded_rng("hyp", shape, axis, op, name), op)
    check(op, x, name, axis, reverse=reverse, inclusive=inclusive)


@pytest.mark.parametrize("op", OPS)
def test_bad_axis(op):
    for axis in (2, -3):
        with pytest.raises(IndexError):
            getattr(mx, op)(mx.zeros((2, 3)), axis=axis)
    if not IS_MLX:
        with pytest.raises(mx.AxisError) as info:
            getattr(mx, op)(mx.zeros((2, 3)), axis=2)
        assert info.value.op_name == op


@pytest.mark.nuvec_only
def test_same_bits_for_any_thread_count():
    x = mx.array(seeded_rng("threads").standard_normal((37, 5001)).astype(np.float32))
    assert_all_equal(
        outputs_per_thread_count(lambda: [np.array(mx.cumsum(x, axis=a)) for a in (0, 1, None)])
    )


@pytest.mark.skipif(IS_MLX, reason="compares nuvec with MLX")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("name", ["float32", "int8", "bool", "uint32", "float16", "bfloat16"])
def test_matches_mlx(op, name):
    mlx = pytest.importorskip("mlx.core")
    x = sample(name, (6, 33), seeded_rng("mlx", op, name), op)
    src = x.astype(np.float32) if name == "bfloat16" else x
    M = mlx.array(src).astype(getattr(mlx, "bool_" if name == "bool" else name))
    X = to_mx(x, name)
    for kw in ({"axis": 1}, {"axis": 0, "reverse": True}, {"axis": 1, "inclusive": False}, {}):
        m = getattr(mlx, op)(M, **kw)
        n = getattr(mx, op)(X, **kw)
        assert str(n.dtype).split(".")[-1] == str(m.dtype).split(".")[-1]
        m = np.array(m.astype(mlx.float32) if m.dtype == mlx.bfloat16 else m)
        # MLX accumulates half types in their own precision, nuvec in float32.
        tol = 0.1 if name in HALF else 1e-5
        np.testing.assert_allclose(
            to_np(n).astype(np.float64), m.astype(np.float64), rtol=tol, atol=tol
        )
