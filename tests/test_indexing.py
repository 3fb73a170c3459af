"""Indexing against NumPy: x[index] and x[index] = value with ints, slices (negative and stepped),
Ellipsis, None, integer arrays (lists, NumPy arrays, framework arrays; NumPy's placement rules for
the broadcast index dimensions) and boolean masks; x.at[index] updates that accumulate over
repeated indices; take, take_along_axis, put_along_axis; slice and slice_update with array-valued
starts; nonzero; zero-copy views; errors.

MLX lacks boolean masks, NumPy arrays as indices, nonzero and index checking (it reads whatever
lies outside the array, or crashes), so those tests are nuvec_only.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _impl import mx
from helpers import MX, NP, assert_array_equal_np, np_values, seeded_rng, to_mx

X_DTYPES = ("int32", "float32", "bool", "int8", "uint16", "bfloat16", "complex64")
INDEX_DTYPES = ("int32", "int64", "int16", "int8")


def data_for(shape, dt):
    """Values that tell positions apart (as far as the dtype allows), as NumPy."""
    pos = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return values_for(pos, dt)


def values_for(pos, dt, salt=0):
    """Values determined by positions: writing them twice to one place writes the same value."""
    pos = np.asarray(pos, dtype=np.int64)
    if dt == "bool":
        return (pos + salt) % 3 == 0
    v = (pos * 7 + 3 + salt) % 97
    if dt.startswith("uint"):
        return v.astype(NP[dt])
    v = v - 40
    if dt == "complex64":
        return (v + 1j * ((pos + salt) % 5)).astype(np.complex64)
    return np_values(v, dt).reshape(pos.shape)


def scalar_for(dt):
    return {"bool": True, "complex64": 1.5 - 2j}.get(
        dt,
        2.5 if dt in ("float32", "bfloat16", "float16") else (7 if dt.startswith("uint") else -7),
    )


def laid_out(a, dt, layout):
    """A framework array equal to `a`: row-contiguous, a transposed view, or a stepped view."""
    if layout == "transposed" and a.ndim >= 2:
        return mx.transpose(to_mx(a.T.copy(order="C"), dt))
    if layout == "stepped" and a.ndim >= 1:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        big[..., 1::2] = a
        return to_mx(big, dt)[..., 1::2]
    return to_mx(a, dt)


# ----------------------------------------------------------------------------- index generation
class IntArray:
    """An integer index array and how it is handed to the framework."""

    def __init__(self, values, dtype, how):
        self.values, self.dtype, self.how = values, dtype, how

    def framework(self):
        if self.how == "list":
            return self.values.tolist()
        if self.how == "numpy":
            return self.values.astype(self.dtype)
        return mx.array(self.values, dtype=MX[self.dtype])

    def numpy(self):
        return self.values.astype(np.int64)

    def __repr__(self):
        return f"{self.how}[{self.dtype}]({self.values.tolist()})"


class Mask:
    def __init__(self, values, how):
        self.values, self.how = values, how

    def framework(self):
        return self.values if self.how == "numpy" else mx.array(self.values)

    def numpy(self):
        return self.values

    def __repr__(self):
        return f"mask-{self.how}({self.values.astype(int).tolist()})"


def framework_index(index):
    conv = lambda c: c.framework() if isinstance(c, (IntArray, Mask)) else c  # noqa: E731
    return tuple(conv(c) for c in index) if isinstance(index, tuple) else conv(index)


def numpy_index(index):
    conv = lambda c: c.numpy() if isinstance(c, (IntArray, Mask)) else c  # noqa: E731
    return tuple(conv(c) for c in index) if isinstance(index, tuple) else conv(index)


BROADCAST_SHAPES = [(), (1,), (2,), (3,), (2, 3), (1, 3), (2, 1), (3, 1, 2)]


@st.composite
def index_problems(draw, extended):
    """(shape, dtype, layout, index). `extended` adds boolean masks and NumPy index arrays."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    dt = draw(st.sampled_from(X_DTYPES))
    layout = draw(st.sampled_from(["contiguous", "transposed", "stepped"]))
    bshape = draw(st.sampled_from(BROADCAST_SHAPES))
    hows = ["list", "array"] + (["numpy"] if extended else [])
    comps, axis = [], 0
    while axis < ndim:
        kinds = ["int", "slice", "slice", "array", "array"] + (["mask"] if extended else [])
        kind = draw(st.sampled_from(kinds))
        n = shape[axis]
        if kind == "int":
            comps.append(draw(st.integers(-n, n - 1)))
            axis += 1
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
            comps.append(slice(draw(bound), draw(bound), step))
            axis += 1
        elif kind == "array":
            k = draw(st.integers(0, len(bshape)))
            ashape = tuple(d if draw(st.booleans()) else 1 for d in bshape[len(bshape) - k :])
            size = int(np.prod(ashape, dtype=np.int64))
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size))
            how = draw(st.sampled_from(hows))
            if not ashape and how == "list":
                how = "array"  # a 0-d index array cannot be a list
            comps.append(
                IntArray(
                    np.array(vals, dtype=np.int64).reshape(ashape),
                    draw(st.sampled_from(INDEX_DTYPES)),
                    how,
                )
            )
            axis += 1
        else:
            m = draw(st.integers(1, ndim - axis))
            mshape = shape[axis : axis + m]
            size = int(np.prod(mshape))
            bits = draw(st.lists(st.booleans(), min_size=size, max_size=size))
            comps.append(
                Mask(np.array(bits, dtype=bool).reshape(mshape), draw(st.sampled_from(hows[1:])))
            )
            axis += m
    # A run of components becomes `...` (covering the same axes), or a tail is dropped.
    shape_of_index = draw(st.sampled_from(["plain", "ellipsis", "truncated"]))
    if shape_of_index == "ellipsis":
        i = draw(st.integers(0, len(comps)))
        j = draw(st.integers(i, len(comps)))
        comps[i:j] = [Ellipsis]
    elif shape_of_index == "truncated":
        comps = comps[: draw(st.integers(0, len(comps)))]
    if not extended and _empty_ellipsis_between_advanced(comps, ndim):
        comps.remove(Ellipsis)  # MLX treats these as adjacent; see test_empty_ellipsis_*
    for _ in range(draw(st.integers(0, 2))):
        comps.insert(draw(st.integers(0, len(comps))), None)
    if len(comps) == 1 and draw(st.booleans()):
        index = comps[0]  # a bare index, not a tuple
    else:
        index = tuple(comps)
    return shape, dt, layout, index


def _empty_ellipsis_between_advanced(comps, ndim):
    """An Ellipsis that stands for no axis, with advanced indices on both sides: NumPy counts them
    as not adjacent (the index dimensions go first); MLX as adjacent."""
    if Ellipsis not in comps or not any(isinstance(c, (IntArray, Mask)) for c in comps):
        return False
    consumed = sum(c.values.ndim if isinstance(c, Mask) else 1 for c in comps if c is not Ellipsis)
    at = comps.index(Ellipsis)
    advanced = lambda c: isinstance(c, (IntArray, Mask, int)) and not isinstance(c, bool)  # noqa: E731
    return (
        consumed == ndim
        and any(advanced(c) for c in comps[:at])
        and any(advanced(c) for c in comps[at + 1 :])
    )


def numpy_getitem(a, index):
    """NumPy's result, or the exception NumPy raises (e.g. masks whose count does not broadcast
    against the other index arrays)."""
    try:
        return a[numpy_index(index)], None
    except IndexError as e:
        return None, e


def _check_getitem(problem):
    shape, dt, layout, index = problem
    a = data_for(shape, dt)
    x = laid_out(a, dt, layout)
    expected, err = numpy_getitem(a, index)
    msg = f"{shape} {dt} {layout} index={index!r}"
    if err is not None:
        with pytest.raises((IndexError, ValueError)):
            mx.eval(x[framework_index(index)])
        return
    assert_array_equal_np(x[framework_index(index)], expected, dtype=dt, err_msg=msg)
    assert_array_equal_np(x, a, dtype=dt, err_msg=msg + " (input changed)")


@settings(max_examples=60)
@given(index_problems(extended=False))
def test_getitem_matches_numpy(problem):
    _check_getitem(problem)


@pytest.mark.nuvec_only  # boolean masks and NumPy index arrays
@settings(max_examples=60)
@given(index_problems(extended=True))
def test_getitem_with_masks_and_numpy_indices_matches_numpy(problem):
    _check_getitem(problem)


def _advanced_apart(index):
    """Whether the advanced indices (arrays, and ints beside them) are separated by a slice,
    None or Ellipsis (NumPy then puts the index dimensions first)."""
    comps = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(c, (IntArray, Mask)) for c in comps):
        return False
    at = [i for i, c in enumerate(comps) if isinstance(c, (IntArray, Mask, int))]
    return at[-1] - at[0] + 1 != len(at)


def _check_setitem(problem, value_kind, mlx_safe=False):
    shape, dt, layout, index = problem
    # MLX expects the value laid out wrongly when the advanced indices stand apart (see
    # test_setitem_fixed_cases[int-apart-from-array]); the nuvec_only property covers those.
    assume(not (mlx_safe and _advanced_apart(index)))
    a = data_for(shape, dt)
    positions, err = numpy_getitem(np.arange(a.size).reshape(shape), index)
    if err is not None:
        return  # an invalid index: covered by the getitem property
    # MLX crashes (SIGFPE) on some empty regions, and refuses a bare `None` index in setitem.
    assume(not (mlx_safe and (positions.size == 0 or index is None)))
    repeated = len(np.unique(positions)) != positions.size
    if value_kind == "broadcast" and (repeated or positions.ndim == 0):
        value_kind = "positional"  # a broadcast value writes different values to one place
    if value_kind == "scalar":
        value_np, value = scalar_for(dt), scalar_for(dt)
    elif value_kind == "positional":
        value_np = values_for(positions, dt, salt=11)
        value = to_mx(value_np, dt)
    else:  # the trailing dimensions of the region, some of them of size 1
        k = (positions.ndim + 1) // 2
        vshape = tuple(
            1 if i % 2 else d for i, d in enumerate(positions.shape[positions.ndim - k :])
        )
        value_np = values_for(np.arange(int(np.prod(vshape))).reshape(vshape), dt, salt=11)
        value = to_mx(value_np, dt)
    expected = a.copy()
    expected[numpy_index(index)] = value_np
    x = laid_out(a, dt, layout)
    same = x
    x[framework_index(index)] = value
    msg = f"{shape} {dt} {layout} index={index!r} value={value_kind}"
    assert same is x
    assert_array_equal_np(x, expected, dtype=dt, err_msg=msg)


@settings(max_examples=60)
@given(index_problems(extended=False), st.sampled_from(["scalar", "positional", "broadcast"]))
def test_setitem_matches_numpy(problem, value_kind):
    _check_setitem(problem, value_kind, mlx_safe=True)


@pytest.mark.nuvec_only  # boolean masks and NumPy index arrays
@settings(max_examples=60)
@given(index_problems(extended=True), st.sampled_from(["scalar", "positional", "broadcast"]))
def test_setitem_with_masks_and_numpy_indices_matches_numpy(problem, value_kind):
    _check_setitem(problem, value_kind)


# ----------------------------------------------------------------------------- fixed cases
A3 = np.arange(60).reshape(3, 4, 5)

# Index expressions every run checks (whatever Hypothesis draws); M(...) wraps a framework array.
M = lambda v, dt="int32": IntArray(np.array(v), dt, "array")  # noqa: E731
L = lambda v: IntArray(np.array(v), "int64", "list")  # noqa: E731

# fmt: off
FIXED = [
    ("int", 1), ("negative-int", -1), ("int-int-int", (2, -1, 0)),
    ("slice", slice(1, None)), ("negative-step", slice(None, None, -1)),
    ("stepped-bounds", (slice(-10, 10, 2), slice(3, 0, -2))), ("empty-slice", (slice(2, 1), 0)),
    ("ellipsis", (Ellipsis, 1)), ("ellipsis-middle", (0, Ellipsis, slice(None, None, 2))),
    ("none", (None, 1, None)), ("none-ellipsis", (Ellipsis, None)),
    ("list", L([0, 2, 0])), ("nested-list", L([[0, 2], [1, 1]])),
    ("array-negative", M([-1, -3, 0])), ("array-2d", (slice(None), M([[0, 1], [3, -4]]))),
    ("adjacent-arrays", (slice(None), M([0, 3]), M([1, -1]))),
    ("separated-arrays", (M([0, 2]), slice(None), M([1, 4]))),
    ("int-beside-array", (slice(None), 1, M([1, 2]))),
    ("int-apart-from-array", (1, slice(None), M([1, 2]))),
    ("none-and-array", (None, slice(None), M([1, 2]))),
    ("ellipsis-array-int", (Ellipsis, M([[1], [2]]), 0)),
    ("broadcast-arrays", (M([[0], [2]]), slice(1, 3), M([0, 4]))),
    ("0d-array", (M(1), slice(None), M([0, 1]))),
    ("int8-index", (M([-1, 2], "int8"),)), ("uint8-index", (M([1, 2], "uint8"),)),
    ("empty-index", M(np.zeros((0,), np.int64))),
]
# fmt: on


@pytest.mark.parametrize("index", [c[1] for c in FIXED], ids=[c[0] for c in FIXED])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_getitem_fixed_cases(index, layout):
    a = A3.astype(np.float32)
    x = laid_out(a, "float32", layout)
    assert_array_equal_np(x[framework_index(index)], a[numpy_index(index)], err_msg=repr(index))


# MLX expects the value in the wrong layout when an int and an array are separated by a slice.
SETITEM_FIXED = [
    pytest.param(c[1], marks=pytest.mark.nuvec_only) if c[0] == "int-apart-from-array" else c[1]
    for c in FIXED
]


@pytest.mark.parametrize("index", SETITEM_FIXED, ids=[c[0] for c in FIXED])
def test_setitem_fixed_cases(index):
    a = A3.astype(np.int32)
    region = a[numpy_index(index)]
    value = -np.arange(region.size, dtype=np.int32).reshape(region.shape) - 1
    if len(np.unique(np.arange(60).reshape(3, 4, 5)[numpy_index(index)])) != region.size:
        value = np.int32(-5)
    expected = a.copy()
    expected[numpy_index(index)] = value
    x = mx.array(a)
    x[framework_index(index)] = mx.array(value)
    assert_array_equal_np(x, expected, err_msg=repr(index))


@pytest.mark.nuvec_only  # MLX counts the advanced indices as adjacent (index dims in the middle)
@pytest.mark.parametrize(
    "index",
    [
        (slice(None), 0, Ellipsis, M([1, 0, 1])),
        (slice(None), M([1, 0, 1]), Ellipsis, 0),
        (None, 1, Ellipsis, M([1, 0, 1]), 0),
        (slice(None), M([[1], [2]]), Ellipsis, M([0, 1, 3])),
    ],
    ids=[
        "int-ellipsis-array",
        "array-ellipsis-int",
        "none-int-ellipsis-array-int",
        "array-ellipsis-array",
    ],
)
def test_empty_ellipsis_separates_advanced_indices(index):
    # NumPy: an Ellipsis between advanced indices separates them even when it stands for no axis,
    # so the broadcast index dimensions come first.
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    expected = a[numpy_index(index)]
    assert_array_equal_np(mx.array(a)[framework_index(index)], expected, err_msg=repr(index))
    x = mx.array(a)
    value = -np.arange(expected.size, dtype=np.int32).reshape(expected.shape) - 1
    x[framework_index(index)] = mx.array(value)
    b = a.copy()
    b[numpy_index(index)] = value
    assert_array_equal_np(x, b, err_msg=repr(index))


@pytest.mark.nuvec_only  # MLX refuses boolean masks
@pytest.mark.parametrize(
    "case",
    [
        "full",
        "first-axis",
        "two-axes-then-slice",
        "after-int",
        "with-array",
        "all-false",
        "numpy",
        "after-ellipsis",
        "with-none",
    ],
)
def test_boolean_masks(case):
    a = A3.astype(np.float32)
    x = mx.array(a)
    full = a % 7 < 3
    rows = np.array([True, False, True])
    plane = (np.arange(20).reshape(4, 5) % 3) == 0
    index = {
        "full": (mx.array(full), full),
        "first-axis": (mx.array(rows), rows),
        "two-axes-then-slice": (
            (mx.array(full[:, :, 0]), slice(1, None)),
            (full[:, :, 0], slice(1, None)),
        ),
        "after-int": ((1, mx.array(plane)), (1, plane)),
        "with-array": (
            (mx.array(rows), slice(None), mx.array([4, 0])),
            (rows, slice(None), np.array([4, 0])),
        ),
        "all-false": (mx.array(np.zeros(3, bool)), np.zeros(3, bool)),
        "numpy": (full, full),
        "after-ellipsis": ((Ellipsis, mx.array(plane[0] | True)), (Ellipsis, plane[0] | True)),
        "with-none": ((None, mx.array(rows), 2), (None, rows, 2)),
    }[case]
    assert_array_equal_np(x[index[0]], a[index[1]])
    # And as a setitem target.
    expected = a.copy()
    expected[index[1]] = -1.0
    x[index[0]] = -1.0
    assert_array_equal_np(x, expected)


@pytest.mark.nuvec_only  # MLX has no boolean masks
def test_mask_from_a_comparison():
    a = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    x = mx.array(a)
    assert_array_equal_np(x[x > 2], a[a > 2])
    x[x < 0] = 0
    b = a.copy()
    b[b < 0] = 0
    assert_array_equal_np(x, b)


@pytest.mark.nuvec_only  # MLX refuses leading size-1 dimensions beyond the region's rank
def test_setitem_value_with_extra_leading_ones():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.array(a)
    x[:, 1] = mx.array([[[10.0, 20.0, 30.0]]])
    a[:, 1] = np.array([[[10.0, 20.0, 30.0]]])
    assert_array_equal_np(x, a)


@pytest.mark.nuvec_only  # MLX does not take a list as the value
def test_setitem_value_from_a_list_and_numpy():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = mx.array(a)
    x[1] = [1, 2, 3, 4]
    x[2, ::2] = np.array([-1, -2], np.int64)
    a[1] = [1, 2, 3, 4]
    a[2, ::2] = [-1, -2]
    assert_array_equal_np(x, a)


@pytest.mark.parametrize("dt", ["int8", "float16", "bfloat16", "complex64", "bool"])
def test_setitem_value_is_cast_to_the_array_dtype(dt):
    a = data_for((2, 3), dt)
    x = to_mx(a, dt)
    x[0, 1] = mx.array(1, dtype=mx.int32) if dt != "bool" else mx.array(1.0)
    a[0, 1] = 1
    assert_array_equal_np(x, a, dtype=dt)


# ----------------------------------------------------------------------------- setitem semantics
def test_setitem_rebinds_and_leaves_other_arrays_alone():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.array(a)
    alias = x
    row = x[1]  # a view of the old array, evaluated
    mx.eval(row)
    col = x[:, 2]  # a lazy view of the old array
    doubled = x * 2  # a lazy computation on the old array
    x[1, 2] = 100.0
    assert alias is x  # the same Python object, now holding the new array
    b = a.copy()
    b[1, 2] = 100.0
    assert_array_equal_np(x, b)
    assert_array_equal_np(alias, b)
    assert_array_equal_np(row, a[1])
    assert_array_equal_np(col, a[:, 2])
    assert_array_equal_np(doubled, a * 2)


def test_setitem_on_a_view_leaves_the_base_alone():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    base = mx.array(a)
    mx.eval(base)
    v = base[1:, ::2]
    mx.eval(v)
    v[0, 0] = -1
    assert_array_equal_np(base, a)
    expected = a[1:, ::2].copy()
    expected[0, 0] = -1
    assert_array_equal_np(v, expected)


def test_setitem_repeatedly_in_a_loop():
    x = mx.zeros((5,), mx.int32)
    for i in range(5):
        x[i] = i * i
    assert_array_equal_np(x, np.arange(5, dtype=np.int32) ** 2)


# ----------------------------------------------------------------------------- .at updates
AT_REFS = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
}

# (id, x shape, index as (framework, numpy) builders, value shape or None for a scalar)
# fmt: off
AT_CASES = [
    ("repeated-1d", (6,), lambda: (mx.array([0, 2, 0, 5, 2, 0]),), lambda: (np.array([0, 2, 0, 5, 2, 0]),), (6,)),
    ("negative-scalar", (6,), lambda: (mx.array([-1, 5, 0, -6]),), lambda: (np.array([-1, 5, 0, -6]),), None),
    ("list", (6,), lambda: [1, 1, 3], lambda: [1, 1, 3], (3,)),
    ("rows-and-slice", (4, 3), lambda: (mx.array([1, 1, 3]), slice(0, 2)),
     lambda: (np.array([1, 1, 3]), slice(0, 2)), (3, 2)),
    ("broadcast-value", (4, 3), lambda: (mx.array([2, 2, 2]),), lambda: (np.array([2, 2, 2]),), (3,)),
    ("same-element", (4, 3), lambda: (mx.array([0, 0, 2]), mx.array([1, 1, 1])),
     lambda: (np.array([0, 0, 2]), np.array([1, 1, 1])), (3,)),
    ("2d-index-after-slice", (2, 3, 4), lambda: (slice(None), mx.array([[0, 2], [2, 2]])),
     lambda: (slice(None), np.array([[0, 2], [2, 2]])), (2, 4)),
    ("int-and-array", (2, 3, 4), lambda: (1, mx.array([0, 0]), slice(None, None, -1)),
     lambda: (1, np.array([0, 0]), slice(None, None, -1)), (2, 4)),
    ("no-repeats-slice", (5,), lambda: slice(1, 4), lambda: slice(1, 4), (3,)),
]
# fmt: on


def _at_values(op, dt, shape, rng):
    if op in ("multiply", "divide"):
        choices = [2, -1, 0.5, 4] if dt not in ("int8", "int32") else [2, -1, 1]
    else:
        choices = list(range(-5, 6))
    if shape is None:
        return choices[0] if op in ("multiply", "divide") else 3
    v = rng.choice(np.array(choices, dtype=np.float64), size=shape)
    return np_values(v, dt)


# Integer division through .at has no ufunc.at counterpart (np.divide is true division).
AT_OP_DTYPES = [
    (op, dt)
    for op in AT_REFS
    for dt in ("int32", "int8", "float32", "float16", "bfloat16")
    if not (op == "divide" and dt.startswith("int"))
]


@pytest.mark.parametrize("case", AT_CASES, ids=[c[0] for c in AT_CASES])
@pytest.mark.parametrize("op,dt", AT_OP_DTYPES, ids=[f"{o}-{d}" for o, d in AT_OP_DTYPES])
def test_at_accumulates_like_ufunc_at(op, dt, case):
    name, shape, idx, np_idx, vshape = case
    rng = seeded_rng(op, dt, name)
    a = np_values(rng.integers(-3, 4, shape), dt)
    v = _at_values(op, dt, vshape, rng)
    ref_dt = np.float64 if dt in ("float16", "bfloat16") else NP[dt]
    expected = a.astype(ref_dt)
    AT_REFS[op].at(expected, np_idx(), np.asarray(v).astype(ref_dt))
    x = to_mx(a, dt)
    value = v if vshape is None else to_mx(v, dt)
    got = getattr(x.at[idx()], op)(value)
    assert_array_equal_np(got, np_values(expected, dt), dtype=dt, err_msg=f"{op} {name}")
    assert_array_equal_np(x, a, dtype=dt, err_msg="x.at[...] changed x")


def test_at_on_a_non_contiguous_array():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.transpose(mx.array(a.T.copy()))
    got = x.at[mx.array([2, 0, 2]), 1::2].add(mx.array([1.0, 10.0]))
    expected = a.copy()
    np.add.at(expected, (np.array([2, 0, 2]), slice(1, None, 2)), np.array([1.0, 10.0], np.float32))
    assert_array_equal_np(got, expected)


@pytest.mark.nuvec_only  # MLX refuses boolean masks
def test_at_with_a_mask():
    a = np.arange(6, dtype=np.float32)
    got = mx.array(a).at[mx.array(a > 2)].multiply(2.0)
    b = a.copy()
    b[a > 2] *= 2
    assert_array_equal_np(got, b)


# ----------------------------------------------------------------------------- zero-copy views
def _base():
    base = mx.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    mx.eval(base)
    return base


# (id, view builder, NumPy equivalent)
SHARED_VIEWS = [
    ("slice", lambda b: b[1:3, ::2], lambda a: a[1:3, ::2]),
    ("negative-step", lambda b: b[::-1, 1:], lambda a: a[::-1, 1:]),
    ("transpose", lambda b: mx.transpose(b), lambda a: a.T),
    ("T", lambda b: b.T, lambda a: a.T),
    ("swapaxes", lambda b: mx.swapaxes(b, 0, 1), lambda a: a.T),
    ("moveaxis", lambda b: mx.moveaxis(b, 0, -1), lambda a: a.T),
    ("reshape", lambda b: mx.reshape(b, (3, 8)), lambda a: a.reshape(3, 8)),
    ("expand_dims", lambda b: mx.expand_dims(b, 1), lambda a: a[:, None]),
    ("squeeze", lambda b: mx.squeeze(mx.expand_dims(b, 0)), lambda a: a),
    (
        "as_strided",
        lambda b: mx.as_strided(b, (3, 4), (5, 1), 2),
        lambda a: np.lib.stride_tricks.as_strided(a.ravel()[2:], (3, 4), (20, 4)),
    ),
    ("split", lambda b: mx.split(b, 3, axis=1)[1], lambda a: a[:, 2:4]),
    ("ellipsis-none", lambda b: b[None, ..., 1:], lambda a: a[None, ..., 1:]),
]
# MLX copies for these; nuvec makes views.
NUVEC_VIEWS = [
    ("int-index", lambda b: b[2], lambda a: a[2]),
    ("int-and-slice", lambda b: b[1:, 3], lambda a: a[1:, 3]),
    (
        "broadcast_to",
        lambda b: mx.broadcast_to(b[1:2], (3, 6)),
        lambda a: np.broadcast_to(a[1:2], (3, 6)),
    ),
    ("diagonal", lambda b: mx.diagonal(b, 1), lambda a: np.diagonal(a, 1)),
    ("flatten", lambda b: mx.flatten(b), lambda a: a.ravel()),
    ("atleast_3d", lambda b: mx.atleast_3d(b), lambda a: np.atleast_3d(a)),
]
VIEW_CASES = SHARED_VIEWS + [pytest.param(*c, marks=pytest.mark.nuvec_only) for c in NUVEC_VIEWS]
VIEW_IDS = [c[0] for c in SHARED_VIEWS + NUVEC_VIEWS]


@pytest.mark.parametrize("name,make,ref", VIEW_CASES, ids=VIEW_IDS)
def test_views_share_the_base_buffer(name, make, ref):
    base = _base()
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = make(base)
    mx.eval(v)
    assert_array_equal_np(v, ref(a))
    assert np.shares_memory(np.asarray(v), np.asarray(base)), f"{name} copied"
    assert np.shares_memory(np.from_dlpack(v), np.asarray(base)), f"{name}: DLPack copied"
    assert_array_equal_np(base, a)


def test_copies_do_not_share_the_buffer():
    base = _base()
    for v in (base + 0, mx.take(base, mx.array([0, 1]), axis=0), mx.contiguous(base.T)):
        mx.eval(v)
        assert not np.shares_memory(np.asarray(v), np.asarray(base))


@pytest.mark.parametrize(
    "name,make,strides",
    [
        ("stepped", lambda b: b[1:3, ::2], (24, 8)),
        ("reversed", lambda b: b[::-1], (-24, 4)),
        ("transposed", lambda b: b.T, (4, 24)),
        ("column", lambda b: b[:, 1:2], (24, 4)),
    ],
)
def test_strided_view_exports_without_a_copy(name, make, strides):
    base = _base()
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = make(base)
    mx.eval(v)
    mv = memoryview(v)
    assert mv.strides == strides
    assert mv.shape == tuple(v.shape)
    assert mv.format == "f"
    if name != "column":
        assert not mv.c_contiguous
    exported = np.asarray(mv)
    np.testing.assert_array_equal(exported, _np_view(name, a))
    assert np.shares_memory(exported, np.asarray(base))
    dl = np.from_dlpack(v)
    assert dl.strides == strides
    assert np.shares_memory(dl, np.asarray(base))
    np.testing.assert_array_equal(dl, exported)


def _np_view(name, a):
    return {"stepped": a[1:3, ::2], "reversed": a[::-1], "transposed": a.T, "column": a[:, 1:2]}[
        name
    ]


# ----------------------------------------------------------------------------- errors
def test_invalid_indices_raise():
    x = mx.zeros((3, 4))
    for bad in [(0, 0, 0), (Ellipsis, Ellipsis), 1.5, (slice(None), "a")]:
        with pytest.raises((IndexError, ValueError, TypeError)):
            mx.eval(x[bad])
    with pytest.raises((IndexError, ValueError, TypeError)):
        mx.eval(x[mx.array([1.0])])


def test_setitem_value_that_does_not_fit_raises():
    x = mx.zeros((3, 4))
    with pytest.raises(ValueError):
        x[0] = mx.zeros((3,))
    with pytest.raises(ValueError):
        x[mx.array([0, 1])] = mx.zeros((3, 4))
    assert_array_equal_np(x, np.zeros((3, 4), np.float32))


@pytest.mark.nuvec_only  # MLX reads outside the array instead
@pytest.mark.parametrize(
    "index,axis,setting",
    [
        (3, 0, False),
        (-4, 0, False),
        ((0, 4), 1, False),
        ((Ellipsis, -5), 1, False),
        (3, 0, True),
        ((slice(None), 4), 1, True),
    ],
)
def test_integer_out_of_range_raises_at_the_call(index, axis, setting):
    x = mx.zeros((3, 4))
    with pytest.raises(mx.AxisError) as info:
        if setting:
            x[index] = 1.0
        else:
            x[index]
    err = info.value
    assert isinstance(err, IndexError)
    assert err.op_name == ("setitem" if setting else "getitem")
    assert f"axis {axis}" in str(err)


@pytest.mark.nuvec_only
def test_too_many_indices_is_an_index_error():
    with pytest.raises(IndexError):
        mx.zeros((3, 4))[0, 0, 0]
    with pytest.raises(IndexError):
        mx.zeros((3, 4))[mx.array([True, False, True]), 0, 0]


@pytest.mark.nuvec_only
@pytest.mark.parametrize("mask_shape", [(2,), (4,), (3, 3)])
def test_mask_of_the_wrong_shape_raises(mask_shape):
    with pytest.raises(IndexError):
        mx.zeros((3, 4))[mx.array(np.ones(mask_shape, bool))]


# Lazy calls whose index arrays hold an out-of-range value: the error comes from evaluation.
# (op prefix, call). Never run against MLX: it reads garbage or crashes.
# fmt: off
OOB = [
    ("gather", lambda x: x[mx.array([0, 3])]),
    ("gather", lambda x: x[mx.array([-4])]),
    ("gather", lambda x: x[:, mx.array([[1], [4]])]),
    ("gather", lambda x: x[[0, 1], [0, 9]]),
    ("gather", lambda x: mx.take(x, mx.array([12]))),
    ("gather", lambda x: mx.take(x, mx.array([-5]), axis=1)),
    ("gather", lambda x: mx.take_along_axis(x, mx.array([[0], [4], [0]]), axis=1)),
    ("scatter", lambda x: x.at[mx.array([0, 3])].add(1.0)),
    ("scatter", lambda x: x.at[mx.array([-4])].maximum(1.0)),
    ("scatter", lambda x: mx.put_along_axis(x, mx.array([[0], [5], [0]]), mx.array(1.0), axis=1)),
]
# fmt: on


def _setitem_oob(x):
    x[mx.array([1, 7])] = 2.0
    return x


OOB.append(("scatter", _setitem_oob))


@pytest.mark.nuvec_only
@pytest.mark.parametrize("op,fn", OOB, ids=[f"{o}-{i}" for i, (o, _) in enumerate(OOB)])
def test_index_array_out_of_range_raises_at_evaluation(op, fn):
    x = mx.zeros((3, 4))
    y = fn(x)  # lazy: no error yet
    with pytest.raises(mx.EvalIndexError) as info:
        mx.eval(y)
    err = info.value
    assert isinstance(err, IndexError)
    assert err.op_name.startswith(op), err.op_name
    assert err.op_name in str(err)
    assert "out of bounds" in str(err)
    # The framework is unharmed.
    assert_array_equal_np(mx.zeros((3, 4))[mx.array([0, 2])], np.zeros((2, 4), np.float32))


@pytest.mark.nuvec_only
def test_out_of_range_value_is_reported_by_tolist_and_item_too():
    x = mx.arange(5)
    with pytest.raises(IndexError):
        x[mx.array([0, 7])].tolist()
    with pytest.raises(IndexError):
        x[mx.array([7])][0].item()
