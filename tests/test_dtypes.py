"""Dtypes: the 14x14 promotion table of COMPAT.md, weak Python scalars, dtype objects
(size, names, equality) and the dtype category hierarchy (`issubdtype`)."""

import itertools
import operator

import numpy as np
import pytest

from _impl import mx
from helpers import (
    ALL,
    FLOATS,
    ITEMSIZE,
    MX,
    PROMOTE,
    SINTS,
    UINTS,
    assert_array_equal_np,
    dtype_name,
)


def test_promotion_table_is_symmetric_and_complete():
    assert len(PROMOTE) == 14 * 14
    for a, b in itertools.product(ALL, ALL):
        assert PROMOTE[(a, b)] == PROMOTE[(b, a)], (a, b)
    for a in ALL:
        assert PROMOTE[(a, a)] == a


@pytest.mark.parametrize(
    "a,b",
    list(itertools.product(ALL, ALL)),
    ids=[f"{a}+{b}" for a, b in itertools.product(ALL, ALL)],
)
def test_promotion_table(a, b):
    expected = PROMOTE[(a, b)]
    x, y = mx.zeros((1,), MX[a]), mx.zeros((1,), MX[b])
    assert dtype_name((x + y).dtype) == expected
    assert dtype_name(mx.multiply(x, y).dtype) == expected
    assert dtype_name(mx.maximum(y, x).dtype) == expected
    assert dtype_name(mx.where(mx.array([True]), x, y).dtype) == expected
    # Comparisons promote their inputs but give bool.
    assert dtype_name((x < y).dtype) == "bool"


@pytest.mark.parametrize(
    "a,b",
    [
        ("uint64", "int8"),
        ("int8", "uint64"),
        ("uint8", "int8"),
        ("float16", "bfloat16"),
        ("uint32", "int32"),
        ("int64", "float16"),
        ("bool", "bfloat16"),
    ],
)
def test_promoted_values(a, b):
    """Both operands are converted to the promoted dtype before the op."""
    xa = np.array([1, 2, 3, 100]).astype(np.float64)
    xb = np.array([3, 0, 7, 27]).astype(np.float64)
    if a == "bool":
        xa = (xa > 1).astype(np.float64)
    x, y = mx.array(xa, dtype=MX[a]), mx.array(xb, dtype=MX[b])
    out = x + y
    res = PROMOTE[(a, b)]
    assert_array_equal_np(out, (xa + xb), rtol=1e-2 if res == "bfloat16" else 0, dtype=res)


# ----------------------------------------------------------------------------- weak scalars
def _weak_expected(dt, s):
    if isinstance(s, bool):
        return dt
    if isinstance(s, int):
        return "int32" if dt == "bool" else dt
    if isinstance(s, float):
        return dt if dt in FLOATS or dt == "complex64" else "float32"
    return "complex64"


@pytest.mark.parametrize("s", [True, 1, 1.5, 1j], ids=["True", "1", "1.5", "1j"])
@pytest.mark.parametrize("dt", ALL)
def test_weak_python_scalars(dt, s):
    x = mx.zeros((2,), MX[dt])
    expected = _weak_expected(dt, s)
    assert dtype_name((x + s).dtype) == expected
    assert dtype_name((s + x).dtype) == expected
    assert dtype_name(mx.add(x, s).dtype) == expected
    assert dtype_name(mx.multiply(s, x).dtype) == expected


@pytest.mark.parametrize(
    "expr,expected",
    [
        (lambda: mx.zeros((1,), mx.int8) + 1, "int8"),
        (lambda: mx.zeros((1,), mx.float16) + 1.5, "float16"),
        (lambda: mx.zeros((1,), mx.int8) + 1.5, "float32"),
        (lambda: mx.zeros((1,), mx.bool_) + True, "bool"),
        (lambda: mx.zeros((1,), mx.bool_) + 1, "int32"),
        (lambda: mx.zeros((1,), mx.uint8) - True, "uint8"),
        (lambda: mx.zeros((1,), mx.bfloat16) * 2.5, "bfloat16"),
        (lambda: mx.zeros((1,), mx.int64) * 2.0, "float32"),
        (lambda: mx.zeros((1,), mx.float16) + 1j, "complex64"),
        (lambda: mx.zeros((1,), mx.uint16) < 3, "bool"),
        # NumPy scalars take the array's dtype (np.float64, a Python float, is weak).
        (lambda: mx.zeros((1,), mx.float16) + np.float32(1.5), "float16"),
        (lambda: mx.zeros((1,), mx.int8) + np.int64(3), "int8"),
        (lambda: mx.zeros((1,), mx.int8) + np.float64(1.5), "float32"),
        # A 0-d array is not a scalar: it promotes normally.
        (lambda: mx.zeros((1,), mx.float16) + mx.array(1.5), "float32"),
        (lambda: mx.zeros((1,), mx.int8) + mx.array(1), "int32"),
    ],
    ids=[
        "i8+1",
        "f16+1.5",
        "i8+1.5",
        "b+True",
        "b+1",
        "u8-True",
        "bf16*2.5",
        "i64*2.0",
        "f16+1j",
        "u16<3",
        "f16+np.f32",
        "i8+np.i64",
        "i8+np.f64",
        "f16+0d",
        "i8+0d",
    ],
)
def test_weak_scalar_examples(expr, expected):
    assert dtype_name(expr().dtype) == expected


def test_weak_scalar_values():
    assert_array_equal_np(mx.array([1, 2], mx.int8) + 1, np.array([2, 3], np.int8))
    assert_array_equal_np(mx.array([1.0, 2.0], mx.float16) * 1.5, np.array([1.5, 3.0], np.float16))
    assert_array_equal_np(mx.array([1, 2], mx.int8) + 1.5, np.array([2.5, 3.5], np.float32))
    assert_array_equal_np(mx.array([True, False]) + True, np.array([True, True]))
    assert_array_equal_np(mx.array([True, False]) * 2, np.array([2, 0], np.int32))
    # A large float scalar overflows a float16 array to inf, not an error.
    assert_array_equal_np(mx.array([1.0], mx.float16) + 1e6, np.array([np.inf], np.float16))


@pytest.mark.parametrize(
    "dt,value",
    [
        ("int8", 1000),
        ("int8", -129),
        ("uint8", 256),
        ("uint8", -1),
        ("int16", 2**15),
        ("uint32", -1),
        ("int32", 2**31),
        ("int8", 2**40),
    ],
)
def test_weak_int_scalar_out_of_range_raises(dt, value):
    x = mx.zeros((2,), MX[dt])
    with pytest.raises(ValueError):
        x + value
    with pytest.raises(ValueError):
        mx.multiply(x, value)


@pytest.mark.parametrize(
    "dt,value",
    [("int8", 127), ("int8", -128), ("uint8", 255), ("int16", -(2**15)), ("uint32", 2**32 - 1)],
)
def test_weak_int_scalar_at_the_limits(dt, value):
    x = mx.zeros((2,), MX[dt])
    info = np.iinfo(getattr(np, dt))
    assert info.min <= value <= info.max
    assert_array_equal_np(x + value, np.full((2,), value, getattr(np, dt)))


# ----------------------------------------------------------------------------- array(...)
@pytest.mark.parametrize(
    "value,expected",
    [
        (1, "int32"),
        (-5, "int32"),
        (2**40, "int64"),
        (1.0, "float32"),
        (True, "bool"),
        (1 + 2j, "complex64"),
        ([1, 2], "int32"),
        ([1.0, 2], "float32"),
        ([True, 2], "int32"),
        ([True, False], "bool"),
        (np.float64(1.5), "float32"),
        (np.float32(1.5), "float32"),
        (np.int64(5), "int64"),
        (np.arange(3), "int64"),
        (np.ones(3), "float32"),
        (np.ones(3, np.float16), "float16"),
        (np.ones(2, np.uint16), "uint16"),
        (np.array([1 + 1j]), "complex64"),
        (np.array([True]), "bool"),
    ],
    ids=lambda v: repr(v) if not isinstance(v, np.ndarray) else f"np.{v.dtype}",
)
def test_default_dtypes_of_array(value, expected):
    assert dtype_name(mx.array(value).dtype) == expected


def test_float64_needs_to_be_asked_for():
    assert dtype_name(mx.array(np.ones(3)).dtype) == "float32"
    x = mx.array(np.array([1.0 + 2**-40, 2.0]), dtype=mx.float64)
    assert dtype_name(x.dtype) == "float64"
    assert_array_equal_np(x, np.array([1.0 + 2**-40, 2.0]))
    assert dtype_name(mx.array([1.5, 2.5], dtype=mx.float64).dtype) == "float64"
    assert dtype_name(mx.array(1.5, mx.float64).dtype) == "float64"


# ----------------------------------------------------------------------------- dtype objects
@pytest.mark.parametrize("dt", ALL)
def test_dtype_size_and_names(dt):
    d = MX[dt]
    assert d.size == ITEMSIZE[dt]
    assert dt in str(d)
    assert dt in repr(d)
    assert mx.zeros((3,), d).itemsize == ITEMSIZE[dt]
    assert mx.zeros((3,), d).nbytes == 3 * ITEMSIZE[dt]


def test_float32_size():
    assert mx.float32.size == 4
    assert mx.float64.size == 8
    assert mx.bfloat16.size == 2


def test_dtype_equality_and_hash():
    for a, b in itertools.product(ALL, ALL):
        assert (MX[a] == MX[b]) == (a == b)
        assert (MX[a] != MX[b]) == (a != b)
    table = {MX[d]: d for d in ALL}
    assert len(table) == 14
    assert table[mx.zeros((1,), mx.uint16).dtype] == "uint16"
    assert mx.zeros((1,)).dtype == mx.float32


CATEGORIES = [
    "generic",
    "number",
    "integer",
    "signedinteger",
    "unsignedinteger",
    "inexact",
    "floating",
    "complexfloating",
]


def _categories_of(dt):
    if dt == "bool":
        return {"generic"}
    if dt in UINTS:
        return {"generic", "number", "integer", "unsignedinteger"}
    if dt in SINTS:
        return {"generic", "number", "integer", "signedinteger"}
    if dt in FLOATS:
        return {"generic", "number", "inexact", "floating"}
    return {"generic", "number", "inexact", "complexfloating"}


@pytest.mark.parametrize("dt", ALL)
def test_issubdtype_dtype_in_category(dt):
    cats = _categories_of(dt)
    for c in CATEGORIES:
        assert mx.issubdtype(MX[dt], getattr(mx, c)) == (c in cats), (dt, c)


def test_issubdtype_dtype_vs_dtype():
    for a, b in itertools.product(ALL, ALL):
        assert mx.issubdtype(MX[a], MX[b]) == (a == b), (a, b)


CATEGORY_PARENTS = {
    "generic": {"generic"},
    "number": {"number", "generic"},
    "integer": {"integer", "number", "generic"},
    "signedinteger": {"signedinteger", "integer", "number", "generic"},
    "unsignedinteger": {"unsignedinteger", "integer", "number", "generic"},
    "inexact": {"inexact", "number", "generic"},
    "floating": {"floating", "inexact", "number", "generic"},
    "complexfloating": {"complexfloating", "inexact", "number", "generic"},
}


@pytest.mark.parametrize("c", CATEGORIES)
def test_issubdtype_category_vs_category(c):
    for parent in CATEGORIES:
        assert mx.issubdtype(getattr(mx, c), getattr(mx, parent)) == (
            parent in CATEGORY_PARENTS[c]
        ), (c, parent)
    # A category is never a sub-dtype of a concrete dtype.
    assert not mx.issubdtype(getattr(mx, c), mx.float32)


def test_issubdtype_matches_numpy_for_shared_dtypes():
    for dt in ALL:
        if dt == "bfloat16":
            continue
        npd = np.dtype(getattr(np, dt if dt != "bool" else "bool_"))
        for c in CATEGORIES:
            assert mx.issubdtype(MX[dt], getattr(mx, c)) == np.issubdtype(npd, getattr(np, c)), (
                dt,
                c,
            )


def test_astype_changes_only_the_dtype():
    x = mx.array([[1.7, -2.2], [3.5, 250.0]])
    for dt in ALL:
        y = x.astype(MX[dt])
        assert y.shape == (2, 2)
        assert dtype_name(y.dtype) == dt


@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.sub])
def test_bool_arithmetic_keeps_bool(op):
    x, y = mx.array([True, False, True, False]), mx.array([True, True, False, False])
    out = op(x, y)
    assert dtype_name(out.dtype) == "bool"
    a, b = np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0])
    assert_array_equal_np(out, op(a, b).astype(bool))
