"""The array object: attributes, Python protocols (len, iter, bool, item, tolist, repr), NumPy
interop (__array__, buffer protocol, DLPack) and basic indexing against NumPy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import mx
from helpers import ALL, ITEMSIZE, MX, NP, assert_array_equal_np, np_values, to_mx


# ----------------------------------------------------------------------------- attributes
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (4, 1, 3), (2, 0, 7)])
@pytest.mark.parametrize(
    "dt", ["bool", "int8", "uint64", "float16", "float32", "bfloat16", "complex64"]
)
def test_attributes(shape, dt):
    x = mx.zeros(shape, MX[dt])
    size = int(np.prod(shape, dtype=np.int64))
    assert x.shape == shape
    assert isinstance(x.shape, tuple)
    assert x.ndim == len(shape)
    assert x.size == size
    assert x.dtype == MX[dt]
    assert x.itemsize == ITEMSIZE[dt]
    assert x.nbytes == size * ITEMSIZE[dt]


def test_attributes_of_views():
    x = mx.zeros((4, 6), mx.int16)
    y = x[::2, 1:4]
    assert y.shape == (2, 3) and y.size == 6 and y.nbytes == 12 and y.ndim == 2
    assert x.T.shape == (6, 4)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_transpose_property(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    assert_array_equal_np(mx.array(a).T, a.T)


# ----------------------------------------------------------------------------- scalars / lists
@pytest.mark.parametrize(
    "dt,value,pytype",
    [
        ("bool", True, bool),
        ("uint8", 200, int),
        ("int8", -5, int),
        ("int32", 123456, int),
        ("int64", -(2**40), int),
        ("uint32", 2**32 - 1, int),
        ("float16", 1.5, float),
        ("float32", -2.25, float),
        ("float64", 0.1, float),
        ("bfloat16", 3.5, float),
        ("complex64", 1 - 2j, complex),
    ],
)
def test_item(dt, value, pytype):
    x = mx.array(np.array([value]).astype(NP[dt]), dtype=MX[dt])
    x2 = mx.array(np.array([[value]]).astype(NP[dt]), dtype=MX[dt])
    for v in (x, x[0], x2):
        got = v.item()
        assert type(got) is pytype
        assert got == value


def test_item_extreme_integers():
    assert mx.array(np.array([2**64 - 1], np.uint64))[0].item() == 2**64 - 1
    assert mx.array(np.array([-(2**63)], np.int64))[0].item() == -(2**63)


def test_item_of_many_elements_raises():
    with pytest.raises(ValueError):
        mx.array([1, 2]).item()
    with pytest.raises(ValueError):
        mx.zeros((0,)).item()


@pytest.mark.parametrize("dt", ALL)
def test_tolist(dt):
    a = np_values(np.array([[0, 1, 2], [3, 4, 5]]) % (2 if dt == "bool" else 100), dt)
    x = to_mx(a, dt)
    got = x.tolist()
    ref = a.tolist()
    assert got == ref
    pytype = {"bool": bool, "complex64": complex}.get(
        dt, float if dt in ("float16", "float32", "float64", "bfloat16") else int
    )
    assert all(type(v) is pytype for row in got for v in row)


def test_tolist_scalars_and_empty():
    assert mx.array(3).tolist() == 3
    assert mx.array(2.5).tolist() == 2.5
    assert mx.zeros((0,)).tolist() == []
    assert mx.zeros((2, 0)).tolist() == [[], []]
    assert mx.array([1, 2, 3])[::-1].tolist() == [3, 2, 1]


def test_len_and_iter():
    a = np.arange(6, dtype=np.int32).reshape(3, 2)
    x = mx.array(a)
    assert len(x) == 3
    assert len(x.T) == 2
    rows = list(x)
    assert len(rows) == 3
    for r, ra in zip(rows, a):
        assert_array_equal_np(r, ra)
    assert [v.item() for v in mx.array([4, 5])] == [4, 5]
    assert list(mx.zeros((0, 2))) == []
    with pytest.raises(TypeError):
        len(mx.array(1))
    with pytest.raises(TypeError):
        iter(mx.array(1))


def test_bool():
    assert bool(mx.array(1)) is True
    assert bool(mx.array([0])) is False
    assert bool(mx.array([[2.5]])) is True
    assert bool(mx.array(False)) is False
    with pytest.raises(ValueError):
        bool(mx.array([1, 2]))
    with pytest.raises(ValueError):
        bool(mx.zeros((0,)))


# ----------------------------------------------------------------------------- repr
@pytest.mark.parametrize(
    "make,text",
    [
        (lambda: mx.array([1, 2, 3]), "array([1, 2, 3], dtype=int32)"),
        (lambda: mx.array(7), "array(7, dtype=int32)"),
        (lambda: mx.array(1.5), "array(1.5, dtype=float32)"),
        (lambda: mx.array([1.5, 2.25]), "array([1.5, 2.25], dtype=float32)"),
        (lambda: mx.array([1, 2.5]), "array([1, 2.5], dtype=float32)"),
        (lambda: mx.array([True, False]), "array([True, False], dtype=bool)"),
        (lambda: mx.array([1, 2], mx.uint8), "array([1, 2], dtype=uint8)"),
        (lambda: mx.array([[1, 2], [3, 4]]), "array([[1, 2],\n       [3, 4]], dtype=int32)"),
        (lambda: mx.zeros((0,)), "array([], dtype=float32)"),
        (lambda: mx.array([1.5], mx.bfloat16), "array([1.5], dtype=bfloat16)"),
        (lambda: mx.array([3, 2, 1])[::-1], "array([1, 2, 3], dtype=int32)"),
    ],
    ids=[
        "ints",
        "0d-int",
        "0d-float",
        "floats",
        "int-valued-float",
        "bool",
        "uint8",
        "2d",
        "empty",
        "bf16",
        "view",
    ],
)
def test_repr(make, text):
    x = make()
    assert repr(x) == text
    assert str(x) == text


# ----------------------------------------------------------------------------- NumPy interop
@pytest.mark.parametrize("dt", [d for d in ALL if d != "bfloat16"])
def test_numpy_round_trip(dt):
    a = np_values(np.arange(12).reshape(3, 4) % (2 if dt == "bool" else 50), dt)
    x = to_mx(a, dt)
    for b in (np.array(x), np.asarray(x)):
        assert b.dtype == a.dtype
        np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(np.array(x.T), a.T)
    np.testing.assert_array_equal(np.array(x[::2, ::-1]), a[::2, ::-1])
    assert_array_equal_np(mx.array(np.array(x), dtype=MX[dt]), a, dtype=dt)


def test_numpy_copy_is_independent():
    x = mx.array([1.0, 2.0, 3.0])
    a = np.array(x)
    a[0] = 10.0
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_asarray_of_lazy_array_evaluates():
    x = mx.arange(5) * 3
    np.testing.assert_array_equal(np.asarray(x), np.arange(5, dtype=np.int32) * 3)


def test_asarray_shares_memory_with_the_array():
    x = mx.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    mx.eval(x)
    a, b = np.asarray(x), np.asarray(x)
    assert np.shares_memory(a, b)
    assert np.shares_memory(np.asarray(memoryview(x)), a)
    assert a.ctypes.data == b.ctypes.data


def test_buffer_protocol():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = mx.array(a)
    m = memoryview(x)
    assert m.shape == (3, 4)
    assert m.itemsize == 4
    assert m.nbytes == 48
    assert m.ndim == 2
    np.testing.assert_array_equal(np.asarray(m), a)
    mt = memoryview(x.T)
    assert mt.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(mt), a.T)


@pytest.mark.parametrize("dt", [d for d in ALL if d != "bfloat16"])
def test_buffer_protocol_formats(dt):
    a = np_values(np.array([0, 1, 1, 0]), dt)
    m = memoryview(to_mx(a, dt))
    b = np.asarray(m)
    assert b.dtype == a.dtype
    assert m.itemsize == ITEMSIZE[dt]
    np.testing.assert_array_equal(b, a)


def test_dlpack_export_is_zero_copy():
    x = mx.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    mx.eval(x)
    d = np.from_dlpack(x)
    np.testing.assert_array_equal(d, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert np.shares_memory(d, np.asarray(x))
    dt_ = np.from_dlpack(x.T)
    np.testing.assert_array_equal(dt_, np.arange(6, dtype=np.float32).reshape(2, 3).T)


@pytest.mark.parametrize(
    "dt", ["bool", "uint8", "int16", "int64", "float16", "float64", "complex64"]
)
def test_dlpack_export_dtypes(dt):
    a = np_values(np.array([[1, 0], [0, 1]]), dt)
    np.testing.assert_array_equal(np.from_dlpack(to_mx(a, dt)), a)


def test_dlpack_device():
    dev = mx.array([1.0]).__dlpack_device__()
    assert isinstance(dev, tuple) and len(dev) == 2
    assert all(isinstance(v, int) for v in dev)
    if mx.default_device() == mx.cpu:
        assert dev == (1, 0)  # kDLCPU, device 0


class _OnlyDLPack:
    """An object that exposes nothing but the DLPack protocol."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_import_via_dlpack():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_array_equal_np(mx.from_dlpack(a), a)
    assert_array_equal_np(mx.from_dlpack(_OnlyDLPack(a)), a)
    assert_array_equal_np(mx.array(_OnlyDLPack(a)), a)
    b = np.arange(10, dtype=np.int16)[::3]
    assert_array_equal_np(mx.from_dlpack(b), b)


@pytest.mark.nuvec_only
def test_import_via_dlpack_negative_strides():
    a = np.arange(10, dtype=np.int16)[::-2]
    assert_array_equal_np(mx.from_dlpack(a), a)
    assert_array_equal_np(mx.array(_OnlyDLPack(a)), a)


# ----------------------------------------------------------------------------- indexing
_A = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        1,
        slice(1, 3),
        slice(None, None, -1),
        slice(None, None, 2),
        slice(1, 1),
        (Ellipsis, 0),
        (Ellipsis, -1),
        None,
        (slice(None), None),
        (0, 1),
        (0, -1, 2),
        (slice(None), slice(None, None, -2)),
        (slice(None, None, -1), slice(None, None, -2)),
        (Ellipsis, None, slice(1, None)),
        (1, Ellipsis),
        (None, 0, None),
        (slice(5, 10),),
        (slice(-10, 10),),
        (slice(None), 2, slice(None, None, 3)),
    ],
    ids=repr,
)
def test_basic_indexing_matches_numpy(index):
    x = mx.array(_A)
    assert_array_equal_np(x[index], _A[index])


def test_indexing_a_view():
    x = mx.array(_A)
    assert_array_equal_np(x.T[1, ::-1], _A.T[1, ::-1])
    assert_array_equal_np(x[::-1][0, 1:], _A[::-1][0, 1:])
    assert_array_equal_np(mx.array(7)[None], np.array([7], np.int32))


def test_too_many_indices_raises():
    with pytest.raises((ValueError, IndexError)):
        mx.zeros((2, 3))[0, 0, 0]


@pytest.mark.nuvec_only
@pytest.mark.parametrize("index", [2, -3, (0, 3), (1, -4)])
def test_integer_index_out_of_range_raises_index_error(index):
    # MLX returns whatever lies past the end of the buffer.
    x = mx.zeros((2, 3))
    with pytest.raises(IndexError):
        mx.eval(x[index])


def _slices(n):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
    return st.builds(slice, bound, bound, step)


@st.composite
def _basic_index(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    parts = []
    for n in shape:
        if n > 0 and draw(st.booleans()) and draw(st.booleans()):
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            parts.append(draw(_slices(n)))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    k = draw(st.integers(0, len(parts)))
    return shape, tuple(parts[:k]) if draw(st.booleans()) else tuple(parts)


@given(_basic_index())
def test_basic_indexing_hypothesis(case):
    shape, index = case
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    assert_array_equal_np(mx.array(a)[index], a[index])
    # The same index on a transposed view.
    at = np.ascontiguousarray(a.T)
    if len(index) <= at.ndim:
        try:
            ref = at.T[index]
        except IndexError:
            return
        assert_array_equal_np(mx.array(at).T[index], ref)
