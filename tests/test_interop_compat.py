"""Interop as MLX has it (issue 11): mx.array of NumPy data and its dtype argument, from_dlpack of
read-only, strided and every-dtype producers, DLPack export, bfloat16 through the buffer protocol
and ml_dtypes, bytes(), and evaluation errors reached through NumPy. Every test without the
nuvec_only mark passes on MLX too (NUVEC_TEST_IMPL=mlx)."""

import ml_dtypes
import numpy as np
import pytest

from _impl import mx
from helpers import assert_array_equal_np, to_np

try:  # PyTorch is a second DLPack producer where installed (not a test dependency)
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ----------------------------------------------------------------------------- mx.array of NumPy
@pytest.mark.parametrize("copy", [True, False, None])
def test_array_has_no_copy_argument(copy):
    with pytest.raises(TypeError):
        mx.array(np.ones(3), copy=copy)


@pytest.mark.parametrize(
    "np_dtype, expected",
    [
        (np.float64, "float32"),  # float64 data narrows unless asked for
        (np.float32, "float32"),
        (np.float16, "float16"),
        (np.int64, "int64"),
        (np.uint32, "uint32"),
        (np.int8, "int8"),
        (np.bool_, "bool_"),
        (np.complex64, "complex64"),
        (np.complex128, "complex64"),
    ],
)
def test_array_of_numpy_keeps_dtype_as_mlx(np_dtype, expected):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    x = mx.array(a)
    assert x.dtype == getattr(mx, expected)
    np.testing.assert_array_equal(to_np(x), a.astype(to_np(x).dtype))


@pytest.mark.parametrize("positional", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "int32", "float16", "bfloat16", "uint8", "complex64"])
def test_array_of_numpy_with_dtype(dtype, positional):
    a = np.array([[0.5, 1.0], [2.0, 3.0]])
    d = getattr(mx, dtype)
    x = mx.array(a, d) if positional else mx.array(a, dtype=d)
    assert x.dtype == d and x.shape == (2, 2)
    expected = mx.array(a.tolist(), d)
    assert mx.array_equal(x, expected).item()


def test_array_of_read_only_and_strided_numpy():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    a.flags.writeable = False
    assert_array_equal_np(mx.array(a), a)
    s = np.arange(12, dtype=np.int64).reshape(3, 4)[::2, 1::2]
    assert_array_equal_np(mx.array(s), s)
    f = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert_array_equal_np(mx.array(f), f)


@pytest.mark.nuvec_only  # MLX: ValueError, "Cannot convert DLPack arrays with negative strides"
def test_array_of_negatively_strided_numpy():
    a = np.arange(6).reshape(2, 3)[:, ::-1]
    assert_array_equal_np(mx.array(a), a)


@needs_torch
def test_array_of_torch_narrows_float64_and_complex128():
    assert mx.array(torch.tensor([1.5, 2.0], dtype=torch.float64)).dtype == mx.float32
    c = mx.array(torch.tensor([1 + 2j], dtype=torch.complex128))
    assert c.dtype == mx.complex64 and c.tolist() == [1 + 2j]
    b = mx.array(torch.tensor([1.5, 2.0], dtype=torch.bfloat16))
    assert b.dtype == mx.bfloat16 and b.tolist() == [1.5, 2.0]


# ----------------------------------------------------------------------------- from_dlpack
def test_from_dlpack_of_read_only_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a.flags.writeable = False
    assert_array_equal_np(mx.from_dlpack(a), a)
    b = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))  # read-only, stride 0
    assert_array_equal_np(mx.from_dlpack(b), b)


def test_from_dlpack_of_read_only_memory_without_copy_raises():
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False
    with pytest.raises(ValueError):
        mx.from_dlpack(a, copy=False)


def test_from_dlpack_of_strided_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[::2, 1::2]
    assert_array_equal_np(mx.from_dlpack(a), a)


@needs_torch
def test_from_dlpack_of_transposed_torch():
    t = torch.arange(6).reshape(2, 3).T
    x = mx.from_dlpack(t)
    assert x.dtype == mx.int64 and x.tolist() == t.tolist()


@pytest.mark.nuvec_only  # MLX refuses negative strides
def test_from_dlpack_of_negatively_strided_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1]
    assert_array_equal_np(mx.from_dlpack(a), a)
    assert_array_equal_np(mx.from_dlpack(a, copy=True), a)


@pytest.mark.parametrize(
    "a, expected",
    [
        (np.array([True, False]), "bool_"),
        (np.array([1 + 2j], np.complex64), "complex64"),
        (np.array([1 + 2j], np.complex128), "complex64"),
        (np.array([1.5], np.float16), "float16"),
        (np.array([1, 2], np.uint64), "uint64"),
        (np.array([-1, 2], np.int8), "int8"),
        (np.zeros((2, 0), np.int32), "int32"),
    ],
)
def test_from_dlpack_dtypes(a, expected):
    x = mx.from_dlpack(a)
    assert x.dtype == getattr(mx, expected) and x.shape == a.shape
    np.testing.assert_array_equal(np.array(x), a.astype(np.array(x).dtype))


@needs_torch
def test_from_dlpack_of_torch_bfloat16():
    x = mx.from_dlpack(torch.tensor([1.5, -2.0], dtype=torch.bfloat16))
    assert x.dtype == mx.bfloat16 and x.tolist() == [1.5, -2.0]


@pytest.mark.nuvec_only  # MLX narrows float64 to float32 and always copies CPU memory
def test_from_dlpack_keeps_float64_and_shares():
    a = np.arange(4.0)
    x = mx.from_dlpack(a)
    y = mx.from_dlpack(a, copy=False)
    a[0] = 100.0
    assert x.dtype == mx.float64 and x.tolist() == [100.0, 1.0, 2.0, 3.0]
    assert y.tolist() == [100.0, 1.0, 2.0, 3.0]


@pytest.mark.nuvec_only  # MLX's copy=False raises for CPU memory; nuvec's only where it must copy
def test_from_dlpack_complex128_without_copy_raises():
    with pytest.raises(mx.OpError):
        mx.from_dlpack(np.array([1j]), copy=False)


def test_from_dlpack_copy_true_copies():
    a = np.arange(3, dtype=np.float32)
    x = mx.from_dlpack(a, copy=True)
    a[0] = 9
    assert x.tolist() == [0.0, 1.0, 2.0]
    s = np.arange(4, dtype=np.int16)[::2]
    assert mx.from_dlpack(s, copy=True).tolist() == [0, 2]


def test_from_dlpack_of_buffers_and_arrays():
    assert mx.from_dlpack(np.float64(3.0)).item() == 3.0
    assert mx.from_dlpack(np.array(3.0)).shape == ()
    assert mx.from_dlpack(b"abc").tolist() == [97, 98, 99]
    assert mx.from_dlpack(memoryview(np.arange(3, dtype=np.int32))).tolist() == [0, 1, 2]
    x = mx.array([1, 2])
    assert mx.from_dlpack(x).tolist() == [1, 2]
    assert mx.from_dlpack(x, copy=True).tolist() == [1, 2]


@pytest.mark.parametrize("bad", [[1, 2], 3, None, "abc"], ids=repr)
def test_from_dlpack_of_a_non_producer_is_a_type_error(bad):
    with pytest.raises(TypeError):
        mx.from_dlpack(bad)


# ----------------------------------------------------------------------------- DLPack export
@pytest.mark.parametrize("dtype", ["float64", "float32", "bool_", "complex64", "int16", "uint64"])
def test_numpy_imports_every_dtype(dtype):
    x = mx.array([1, 0, 3], getattr(mx, dtype))
    a = np.from_dlpack(x)
    assert a.dtype == np.array(x).dtype and a.tolist() == x.tolist()


def test_numpy_import_of_views_and_keywords():
    x = mx.arange(6).reshape(2, 3)
    assert np.from_dlpack(x.T).tolist() == [[0, 3], [1, 4], [2, 5]]
    assert np.from_dlpack(mx.arange(6)[::-1]).tolist() == [5, 4, 3, 2, 1, 0]
    assert np.from_dlpack(mx.array([1.0, 2.0]), device="cpu").tolist() == [1.0, 2.0]
    assert np.from_dlpack(mx.array([1.0, 2.0]), copy=True).tolist() == [1.0, 2.0]


def test_dlpack_export_keywords():
    x = mx.array([1.0, 2.0])
    for kwargs in (
        {},
        {"max_version": (1, 0)},
        {"copy": True},
        {"copy": False},
        {"dl_device": (1, 0)},
    ):
        assert type(x.__dlpack__(**kwargs)).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))


@needs_torch
def test_torch_imports_bfloat16_and_shares():
    assert torch.from_dlpack(mx.array([1.5, 2.0], mx.bfloat16)).dtype == torch.bfloat16
    assert torch.from_dlpack(mx.array([1.5], mx.float64)).dtype == torch.float64
    assert torch.from_dlpack(mx.array([True])).dtype == torch.bool


def test_numpy_cannot_import_bfloat16_by_dlpack():
    # NumPy refuses the dtype (RuntimeError from NumPy 2.4.6 here, BufferError from the NumPy of the
    # GPU machine's PyTorch environment: the type is NumPy's).
    with pytest.raises((RuntimeError, BufferError), match="Unsupported dtype"):
        np.from_dlpack(mx.array([1.5], mx.bfloat16))


# ----------------------------------------------------------------------------- bfloat16 exchange
BF16 = np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3)


@pytest.mark.parametrize(
    "a",
    [BF16, BF16.T, BF16[:, ::2], np.array(1.5, ml_dtypes.bfloat16)],
    ids=["2d", "transposed", "strided", "0d"],
)
def test_array_of_ml_dtypes_bfloat16(a):
    x = mx.array(a)
    assert x.dtype == mx.bfloat16 and x.shape == a.shape
    np.testing.assert_array_equal(np.array(x.astype(mx.float32)), a.astype(np.float32))
    y = mx.array(a, mx.float16)
    assert y.dtype == mx.float16
    np.testing.assert_array_equal(np.array(y), a.astype(np.float16))


def test_array_of_an_ml_dtypes_bfloat16_scalar():
    x = mx.array(ml_dtypes.bfloat16(1.5))
    assert x.dtype == mx.bfloat16 and x.item() == 1.5


def test_bfloat16_buffer_carries_the_bits():
    x = mx.array([1.5, -2.0, 3.25], mx.bfloat16)
    m = memoryview(x)
    assert (m.format, m.itemsize, m.shape, m.strides, m.readonly) == (
        "bfloat16",
        2,
        (3,),
        (2,),
        False,
    )
    assert np.frombuffer(m, ml_dtypes.bfloat16).tolist() == [1.5, -2.0, 3.25]
    assert bytes(x) == np.array([1.5, -2.0, 3.25], ml_dtypes.bfloat16).tobytes()
    assert memoryview(mx.array([[1, 2], [3, 4]], mx.bfloat16).T).strides == (2, 4)


@pytest.mark.parametrize(
    "convert", [np.array, np.asarray, lambda x: np.asarray(x, dtype=np.float32)]
)
def test_numpy_of_bfloat16_raises_value_error(convert):
    with pytest.raises(ValueError):
        convert(mx.array([1.5], mx.bfloat16))


@pytest.mark.nuvec_only  # MLX: RuntimeError('std::bad_cast')
def test_array_of_a_bfloat16_memoryview():
    x = mx.array([1.5, -2.0], mx.bfloat16)
    y = mx.array(memoryview(x))
    assert y.dtype == mx.bfloat16 and y.tolist() == [1.5, -2.0]


@pytest.mark.nuvec_only  # MLX: RuntimeError('std::bad_cast')
@pytest.mark.parametrize("dt", [ml_dtypes.float8_e4m3fn, ml_dtypes.int4], ids=str)
def test_array_of_unsupported_ml_dtypes_names_the_dtype(dt):
    with pytest.raises(mx.OpError, match=np.dtype(dt).name):
        mx.array(np.array([1], dt))


# ----------------------------------------------------------------------------- bytes()
@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: mx.array([1, 2], mx.int16), b"\x01\x00\x02\x00"),
        (lambda: mx.arange(6, dtype=mx.int8).reshape(2, 3).T, b"\x00\x03\x01\x04\x02\x05"),
        (lambda: mx.array(3, mx.int8), b"\x03"),
        (lambda: mx.array([True, False]), b"\x01\x00"),
        (lambda: mx.array([1.5], mx.bfloat16), b"\xc0?"),
        (lambda: mx.zeros((0, 2), mx.float32), b""),
    ],
)
def test_bytes_are_the_elements_in_row_major_order(make, expected):
    assert bytes(make()) == expected


# ----------------------------------------------------------------------------- errors through NumPy
def _bad_gather():
    return mx.take(mx.array([1, 2, 3]), mx.array([5]))


@pytest.mark.nuvec_only  # MLX reads out of bounds (no error); nuvec checks indices when evaluating
@pytest.mark.parametrize(
    "convert",
    [np.array, np.asarray, memoryview, bytes, np.from_dlpack, lambda x: x.tolist()],
    ids=["array", "asarray", "memoryview", "bytes", "from_dlpack", "tolist"],
)
def test_evaluation_errors_keep_their_type_through_numpy(convert):
    with pytest.raises(mx.EvalIndexError) as info:
        convert(_bad_gather())
    assert info.value.op_name == "gather"
    x = mx.array([1, 2, 3])
    with pytest.raises(mx.EvalIndexError):
        np.array(x[mx.array([7])] * 2 + 1)  # deep inside a lazy graph
