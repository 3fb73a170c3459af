"""Array creation: from nested lists, scalars, NumPy arrays and buffer-protocol objects, and the
constructors zeros/ones/full/*_like/arange/linspace/eye/identity/tri/tril/triu, astype, view."""

import array

import numpy as np
import pytest

from _impl import mx
from helpers import ALL, MX, NP, assert_array_equal_np, dtype_name, np_values, round_to_bf16, to_mx


# ----------------------------------------------------------------------------- mx.array
@pytest.mark.parametrize(
    "value,np_dtype",
    [
        ([1, 2, 3], np.int32),
        ([[1, 2], [3, 4], [5, 6]], np.int32),
        ([[[1.5], [2.0]], [[3.0], [-4.25]]], np.float32),
        ([1, 2.5, -3], np.float32),
        ([True, False, True], np.bool_),
        ([[True, 2], [3, 4]], np.int32),
        ([1 + 2j, 3], np.complex64),
        (7, np.int32),
        (-2.5, np.float32),
        (False, np.bool_),
        (2j, np.complex64),
    ],
    ids=lambda v: repr(v)[:20],
)
def test_array_from_python(value, np_dtype):
    x = mx.array(value)
    assert_array_equal_np(x, np.array(value, dtype=np_dtype))


def test_array_from_empty_lists():
    assert_array_equal_np(mx.array([]), np.zeros((0,), np.float32))
    assert_array_equal_np(mx.array([[]]), np.zeros((1, 0), np.float32))
    assert_array_equal_np(mx.array([], dtype=mx.int16), np.zeros((0,), np.int16))


def test_array_from_list_of_arrays_and_scalars():
    x = mx.array([mx.array([1.0, 2.0]), mx.array([3.0, 4.0])])
    assert_array_equal_np(x, np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))


def test_array_from_ragged_list_raises():
    with pytest.raises(ValueError):
        mx.array([[1, 2], [3]])


@pytest.mark.parametrize("dt", ALL)
def test_array_with_dtype(dt):
    x = mx.array([[0, 1], [2, 3]], dtype=MX[dt])
    ref = np_values(np.array([[0, 1], [2, 3]]), dt)
    assert_array_equal_np(x, ref, dtype=dt)
    assert_array_equal_np(mx.array([0.0, 1.0, 2.0], MX[dt]), np_values([0, 1, 2], dt), dtype=dt)


@pytest.mark.parametrize("dt", [d for d in ALL if d not in ("bfloat16", "float64")])
def test_array_from_numpy_keeps_dtype(dt):
    a = np_values(
        np.arange(12).reshape(3, 4) % 2 if dt == "bool" else np.arange(12).reshape(3, 4), dt
    )
    assert_array_equal_np(mx.array(a), a, dtype=dt)


def test_array_from_numpy_float64_is_float32_unless_asked():
    a = np.array([[0.1, 0.2], [-3.7, 1e30]])
    x = mx.array(a)
    assert dtype_name(x.dtype) == "float32"
    assert_array_equal_np(x, a.astype(np.float32))
    assert_array_equal_np(mx.array(a, dtype=mx.float64), a)
    assert_array_equal_np(mx.array(a[:, :1], dtype=mx.int32), a[:, :1].astype(np.int32))


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.T,
        lambda a: a[::2],
        lambda a: a[:, 1::2],
        lambda a: a[1:, :3],
        lambda a: np.broadcast_to(a[:1], (4, 5)),
    ],
    ids=["T", "rows::2", "cols1::2", "block", "broadcast"],
)
def test_array_from_non_contiguous_numpy(make):
    a = make(np.arange(20, dtype=np.float32).reshape(4, 5))
    assert_array_equal_np(mx.array(a), np.ascontiguousarray(a))


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "make", [lambda a: a[::-1], lambda a: a[:, ::-2]], ids=["rows::-1", "cols::-2"]
)
def test_array_from_negative_stride_numpy(make):
    # MLX refuses negative strides ("Cannot convert DLPack arrays with negative strides").
    a = make(np.arange(20, dtype=np.int32).reshape(4, 5))
    assert_array_equal_np(mx.array(a), np.ascontiguousarray(a))


def test_array_copies_numpy_input():
    a = np.arange(4, dtype=np.float32)
    x = mx.array(a)
    mx.eval(x)
    a[:] = -1
    assert_array_equal_np(x, np.arange(4, dtype=np.float32))


def test_array_from_framework_array():
    x = mx.array([1, 2, 3])
    assert_array_equal_np(mx.array(x), np.array([1, 2, 3], np.int32))
    assert_array_equal_np(mx.array(x, dtype=mx.float16), np.array([1, 2, 3], np.float16))


@pytest.mark.parametrize(
    "code,np_dtype",
    [
        ("f", np.float32),
        ("i", np.int32),
        ("b", np.int8),
        ("B", np.uint8),
        ("h", np.int16),
        ("H", np.uint16),
        ("q", np.int64),
        ("Q", np.uint64),
        ("I", np.uint32),
    ],
)
def test_array_from_buffer_protocol(code, np_dtype):
    values = [0, 1, 2, 3, 100]
    buf = array.array(code, values)
    assert_array_equal_np(mx.array(buf), np.array(values, np_dtype))
    assert_array_equal_np(mx.array(memoryview(buf)), np.array(values, np_dtype))
    assert_array_equal_np(mx.array(buf, dtype=mx.float16), np.array(values, np.float16))


def test_array_from_float64_buffer_is_float32():
    buf = array.array("d", [0.5, 1.5, -2.0])
    assert_array_equal_np(mx.array(buf), np.array([0.5, 1.5, -2.0], np.float32))
    assert_array_equal_np(mx.array(buf, dtype=mx.float64), np.array([0.5, 1.5, -2.0]))


def test_array_from_bytes_and_multidimensional_memoryview():
    assert_array_equal_np(mx.array(b"ab\x00\xff"), np.array([97, 98, 0, 255], np.uint8))
    assert_array_equal_np(mx.array(bytearray(b"\x01\x02")), np.array([1, 2], np.uint8))
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    assert_array_equal_np(mx.array(memoryview(a)), a)


# ----------------------------------------------------------------------------- constructors
@pytest.mark.parametrize("dt", ALL)
def test_zeros_ones(dt):
    for shape in [(2, 3), (0,), (4,), (), (1, 0, 2)]:
        assert_array_equal_np(mx.zeros(shape, MX[dt]), np.zeros(shape, NP[dt]), dtype=dt)
        assert_array_equal_np(mx.ones(shape, dtype=MX[dt]), np.ones(shape, NP[dt]), dtype=dt)


def test_zeros_ones_defaults_and_int_shape():
    assert_array_equal_np(mx.zeros(3), np.zeros(3, np.float32))
    assert_array_equal_np(mx.ones(2), np.ones(2, np.float32))
    assert_array_equal_np(mx.zeros([2, 2]), np.zeros((2, 2), np.float32))


@pytest.mark.parametrize(
    "vals,dtype,expected",
    [
        (3, None, np.full((2, 3), 3, np.int32)),
        (2.5, None, np.full((2, 3), 2.5, np.float32)),
        (True, None, np.full((2, 3), True)),
        (2, mx.float16, np.full((2, 3), 2, np.float16)),
        (2.5, mx.float16, np.full((2, 3), 2.5, np.float16)),
        (7, mx.uint8, np.full((2, 3), 7, np.uint8)),
        (1j, None, np.full((2, 3), 1j, np.complex64)),
    ],
    ids=["int", "float", "bool", "int-f16", "float-f16", "int-u8", "complex"],
)
def test_full(vals, dtype, expected):
    got = mx.full((2, 3), vals) if dtype is None else mx.full((2, 3), vals, dtype)
    assert_array_equal_np(got, expected)


@pytest.mark.nuvec_only
def test_full_dtype_is_the_output_dtype():
    # MLX 0.32 promotes vals with dtype instead (float32 [2.5, 2.5] here; an array's own
    # dtype always wins), contrary to its documentation; nuvec gives the dtype asked for.
    assert_array_equal_np(mx.full((2,), 2.5, dtype=mx.int32), np.array([2, 2], np.int32))
    assert_array_equal_np(mx.full((2,), 2, dtype=mx.bool_), np.array([True, True]))
    got = mx.full((2, 2), mx.array([[1.5], [2.5]]), mx.float16)
    assert_array_equal_np(got, np.array([[1.5, 1.5], [2.5, 2.5]], np.float16))


def test_full_broadcasts_array_values():
    got = mx.full((2, 3), mx.array([1, 2, 3]))
    assert_array_equal_np(got, np.array([[1, 2, 3], [1, 2, 3]], np.int32))
    got = mx.full((2, 2), mx.array([[1.5], [2.5]], mx.float16))
    assert_array_equal_np(got, np.array([[1.5, 1.5], [2.5, 2.5]], np.float16))


@pytest.mark.parametrize("dt", ALL)
def test_zeros_like_ones_like(dt):
    x = mx.zeros((3, 2), MX[dt])[::2]
    assert_array_equal_np(mx.zeros_like(x), np.zeros((2, 2), NP[dt]), dtype=dt)
    assert_array_equal_np(mx.ones_like(x), np.ones((2, 2), NP[dt]), dtype=dt)


@pytest.mark.parametrize(
    "args,kwargs,np_dtype",
    [
        ((5,), {}, np.int32),
        ((1, 10, 3), {}, np.int32),
        ((5.0,), {}, np.float32),
        ((10, 0, -3), {}, np.int32),
        ((0, 1, 0.25), {}, np.float32),
        ((0, 5, 2.0), {}, np.float32),
        ((-3, 3), {}, np.int32),
        ((-3,), {}, np.int32),
        ((5, 5), {}, np.int32),
        ((2.5, -1.0, -0.5), {}, np.float32),
        ((5,), {"dtype": mx.float16}, np.float16),
        ((3,), {"dtype": mx.int8}, np.int8),
        ((0, 10, 2), {"dtype": mx.uint16}, np.uint16),
        ((4,), {"dtype": mx.float64}, np.float64),
    ],
    ids=lambda v: (
        repr(v)
        if not isinstance(v, dict) or not v
        else dtype_name(v["dtype"])
        if isinstance(v, dict)
        else None
    ),
)
def test_arange(args, kwargs, np_dtype):
    assert_array_equal_np(mx.arange(*args, **kwargs), np.arange(*args, dtype=np_dtype))


def test_arange_keywords():
    assert_array_equal_np(mx.arange(start=2, stop=8, step=2), np.arange(2, 8, 2, dtype=np.int32))
    assert_array_equal_np(
        mx.arange(0, 3, dtype=mx.bfloat16), np.arange(3, dtype=np.float32), dtype="bfloat16"
    )


@pytest.mark.parametrize(
    "start,stop,num,dtype",
    [
        (0, 1, 5, None),
        (0, 10, 3, mx.int32),
        (0, 1, 1, None),
        (0, 1, 0, None),
        (-2.5, 2.5, 11, None),
        (1, 0, 4, None),
        (0, 1, 7, mx.float16),
    ],
)
def test_linspace(start, stop, num, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    np_dtype = np.float32 if dtype is None else NP[dtype_name(dtype)]
    ref = np.linspace(start, stop, num)
    if np.issubdtype(np_dtype, np.floating):
        assert_array_equal_np(
            mx.linspace(start, stop, num, **kw),
            ref.astype(np_dtype),
            rtol=1e-6 if np_dtype == np.float32 else 1e-3,
            atol=1e-6,
            dtype=np.dtype(np_dtype).name,
        )
    else:
        assert_array_equal_np(mx.linspace(start, stop, num, **kw), ref.astype(np_dtype))


@pytest.mark.parametrize(
    "n,m,k",
    [(3, None, 0), (3, 4, 1), (4, 3, -1), (3, 3, 5), (2, 5, -3), (1, None, 0), (0, None, 0)],
)
def test_eye(n, m, k):
    assert_array_equal_np(mx.eye(n, m, k), np.eye(n, m, k, dtype=np.float32))
    assert_array_equal_np(mx.eye(n, m, k=k, dtype=mx.int32), np.eye(n, m, k, dtype=np.int32))


def test_identity():
    assert_array_equal_np(mx.identity(3), np.identity(3, np.float32))
    assert_array_equal_np(mx.identity(2, dtype=mx.bool_), np.identity(2, bool))


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 4, 0), (4, 3, 1), (3, 5, -1), (2, 2, 3)])
def test_tri(n, m, k):
    assert_array_equal_np(mx.tri(n, m, k), np.tri(n, m, k, dtype=np.float32))
    assert_array_equal_np(mx.tri(n, m, k, dtype=mx.int8), np.tri(n, m, k, dtype=np.int8))


@pytest.mark.parametrize("k", [0, 1, -1, 3, -4])
@pytest.mark.parametrize("dt", ["float32", "int32", "bool", "bfloat16"])
def test_tril_triu(k, dt):
    a = np_values(np.arange(1, 13).reshape(3, 4), dt)
    x = to_mx(a, dt)
    assert_array_equal_np(mx.tril(x, k), np.tril(a, k), dtype=dt)
    assert_array_equal_np(mx.triu(x, k), np.triu(a, k), dtype=dt)
    b = np_values(np.arange(24).reshape(2, 3, 4), dt)
    assert_array_equal_np(mx.tril(to_mx(b, dt), k), np.tril(b, k), dtype=dt)
    assert_array_equal_np(mx.triu(to_mx(b, dt), k=k), np.triu(b, k), dtype=dt)


# ----------------------------------------------------------------------------- astype / view
@pytest.mark.parametrize("src", ALL)
def test_astype_safe_values(src):
    values = np.array([0, 1, 2, 100, 3, 0])
    a = np_values(values % 2 if src == "bool" else values, src)
    x = to_mx(a, src)
    for dst in ALL:
        got = x.astype(MX[dst])
        if dst == "bool":
            ref = a != 0
        else:
            ref = np_values(a.real if (src == "complex64" and dst != "complex64") else a, dst)
        assert_array_equal_np(got, ref, dtype=dst, err_msg=f"{src} -> {dst}")


def test_astype_truncates_and_wraps():
    assert_array_equal_np(
        mx.array([1.7, -2.2, 0.9]).astype(mx.int32), np.array([1, -2, 0], np.int32)
    )
    assert_array_equal_np(
        mx.array([300, -1, 255]).astype(mx.uint8), np.array([300, -1, 255]).astype(np.uint8)
    )
    assert_array_equal_np(
        mx.array([70000, -70000]).astype(mx.int16), np.array([70000, -70000]).astype(np.int16)
    )
    assert_array_equal_np(
        mx.array([0.0, -0.5, 2.0]).astype(mx.bool_), np.array([False, True, True])
    )
    assert_array_equal_np(
        mx.array([1 + 2j, -3.5j]).astype(mx.float32), np.array([1.0, 0.0], np.float32)
    )
    assert_array_equal_np(
        mx.array([1.0, 2.5]).astype(mx.complex64), np.array([1.0, 2.5], np.complex64)
    )
    # Rounding to the nearest half-precision value (ties to even).
    v = np.array([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65519.0, 1e-8], np.float32)
    assert_array_equal_np(mx.array(v).astype(mx.float16), v.astype(np.float16))
    assert_array_equal_np(mx.array(v).astype(mx.bfloat16), round_to_bf16(v), dtype="bfloat16")
    assert_array_equal_np(mx.array([70000.0]).astype(mx.float16), np.array([np.inf], np.float16))


def test_astype_of_views():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.array(a)
    assert_array_equal_np(x.T.astype(mx.int16), a.T.astype(np.int16))
    assert_array_equal_np(x[::2, ::-1].astype(mx.float64), a[::2, ::-1].astype(np.float64))


@pytest.mark.parametrize(
    "src,dst",
    [
        ("float32", "int32"),
        ("float32", "uint32"),
        ("int32", "float32"),
        ("float32", "uint8"),
        ("float32", "float16"),
        ("uint8", "uint16"),
        ("uint8", "int32"),
        ("int64", "float64"),
        ("int16", "float16"),
        ("uint16", "int8"),
        ("float64", "uint32"),
        ("complex64", "float32"),
        ("float32", "complex64"),
        ("bool", "uint8"),
        ("int8", "bool"),
    ],
)
def test_view(src, dst):
    rng = np.random.default_rng(7)
    base = rng.integers(0, 2, (3, 8)) if src == "bool" else rng.integers(-50, 50, (3, 8))
    a = np_values(base, src)
    if src == "int8" and dst == "bool":
        a = np.abs(a) % 2
    x = to_mx(a, src)
    ref = np.ascontiguousarray(a).view(NP[dst])
    assert_array_equal_np(x.view(MX[dst]), ref, dtype=dst)
    assert_array_equal_np(mx.view(x, MX[dst]), ref, dtype=dst)


def test_view_bfloat16_bits():
    v = round_to_bf16(np.array([1.0, -2.5, 3.1415, 0.0], np.float32))
    x = mx.array(v, dtype=mx.bfloat16)
    bits = (v.view(np.uint32) >> 16).astype(np.uint16)
    assert_array_equal_np(x.view(mx.uint16), bits)
    assert_array_equal_np(x.view(mx.int16).view(mx.bfloat16).astype(mx.float32), v)


def test_view_of_a_transposed_array_uses_logical_order():
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    x = mx.array(a).T
    assert_array_equal_np(x.view(mx.int32), np.ascontiguousarray(a.T).view(np.int32))
    assert_array_equal_np(x.view(mx.uint8), np.ascontiguousarray(a.T).view(np.uint8))


def test_view_to_larger_dtype_needs_divisible_last_axis():
    with pytest.raises(ValueError):
        mx.ones((3,), mx.uint8).view(mx.uint16)
    with pytest.raises(ValueError):
        mx.ones((2, 3), mx.int16).view(mx.float32)
