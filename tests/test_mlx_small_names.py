"""Differential tests of MLX's small names (issue 11): constants, dtype queries, aliases, the ops
composed of others (flip, diff, trace, vecdot, ...), windows and device queries. Each snippet runs
on nuvec and on mlx.core with the same inputs; results must agree in type, dtype, shape and value,
and a snippet that raises on MLX must raise the same exception type on nuvec.

Skipped when MLX is not installed, and when the suite runs against MLX.
"""

import math

import numpy as np
import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("differential tests need nuvec; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")

LIBS = (nv, mlx)


def _dtype_name(d):
    name = str(d).rsplit(".", 1)[-1]
    return "bool" if name == "bool_" else name


def _to_numpy(x, lib):
    if x.dtype == lib.bfloat16:
        x = x.astype(lib.float32)
    return np.array(x)


def assert_same(got, want, tol=1e-6, where="result"):
    """nuvec's `got` matches MLX's `want`: arrays by dtype, shape and value; containers item by
    item; dtypes by name; finfo / iinfo by their fields; anything else by ==."""
    if isinstance(want, mlx.array):
        assert isinstance(got, nv.array), f"{where}: {type(got).__name__}, MLX gives an array"
        assert _dtype_name(got.dtype) == _dtype_name(want.dtype), f"{where}: dtype"
        assert tuple(got.shape) == tuple(want.shape), f"{where}: shape"
        np.testing.assert_allclose(
            _to_numpy(got, nv), _to_numpy(want, mlx), rtol=tol, atol=tol, err_msg=where
        )
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), f"{where}: {got!r} vs {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, tol, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), f"{where}: {got} vs {want}"
        for k in want:
            assert_same(got[k], want[k], tol, f"{where}[{k!r}]")
    elif isinstance(want, mlx.Dtype):
        assert _dtype_name(got) == _dtype_name(want), f"{where}: {got} vs {want}"
    elif isinstance(want, (mlx.finfo, mlx.iinfo)):
        assert type(got).__name__ == type(want).__name__, where
        fields = ("min", "max", "dtype") + (
            ("eps", "bits", "smallest_normal") * (isinstance(want, mlx.finfo))
        )
        for f in fields:
            assert_same(getattr(got, f), getattr(want, f), 0.0, f"{where}.{f}")
        assert repr(got) == repr(want), where
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), f"{where}: {got!r}"
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} vs {want!r}"


def run_both(snippet, tol=1e-6):
    """Runs snippet(lib, ...) on both; compares results, or exception types."""
    outcomes = []
    for lib in LIBS:
        try:
            outcomes.append((snippet(lib), None))
        except Exception as e:  # noqa: BLE001 (any exception is an outcome to compare)
            outcomes.append((None, e))
    (got, got_exc), (want, want_exc) = outcomes
    if want_exc is not None:
        assert got_exc is not None, f"MLX raises {want_exc!r}; nuvec returns {got!r}"
        assert isinstance(got_exc, type(want_exc)), (
            f"MLX raises {type(want_exc).__name__}, nuvec {type(got_exc).__name__}: {got_exc}"
        )
        return
    assert got_exc is None, f"nuvec raises {got_exc!r}; MLX returns {want!r}"
    assert_same(got, want, tol)


def _x(mx, dtype="int32"):
    return mx.array([[1, -2, 3], [4, 5, -6]], dtype=getattr(mx, dtype))


def _f(mx, shape=(2, 3, 4)):
    """The same float32 values on both: a fixed ramp with signs."""
    n = int(np.prod(shape))
    v = ((np.arange(n) * 7 % 11) - 5).astype(np.float32).reshape(shape) / 2
    return mx.array(v)


DTYPES = ("bool_", "uint8", "uint64", "int8", "int64", "float16", "float32", "float64")
DTYPES += ("bfloat16", "complex64")

SNIPPETS = {
    # ------------------------------------------------------------------ constants
    **{c: (lambda mx, c=c: getattr(mx, c)) for c in ("pi", "e", "euler_gamma", "inf", "nan")},
    "newaxis": lambda mx: (mx.newaxis, _x(mx)[mx.newaxis].shape),
    # ------------------------------------------------------------------ dtype queries
    **{f"finfo_{d}": (lambda mx, d=d: mx.finfo(getattr(mx, d))) for d in DTYPES},
    **{f"iinfo_{d}": (lambda mx, d=d: mx.iinfo(getattr(mx, d))) for d in DTYPES},
    "finfo_str": lambda mx: mx.finfo("float32"),
    "finfo_identity": lambda mx: mx.finfo(mx.float32) == mx.finfo(mx.float32),
    **{
        f"result_type_{a}_{b}": (
            lambda mx, a=a, b=b: mx.result_type(getattr(mx, a), mx.zeros((1,), getattr(mx, b)))
        )
        for a in DTYPES
        for b in DTYPES
    },
    "result_type_three": lambda mx: mx.result_type(mx.int8, mx.uint8, mx.float16),
    "result_type_one": lambda mx: mx.result_type(mx.bool_),
    "result_type_none": lambda mx: mx.result_type(),
    "result_type_scalar": lambda mx: mx.result_type(1, mx.int8),
    **{
        f"can_cast_{a}_{b}": (lambda mx, a=a, b=b: mx.can_cast(getattr(mx, a), getattr(mx, b)))
        for a in DTYPES
        for b in DTYPES
    },
    "can_cast_array": lambda mx: mx.can_cast(mx.array([1]), mx.float32),
    "can_cast_scalar": lambda mx: mx.can_cast(1, mx.int8),
    "can_cast_to_array": lambda mx: mx.can_cast(mx.float32, mx.array([1.0])),
    **{
        f"isdtype_{d}_{k.replace(' ', '_')}": (lambda mx, d=d, k=k: mx.isdtype(getattr(mx, d), k))
        for d in DTYPES
        for k in (
            "bool",
            "signed integer",
            "unsigned integer",
            "integral",
            "real floating",
            "complex floating",
            "numeric",
        )
    },
    "isdtype_dtype": lambda mx: (mx.isdtype(mx.int8, mx.int8), mx.isdtype(mx.int8, mx.int16)),
    "isdtype_tuple": lambda mx: mx.isdtype(mx.float32, ("bool", mx.float32)),
    "isdtype_unknown": lambda mx: mx.isdtype(mx.int8, "foo"),
    "isdtype_category": lambda mx: mx.isdtype(mx.int8, mx.integer),
    "isdtype_number": lambda mx: mx.isdtype(mx.int8, 5),
    "isdtype_array": lambda mx: mx.isdtype(mx.array(1), "integral"),
    **{
        f"issubdtype_{i}": (lambda mx, f=f: mx.issubdtype(*f(mx)))
        for i, f in enumerate(
            (
                lambda mx: ("float32", mx.floating),
                lambda mx: (mx.float32, "float32"),
                lambda mx: (float, mx.floating),
                lambda mx: (mx.float32, np.floating),
                lambda mx: (mx.array(1.0), mx.floating),
                lambda mx: (mx.float32, mx.floating),
                lambda mx: (mx.int8, mx.signedinteger),
            )
        )
    },
    # ------------------------------------------------------------------ creation
    "asarray": lambda mx: mx.asarray([1, 2]),
    "asarray_numpy": lambda mx: mx.asarray(np.ones(3)),
    "asarray_dtype": lambda mx: mx.asarray(_x(mx), mx.float32),
    "asarray_scalar": lambda mx: mx.asarray(3.0),
    "asarray_new_object": lambda mx: mx.asarray(_x(mx)) is _x(mx),
    "asarray_no_copy": lambda mx: mx.asarray([1], copy=False),
    "empty": lambda mx: mx.empty((2, 3)),
    "empty_dtype": lambda mx: mx.empty(3, mx.int8),
    "empty_like": lambda mx: mx.empty_like(_x(mx)),
    "full_like": lambda mx: mx.full_like(_x(mx), 2.5),
    "full_like_dtype": lambda mx: mx.full_like(_x(mx), 2.5, mx.float32),
    "full_like_array": lambda mx: mx.full_like(_x(mx), mx.array([1.5, 2, 3])),
    "full_like_bool": lambda mx: mx.full_like(_x(mx) > 0, 3),
    "full_like_bad_shape": lambda mx: mx.full_like(_x(mx), mx.array([1, 2])),
    **{
        f"{w}_{m}": (lambda mx, w=w, m=m: getattr(mx, w)(m))
        for w in ("bartlett", "blackman", "hamming", "hanning")
        for m in (-1, 0, 1, 2, 5, 12, 51)
    },
    "hanning_float": lambda mx: mx.hanning(5.0),
    # ------------------------------------------------------------------ element-wise
    "positive": lambda mx: mx.positive(_x(mx)),
    "positive_bool": lambda mx: mx.positive(mx.array([True, False])),
    "trunc": lambda mx: mx.trunc(mx.array([-1.5, -0.5, 0.5, 2.7, -3.0])),
    "trunc_int": lambda mx: mx.trunc(_x(mx)),
    "trunc_uint8": lambda mx: mx.trunc(_x(mx, "uint8")),
    "trunc_bool": lambda mx: mx.trunc(mx.array([True])),
    "trunc_complex": lambda mx: mx.trunc(mx.array([1 + 2j])),
    "logical_xor": lambda mx: mx.logical_xor(_x(mx), 0),
    "logical_xor_float": lambda mx: mx.logical_xor(mx.array([1.5, 0, 0]), mx.array([0, 0, 2.0])),
    "logical_xor_complex": lambda mx: mx.logical_xor(mx.array([1j, 0]), mx.array([0j, 0j])),
    "logical_xor_broadcast": lambda mx: mx.logical_xor(_x(mx) > 0, mx.array([True, False, True])),
    "pow": lambda mx: mx.pow(_x(mx), 2),
    "bitwise_shifts": lambda mx: (
        mx.bitwise_left_shift(_x(mx), 2),
        mx.bitwise_right_shift(_x(mx), 1),
    ),
    "arc_aliases": lambda mx: [
        mx.acos(mx.array([0.5])),
        mx.asin(mx.array([0.5])),
        mx.atan(mx.array([0.5])),
        mx.atan2(mx.array([0.5]), mx.array([-2.0])),
        mx.acosh(mx.array([1.5])),
        mx.asinh(mx.array([0.5])),
        mx.atanh(mx.array([0.5])),
    ],
    "cumulative": lambda mx: (
        mx.cumulative_sum(_x(mx), axis=1),
        mx.cumulative_prod(_x(mx), axis=0, reverse=True),
    ),
    # ------------------------------------------------------------------ shapes
    "flip": lambda mx: mx.flip(_x(mx)),
    "flip_axis": lambda mx: mx.flip(_f(mx), 1),
    "flip_axes": lambda mx: mx.flip(_f(mx), (0, -1)),
    "flip_repeated": lambda mx: mx.flip(_x(mx), (0, 0)),
    "flip_none": lambda mx: mx.flip(_x(mx), axis=None),
    "flip_empty_axes": lambda mx: mx.flip(_x(mx), []),
    "flip_scalar": lambda mx: mx.flip(mx.array(3)),
    "flip_bad_axis": lambda mx: mx.flip(_x(mx), 5),
    "permute_dims": lambda mx: mx.permute_dims(_f(mx)),
    "permute_dims_axes": lambda mx: mx.permute_dims(_f(mx), (1, 2, 0)),
    "permute_dims_bad": lambda mx: mx.permute_dims(_x(mx), [0]),
    "matrix_transpose": lambda mx: mx.matrix_transpose(_f(mx)),
    "matrix_transpose_1d": lambda mx: mx.matrix_transpose(mx.ones((3,))),
    "unstack": lambda mx: mx.unstack(_x(mx)),
    "unstack_axis": lambda mx: mx.unstack(_f(mx), axis=-1),
    "unstack_empty": lambda mx: mx.unstack(mx.ones((0, 2))),
    "unstack_scalar": lambda mx: mx.unstack(mx.array(1)),
    "broadcast_shapes": lambda mx: mx.broadcast_shapes((2, 1), (3,)),
    "broadcast_shapes_list": lambda mx: mx.broadcast_shapes((2, 1, 1), [1, 4], (1,)),
    "broadcast_shapes_one": lambda mx: mx.broadcast_shapes((2,)),
    "broadcast_shapes_zero": lambda mx: mx.broadcast_shapes((0, 1), (1, 5)),
    "broadcast_shapes_none": lambda mx: mx.broadcast_shapes(),
    "broadcast_shapes_bad": lambda mx: mx.broadcast_shapes((2,), (3,)),
    # ------------------------------------------------------------------ differences, sums
    "diff": lambda mx: mx.diff(_x(mx)),
    "diff_n_axis": lambda mx: mx.diff(_f(mx), 2, 1),
    "diff_zero": lambda mx: mx.diff(_x(mx), 0),
    "diff_long": lambda mx: mx.diff(_x(mx), 5),
    "diff_bool": lambda mx: mx.diff(mx.array([True, False, False, True])),
    "diff_uint8": lambda mx: mx.diff(_x(mx, "uint8")),
    "diff_negative": lambda mx: mx.diff(_x(mx), -1),
    "diff_scalar": lambda mx: mx.diff(mx.array(3)),
    "diff_bad_axis": lambda mx: mx.diff(_x(mx), 1, 2),
    "trace": lambda mx: mx.trace(_x(mx)),
    "trace_offsets": lambda mx: [mx.trace(_x(mx), k) for k in (-5, -1, 1, 2, 5)],
    "trace_dtype": lambda mx: mx.trace(_x(mx), dtype=mx.float32),
    "trace_int8": lambda mx: mx.trace(_x(mx, "int8")),
    "trace_bool": lambda mx: mx.trace(_x(mx, "bool_")),
    "trace_3d": lambda mx: mx.trace(_f(mx), 1, 2, 0),
    "trace_empty": lambda mx: mx.trace(mx.ones((0, 0))),
    "trace_1d": lambda mx: mx.trace(mx.array([1, 2])),
    "trace_same_axes": lambda mx: mx.trace(_x(mx), 0, 0, 0),
    "trace_bad_axis": lambda mx: mx.trace(_x(mx), 0, 0, 5),
    "count_nonzero": lambda mx: mx.count_nonzero(_x(mx) > 0),
    "count_nonzero_axis": lambda mx: mx.count_nonzero(_f(mx), axis=1),
    "count_nonzero_keepdims": lambda mx: mx.count_nonzero(_x(mx), axis=(0, 1), keepdims=True),
    "count_nonzero_nan": lambda mx: mx.count_nonzero(mx.array([0.0, 1, math.nan, -0.0])),
    "count_nonzero_bad_axis": lambda mx: mx.count_nonzero(_x(mx), axis=5),
    "minmax": lambda mx: mx.minmax(_x(mx)),
    "minmax_axis": lambda mx: mx.minmax(_f(mx), 1, True),
    "minmax_axes": lambda mx: mx.minmax(_f(mx), axis=(0, 2)),
    "minmax_empty": lambda mx: mx.minmax(mx.array([])),
    "minmax_bad_axis": lambda mx: mx.minmax(_x(mx), 5),
    "median": lambda mx: mx.median(_x(mx)),
    "median_axis": lambda mx: mx.median(_f(mx), 1),
    "median_keepdims": lambda mx: mx.median(_f(mx), (0, 2), True),
    "median_odd": lambda mx: mx.median(_f(mx, (3, 5)), axis=-1, keepdims=True),
    "median_float16": lambda mx: mx.median(_f(mx).astype(mx.float16), 0),
    "median_float64": lambda mx: mx.median(_x(mx, "float64"), 1),
    "median_bool": lambda mx: mx.median(_x(mx) > 2, 1),
    "median_nan": lambda mx: mx.median(mx.array([[1.0, math.nan, 2.0], [1.0, 3.0, 2.0]]), 1),
    "median_scalar": lambda mx: mx.median(mx.array(2.5)),
    "median_empty": lambda mx: mx.median(mx.array([])),
    "median_bad_axis": lambda mx: mx.median(_x(mx), 2),
    "searchsorted": lambda mx: mx.searchsorted(mx.array([1, 2, 2, 3, 5]), mx.array([0, 2, 4, 6])),
    "searchsorted_right": lambda mx: mx.searchsorted(
        mx.array([1, 2, 2, 3, 5]), mx.array([[0, 2], [4, 6]]), side="right"
    ),
    "searchsorted_float": lambda mx: mx.searchsorted(
        mx.sort(_f(mx, (7,))), mx.array([-1.5, 0.25, 9.0])
    ),
    "searchsorted_nan": lambda mx: [
        mx.searchsorted(mx.array([1.0, math.nan]), mx.array([math.nan, 1.5]), side=side)
        for side in ("left", "right")
    ],
    "searchsorted_empty": lambda mx: mx.searchsorted(mx.array([]), mx.array([1.0, 2.0])),
    "searchsorted_scalar": lambda mx: mx.searchsorted(mx.array([1, 3]), mx.array(2)),
    "searchsorted_2d": lambda mx: mx.searchsorted(mx.ones((2, 2)), mx.array([1.0])),
    "searchsorted_side": lambda mx: mx.searchsorted(mx.array([1, 2]), mx.array([1]), side="x"),
    "vecdot": lambda mx: mx.vecdot(_x(mx), _x(mx)),
    "vecdot_axis": lambda mx: mx.vecdot(_f(mx), _f(mx) + 1, axis=0),
    "vecdot_broadcast": lambda mx: mx.vecdot(_f(mx, (2, 3)), mx.ones((1, 3))),
    "vecdot_complex": lambda mx: mx.vecdot(mx.array([1 + 1j, 2]), mx.array([1 + 1j, 1])),
    "vecdot_int8": lambda mx: mx.vecdot(_x(mx, "int8"), _x(mx, "int8")),
    "vecdot_bool": lambda mx: mx.vecdot(_x(mx) > 0, _x(mx) > 0),
    "vecdot_scalar": lambda mx: mx.vecdot(mx.ones(()), mx.ones(())),
    "vecdot_ndim": lambda mx: mx.vecdot(mx.ones((2, 3)), mx.ones((3,))),
    "vecdot_ndim_axis0": lambda mx: mx.vecdot(mx.ones((2, 3)), mx.ones((3,)), axis=0),
    "vecdot_sizes": lambda mx: mx.vecdot(mx.ones((2, 1)), mx.ones((2, 3))),
    "vecdot_bad_axis": lambda mx: mx.vecdot(mx.ones((2, 3)), mx.ones((2, 3)), axis=2),
    "vecdot_no_broadcast": lambda mx: mx.vecdot(mx.ones((2, 3)), mx.ones((4, 3))),
    # ------------------------------------------------------------------ devices and memory
    "device_count": lambda mx: (mx.device_count(mx.cpu), mx.device_count(mx.gpu)),
    "device_count_none": lambda mx: mx.device_count(),
    "device_info_keys": lambda mx: sorted(mx.device_info()),
    "device_info_cpu": lambda mx: mx.device_info(mx.cpu)["architecture"],
    "device_info_gpu": lambda mx: mx.device_info(mx.gpu),
    "get_memory_limit": lambda mx: isinstance(mx.get_memory_limit(), int),
    "memory_limit_roundtrip": lambda mx: _memory_limit_roundtrip(mx),
    # MLX counts an allocator block, which can exceed the array (and depends on its cache), so
    # the snippets compare relations that hold for any block size.
    "buffer_size_relations": lambda mx: _buffer_size_relations(mx),
    "buffer_size_unevaluated": lambda mx: mx.get_array_buffer_size(mx.ones(3) + 1),
    "wired_limit": lambda mx: mx.set_wired_limit(mx.set_wired_limit(0)),
    "metal_available": lambda mx: mx.metal.is_available(),
    "cuda_available": lambda mx: mx.cuda.is_available(),
}


def _buffer_size_relations(mx):
    a, big = mx.arange(10), mx.ones((1000, 1000))
    s = a[::2]
    mx.eval(a, s, big)
    size = mx.get_array_buffer_size
    return (
        size() == 0,
        size(a) >= 40,
        size(a, s, a) == size(a),  # a view shares its base's buffer
        size({"x": [a, (s,)]}, 3, "q", None) == size(a),  # trees; other leaves are ignored
        size(a, big) - size(a) >= 4_000_000,
        size(mx.array(np.ones(1000, np.float32))) >= 4000,
    )


def _memory_limit_roundtrip(mx):
    old = mx.set_memory_limit(12345678)
    try:
        return mx.get_memory_limit()
    finally:
        mx.set_memory_limit(old)


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_matches_mlx(name):
    run_both(SNIPPETS[name])


def test_aliases_are_the_same_functions_as_in_mlx():
    pairs = {
        "empty": "zeros",
        "empty_like": "zeros_like",
        "pow": "power",
        "bitwise_left_shift": "left_shift",
        "bitwise_right_shift": "right_shift",
        "cumulative_sum": "cumsum",
        "cumulative_prod": "cumprod",
        "acos": "arccos",
        "asin": "arcsin",
        "atan": "arctan",
        "atan2": "arctan2",
        "acosh": "arccosh",
        "asinh": "arcsinh",
        "atanh": "arctanh",
    }
    for alias, target in pairs.items():
        for lib in LIBS:
            assert getattr(lib, alias) is getattr(lib, target), f"{lib.__name__}.{alias}"


METAL_ALIASES = (
    "get_active_memory",
    "get_peak_memory",
    "reset_peak_memory",
    "get_cache_memory",
    "clear_cache",
)


@pytest.mark.parametrize("name", METAL_ALIASES)
def test_metal_deprecated_aliases(name):
    got, want = getattr(nv.metal, name), getattr(mlx.metal, name)
    assert callable(got) and callable(want)
    with pytest.warns(DeprecationWarning, match=f"mx.metal.{name} is deprecated"):
        got()


def test_metal_limits_and_info():
    with pytest.warns(DeprecationWarning):
        old = nv.metal.set_cache_limit(1 << 20)
    assert nv.set_cache_limit(old) == 1 << 20
    with pytest.warns(DeprecationWarning):
        old = nv.metal.set_memory_limit(1 << 30)
    assert nv.set_memory_limit(old) == 1 << 30
    with pytest.warns(DeprecationWarning):
        assert nv.metal.device_info() == mlx.metal.device_info() == {}
    with pytest.warns(DeprecationWarning):
        assert nv.metal.set_wired_limit(0) == 0


@pytest.mark.nuvec_only
def test_broadcast_shapes_of_ints_is_a_type_error():
    """MLX dies with `RuntimeError: std::bad_cast` here; nuvec raises TypeError."""
    with pytest.raises(TypeError):
        nv.broadcast_shapes(2, 3)


def test_composed_ops_take_a_stream():
    s = nv.new_stream(nv.cpu)
    x = nv.array([[1.0, 2.0], [3.0, 4.0]])
    for out in (
        nv.flip(x, stream=s),
        nv.diff(x, stream=s),
        nv.trace(x, stream=s),
        nv.count_nonzero(x, stream=s),
        nv.vecdot(x, x, stream=s),
        nv.permute_dims(x, stream=s),
        nv.matrix_transpose(x, stream=s),
        nv.full_like(x, 1, stream=s),
        nv.hanning(4, stream=s),
        *nv.unstack(x, stream=s),
    ):
        nv.eval(out)
    assert nv.default_stream(nv.cpu) != s
