"""Creation as MLX has it (issue 11): arange's forms, inferred dtypes, errors and integer casts;
linspace with endpoint and dtype (MLX's values bit for bit); Python floats at double precision in
float64; mx.array of scalars, nested sequences and lists mixing arrays and scalars. Every test
without the nuvec_only mark passes on MLX too (NUVEC_TEST_IMPL=mlx); the expected values were read
off mlx.core 0.32.4."""

import numpy as np
import pytest

from _impl import mx

# ----------------------------------------------------------------------------- arange


@pytest.mark.parametrize(
    "args, kwargs, dtype",
    [
        ((5,), {}, "int32"),
        ((5.0,), {}, "float32"),
        ((0, 5, 0.5), {}, "float32"),
        ((2**31, 2**31 + 3), {}, "int64"),
        ((-(2**31) - 1, -(2**31) + 2), {}, "int64"),
        ((2**31 - 1, 2**31 + 1), {}, "int64"),
        ((-(2**31), -(2**31) + 2), {}, "int32"),
        ((0, 3, 2**40), {}, "int64"),
        ((0, 2**40, 2**39), {}, "int64"),
        ((True, 3), {}, "int32"),
        ((0, True), {}, "int32"),
        ((3,), {"step": True}, "int32"),
        ((10,), {"step": 3.0}, "float32"),
        ((1.5,), {}, "float32"),
        ((5,), {"dtype": mx.float64}, "float64"),
        ((0, 10, 3), {"dtype": mx.int64}, "int64"),
    ],
)
def test_arange_dtype(args, kwargs, dtype):
    x = mx.arange(*args, **kwargs)
    assert x.dtype == getattr(mx, dtype)
    start, stop, step = (0, args[0], kwargs.get("step", 1)) if len(args) == 1 else (*args, 1)[:3]
    expected = np.arange(start, stop, step, dtype=np.float64)
    np.testing.assert_allclose(np.array(x, dtype=np.float64), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "call, expected, dtype",
    [
        (lambda: mx.arange(5, 2, mx.int32), [0, 2, 4], "int32"),  # arange(stop, step, dtype)
        (lambda: mx.arange(5, 2, 1, mx.int32), [], "int32"),  # arange(start, stop, step, dtype)
        (lambda: mx.arange(0, 5, 0.5, mx.int32), [0] * 10, "int32"),
        (lambda: mx.arange(5, dtype=mx.int32, step=2), [0, 2, 4], "int32"),
        (lambda: mx.arange(stop=5, step=2), [0, 2, 4], "int32"),
        (lambda: mx.arange(start=1, stop=5, step=2, dtype=mx.int16), [1, 3], "int16"),
        (lambda: mx.arange(1, 5, step=2, dtype=mx.int16), [1, 3], "int16"),
        (lambda: mx.arange(True, dtype=mx.int32), [0], "int32"),
        (lambda: mx.arange(3, None), [0, 1, 2], "int32"),
        (lambda: mx.arange(3, None, 2), [0, 2], "int32"),
        (lambda: mx.arange(1, 5, None), [1, 2, 3, 4], "int32"),
        (lambda: mx.arange(1, 3, None, None), [1, 2], "int32"),
        (lambda: mx.arange(0, 3, 1, dtype=None), [0, 1, 2], "int32"),
        (lambda: mx.arange(0, 3, stream=mx.cpu), [0, 1, 2], "int32"),
        (lambda: mx.arange(3, stream=mx.cpu), [0, 1, 2], "int32"),
    ],
)
def test_arange_forms(call, expected, dtype):
    x = call()
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.arange(),
        lambda: mx.arange(None),
        lambda: mx.arange("3"),
        lambda: mx.arange(1, "3"),
        lambda: mx.arange(np.int64(4)),
        lambda: mx.arange(np.float32(4)),
        lambda: mx.arange(mx.array(4)),
        lambda: mx.arange(1 + 2j),
        lambda: mx.arange(2**63, 2**63 + 2),
        lambda: mx.arange(start=5),
        lambda: mx.arange(None, 3),
        lambda: mx.arange(0, 3, 1, None, None),
        lambda: mx.arange(0, 3, 1, dtype="float32"),
        lambda: mx.arange(5, dtype=np.float32),
        lambda: mx.arange(0, 5, 1, mx.float32, mx.cpu),
    ],
)
def test_arange_argument_errors_are_type_errors(call):
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.arange(0, 5, 0),
        lambda: mx.arange(0.0, 5.0, 0.0),
        lambda: mx.arange(True),
        lambda: mx.arange(False, True, True),
        lambda: mx.arange(5, dtype=mx.bool_),
        lambda: mx.arange(float("inf")),
        lambda: mx.arange(float("nan")),
        lambda: mx.arange(0, float("inf"), 1),
        lambda: mx.arange(0, 1e20, 1),
    ],
)
def test_arange_value_errors(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    "args, dtype, expected",
    [
        ((0, 5, 1.5), "int32", [0, 1, 2, 3]),  # the increment is int(0 + 1.5) - int(0) = 1
        ((-0.5, 3), "int32", [0, 0, 0, 0]),
        ((0.5, 3), "int32", [0, 1, 2]),
        ((0.5, 3.5, 1.0), "int32", [0, 1, 2]),
        ((5, 0, -0.5), "int32", [5, 4, 3, 2, 1, 0, -1, -2, -3, -4]),
        ((2.7, 0, -1), "int32", [2, 1, 0]),
        ((0, 3, 0.5), "uint8", [0] * 6),
        ((-3, 0), "uint8", [253, 254, 255]),
        ((5, 0, -1), "uint8", [5, 4, 3, 2, 1]),
        ((0, 5, 2), "float16", [0.0, 2.0, 4.0]),
        ((5,), "complex64", [0j, 1 + 0j, 2 + 0j, 3 + 0j, 4 + 0j]),
        ((5,), "bfloat16", [0.0, 1.0, 2.0, 3.0, 4.0]),
    ],
)
def test_arange_casts(args, dtype, expected):
    x = mx.arange(*args, dtype=getattr(mx, dtype))
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected


def test_arange_wraps_in_small_integer_dtypes():
    assert mx.arange(300, dtype=mx.uint8).tolist()[-3:] == [41, 42, 43]


@pytest.mark.parametrize("args", [(5, 0), (0, 5, -1), (0, 0), (0,), (-3,), (3, 1)])
def test_arange_empty_ranges(args):
    x = mx.arange(*args)
    assert x.shape == (0,) and x.dtype == mx.int32


def test_arange_float_values():
    assert mx.arange(0.1, 0.5, 0.1, dtype=mx.float64).tolist() == [
        0.1,
        0.2,
        0.30000000000000004,
        0.4,
    ]
    assert mx.arange(1, 2, 0.1).shape == (10,)
    assert mx.arange(0, 1, 0.1, dtype=mx.float64).shape == (10,)
    np.testing.assert_array_equal(
        np.array(mx.arange(0.1, 0.5, 0.1)), np.float32([0.1, 0.2, 0.3, 0.4])
    )


@pytest.mark.nuvec_only  # MLX adds the step up in float32: its 10**6th value is 100958.24
def test_arange_float_values_do_not_drift():
    x = np.array(mx.arange(0, 100000, 0.1))
    np.testing.assert_array_equal(x, (np.arange(x.size) * 0.1).astype(np.float32))


# ----------------------------------------------------------------------------- linspace


@pytest.mark.parametrize(
    "call, expected, dtype",
    [
        (lambda: mx.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0], "float32"),
        (lambda: mx.linspace(0, 1, 4, endpoint=False), [0.0, 0.25, 0.5, 0.75], "float32"),
        (lambda: mx.linspace(0, 1, 4, False), [0.0, 0.25, 0.5, 0.75], "float32"),
        (lambda: mx.linspace(0, 1, 5, True, mx.float64), [0.0, 0.25, 0.5, 0.75, 1.0], "float64"),
        (lambda: mx.linspace(0, 1, 3, True, mx.float32, mx.cpu), [0.0, 0.5, 1.0], "float32"),
        (lambda: mx.linspace(0, 1, 0), [], "float32"),
        (lambda: mx.linspace(0, 1, 0, endpoint=False), [], "float32"),
        (lambda: mx.linspace(0, 1, 1), [0.0], "float32"),
        (lambda: mx.linspace(0, 1, 1, endpoint=False), [0.0], "float32"),
        (lambda: mx.linspace(3.7, 1, 1, dtype=mx.int32), [3], "int32"),
        (lambda: mx.linspace(0, 1, 2), [0.0, 1.0], "float32"),
        (lambda: mx.linspace(1, 0, 5), [1.0, 0.75, 0.5, 0.25, 0.0], "float32"),
        (lambda: mx.linspace(0, 10, 4, dtype=mx.int32), [0, 3, 6, 10], "int32"),
        (lambda: mx.linspace(0, 10, 4, endpoint=False, dtype=mx.int32), [0, 2, 5, 7], "int32"),
        (lambda: mx.linspace(-5, 5, 4, dtype=mx.int32), [-5, -1, 1, 5], "int32"),
        (lambda: mx.linspace(-7, 10, 4, dtype=mx.int32), [-7, -1, 4, 10], "int32"),
        (lambda: mx.linspace(0.9, 2.9, 2, dtype=mx.int32), [0, 2], "int32"),
        (lambda: mx.linspace(0, 10, 4, dtype=mx.uint8), [0, 3, 6, 10], "uint8"),
        (lambda: mx.linspace(0, 2**30 + 1, 3, dtype=mx.int32), [0, 536870912, 1073741824], "int32"),
        (lambda: mx.linspace(0, 2**40, 3, dtype=mx.int64), [0, 2**39, 2**40], "int64"),
        (lambda: mx.linspace(0, 1, 3, dtype=mx.bool_), [False, True, True], "bool_"),
        (lambda: mx.linspace(-1, 1, 5, dtype=mx.bool_), [True, True, False, True, True], "bool_"),
        (lambda: mx.linspace(0, 1, 3, dtype=mx.complex64), [0j, 0.5 + 0j, 1 + 0j], "complex64"),
        (lambda: mx.linspace(0, 1, 3, dtype=mx.float16), [0.0, 0.5, 1.0], "float16"),
        (lambda: mx.linspace(0, 1, 3, dtype=mx.bfloat16), [0.0, 0.5, 1.0], "bfloat16"),
        (lambda: mx.linspace(True, 2, 3), [1.0, 1.5, 2.0], "float32"),
        (lambda: mx.linspace(np.float32(0), 2, 3), [0.0, 1.0, 2.0], "float32"),
        (lambda: mx.linspace(mx.array(0), 2, 3), [0.0, 1.0, 2.0], "float32"),
        (lambda: mx.linspace(0, 1, np.int64(3)), [0.0, 0.5, 1.0], "float32"),
        (lambda: mx.linspace(start=0, stop=1, num=3, dtype=None), [0.0, 0.5, 1.0], "float32"),
    ],
)
def test_linspace(call, expected, dtype):
    x = call()
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected


def test_linspace_values_are_mlx_bit_for_bit():
    f64 = mx.linspace(0.1, 0.7, 7, dtype=mx.float64).tolist()
    assert f64 == [0.1, 0.2, 0.3, 0.39999999999999997, 0.49999999999999994, 0.6000000000000001, 0.7]
    assert mx.linspace(0, 1, 7, dtype=mx.float64).tolist()[5] == 0.8333333333333334
    f32 = np.array(mx.linspace(0.1, 0.7, 7))
    assert f32[5] == np.float32(0.5999999642372131)
    no_end = mx.linspace(0.1, 0.7, 7, endpoint=False, dtype=mx.float64).tolist()
    assert no_end[1] == 0.18571428571428572 and no_end[6] == 0.6142857142857143
    assert mx.linspace(0.3, 1.7, 7, dtype=mx.bfloat16).tolist()[2] == 0.765625


def test_linspace_matches_mlx_on_random_arguments():
    mlx = pytest.importorskip("mlx.core")
    nv = pytest.importorskip("nuvec")
    rng = np.random.default_rng(11)
    names = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool_", "complex64"]
    for trial in range(160):
        start, stop = (rng.normal(size=2) * rng.choice([1, 10, 1000])).tolist()
        num, endpoint, name = (
            int(rng.integers(0, 40)),
            bool(rng.integers(0, 2)),
            names[trial % len(names)],
        )
        a = mlx.linspace(start, stop, num, endpoint=endpoint, dtype=getattr(mlx, name))
        b = nv.linspace(start, stop, num, endpoint=endpoint, dtype=getattr(nv, name))
        assert a.tolist() == b.tolist(), (start, stop, num, endpoint, name)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.linspace(0, 1, None),
        lambda: mx.linspace(0, 1, 3.0),
        lambda: mx.linspace(1j, 2, 3),
        lambda: mx.linspace("0", 2, 3),
        lambda: mx.linspace(0, 1, num=2**40),
        lambda: mx.linspace(0, 1, 3, endpoint=1),
        lambda: mx.linspace(0, 1, 3, endpoint=None),
        lambda: mx.linspace(0, 1, 3, dtype=np.float32),
    ],
)
def test_linspace_argument_errors_are_type_errors(call):
    with pytest.raises(TypeError):
        call()


def test_linspace_negative_num_is_a_value_error():
    with pytest.raises(ValueError):
        mx.linspace(0, 1, -1)


# ----------------------------------------------------------------------------- float64 precision
X64 = mx.zeros((2,), mx.float64)


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: mx.array(0.1, mx.float64).item(), 0.1),
        (lambda: mx.array(0.1, dtype=mx.float64).item(), 0.1),
        (lambda: mx.array([0.1, 0.2], mx.float64).tolist(), [0.1, 0.2]),
        (lambda: mx.array([[0.1]], mx.float64).tolist(), [[0.1]]),
        (lambda: mx.full((2,), 0.1, mx.float64).tolist(), [0.1, 0.1]),
        (lambda: mx.full((2,), 0.1, dtype=mx.float64).tolist(), [0.1, 0.1]),
        (lambda: (X64 + 0.1).tolist(), [0.1, 0.1]),
        (lambda: (0.1 + X64).tolist(), [0.1, 0.1]),
        (lambda: ((X64 + 1) * 0.1).tolist(), [0.1, 0.1]),
        (lambda: mx.add(X64, 0.1).tolist(), [0.1, 0.1]),
        (lambda: mx.maximum(X64, 0.1).tolist(), [0.1, 0.1]),
        (lambda: mx.where(mx.array([True, False]), 0.1, X64).tolist(), [0.1, 0.0]),
        (lambda: mx.array(np.float64(0.1), mx.float64).item(), 0.1),
        (lambda: mx.array(np.array([0.1]), mx.float64).tolist(), [0.1]),
        (lambda: mx.array(2**53 + 1, mx.int64).item(), 2**53 + 1),
        (lambda: mx.array([2**62 + 1], mx.int64).tolist(), [2**62 + 1]),
        # An array already float32 stays rounded, and NumPy float64 scalars narrow by default.
        (lambda: mx.full((2,), mx.array(0.1), mx.float64).tolist(), [0.10000000149011612] * 2),
        (lambda: mx.array(mx.array(0.1), mx.float64).item(), 0.10000000149011612),
        (lambda: mx.array(np.float64(0.1)).item(), 0.10000000149011612),
    ],
)
def test_python_floats_keep_double_precision_in_float64(call, expected):
    assert call() == expected


@pytest.mark.nuvec_only  # MLX rounds the Python floats to float32 first: 0.20000000298023224
def test_list_with_a_float64_array_keeps_python_floats():
    assert mx.array([mx.array([0.1], mx.float64), [0.2]]).tolist() == [[0.1], [0.2]]


@pytest.mark.nuvec_only  # MLX's full takes no list (ValueError)
def test_full_of_a_list_in_float64():
    assert mx.full((2,), [0.1, 0.2], mx.float64).tolist() == [0.1, 0.2]


# ----------------------------------------------------------------------------- mx.array of values
@pytest.mark.parametrize(
    "value, dtype",
    [
        (np.float64(1.5), "float32"),
        (np.float32(1.5), "float32"),
        (np.float16(1.5), "float16"),
        (np.int64(3), "int64"),
        (np.int32(3), "int32"),
        (np.int16(3), "int16"),
        (np.int8(3), "int8"),
        (np.uint64(2**63), "uint64"),
        (np.uint32(3), "uint32"),
        (np.uint16(3), "uint16"),
        (np.uint8(3), "uint8"),
        (np.bool_(True), "bool_"),
        (np.complex64(1j), "complex64"),
        (np.complex128(1j), "complex64"),
        (np.array(3, np.int16), "int16"),
        (True, "bool_"),
        (3, "int32"),
        (2**31, "int64"),
        (1.5, "float32"),
        (1j, "complex64"),
    ],
)
def test_array_of_scalars(value, dtype):
    x = mx.array(value)
    assert x.dtype == getattr(mx, dtype) and x.shape == ()
    assert x.item() == np.asarray(value).item()


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (1j, "float32", 0.0),
        (1.5, "int32", 1),
        (-1.5, "uint8", 255),
        (300, "uint8", 44),
        (-1, "uint32", 4294967295),
        ([300], "uint8", [44]),
        (True, "float32", 1.0),
        (1e40, "float32", float("inf")),
        (0.1, "bfloat16", 0.10009765625),
        (0.1, "float16", 0.0999755859375),
        (0.1, "complex64", 0.10000000149011612 + 0j),
    ],
)
def test_array_of_scalars_with_dtype(value, dtype, expected):
    assert mx.array(value, getattr(mx, dtype)).tolist() == expected


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        ([], "float32", []),
        ([[]], "float32", [[]]),
        ([[], []], "float32", [[], []]),
        ((), "float32", []),
        (((1, 2), (3, 4)), "int32", [[1, 2], [3, 4]]),
        ([1, 2**31], "int64", [1, 2**31]),
        ([1.5, 2**31], "float32", [1.5, 2147483648.0]),
        ([1, 2.0], "float32", [1.0, 2.0]),
        ([True, 2], "int32", [1, 2]),
        ([True, 2.5], "float32", [1.0, 2.5]),
        ([1, 1j], "complex64", [1 + 0j, 1j]),
        ([True, 1j], "complex64", [1 + 0j, 1j]),
        ([np.float64(0.1), 1], "float32", [0.10000000149011612, 1.0]),
    ],
)
def test_array_of_nested_sequences(value, dtype, expected):
    x = mx.array(value)
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected


def test_empty_list_with_dtype():
    assert mx.array([], mx.int32).dtype == mx.int32


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        ([mx.array([1, 2], mx.uint8), mx.array([3, 4], mx.uint8)], "uint8", [[1, 2], [3, 4]]),
        ([mx.array(1, mx.uint8), 2], "int32", [1, 2]),  # the scalar is int32 here, not weak
        ([mx.array(1, mx.uint8), 2.5], "float32", [1.0, 2.5]),
        ([mx.array([1, 2]), [3, 4]], "int32", [[1, 2], [3, 4]]),
        ([mx.array([1, 2]), [3.5, 4]], "float32", [[1.0, 2.0], [3.5, 4.0]]),
        (
            [mx.array([1, 2], mx.int16), mx.array([3, 4], mx.float16)],
            "float16",
            [[1.0, 2.0], [3.0, 4.0]],
        ),
        ([mx.array([1, 2], mx.int16), mx.array([3, 4], mx.int64)], "int64", [[1, 2], [3, 4]]),
        ([mx.array([1, 2], mx.uint8), mx.array([3, 4], mx.int8)], "int16", [[1, 2], [3, 4]]),
        (
            [mx.array([1, 2], mx.bfloat16), mx.array([3, 4], mx.bfloat16)],
            "bfloat16",
            [[1.0, 2.0], [3.0, 4.0]],
        ),
        ([mx.array([1, 2], mx.bfloat16), [3, 4]], "bfloat16", [[1.0, 2.0], [3.0, 4.0]]),
        ([mx.array([1, 2], mx.float64), [3, 4]], "float64", [[1.0, 2.0], [3.0, 4.0]]),
        ([mx.array(0.5, mx.float16), 0.1], "float32", [0.5, 0.10000000149011612]),
        ([mx.array(True), 2], "int32", [1, 2]),
        ([mx.array(True), mx.array(False)], "bool_", [True, False]),
        ([mx.array(1 + 1j), 2], "complex64", [1 + 1j, 2 + 0j]),
        ([[mx.array(1), 2], [3, 4]], "int32", [[1, 2], [3, 4]]),
        ([[mx.array(1, mx.int8), 2], [3, mx.array(4, mx.int16)]], "int32", [[1, 2], [3, 4]]),
        ([mx.array(1, mx.int8), 1000], "int32", [1, 1000]),
        ([mx.array(1, mx.int32), 2**40], "int64", [1, 2**40]),
        ([mx.zeros((0,), mx.int16), []], "float32", [[], []]),  # an empty list is float32 data
    ],
)
def test_array_of_a_list_of_arrays(value, dtype, expected):
    x = mx.array(value)
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected


def test_array_of_a_list_of_arrays_with_dtype():
    x = mx.array([mx.array([1, 2]), mx.array([3, 4])], mx.float32)
    assert x.dtype == mx.float32 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert mx.array([mx.array(1, mx.uint8)], mx.float64).tolist() == [1.0]


@pytest.mark.parametrize(
    "value",
    [
        [[1, 2], [3]],
        [[1, 2], 3],
        [1, [2, 3]],
        [[[1]], [[1, 2]]],
        [[1], []],
        [[], [1]],
        [mx.array([1, 2]), mx.array([3])],
        [mx.array([1, 2]), 3],
        [3, mx.array([1, 2])],
        [None],
        [1, None],
        ["a"],
        "a",
        [b"a"],
        [1, "a"],
        [[1, 2], "ab"],
        {1: 2},
        {1, 2},
        iter([1, 2]),
        range(4),
        [range(2), range(2)],
        object(),
        [object()],
    ],
    ids=repr,
)
def test_array_of_invalid_values_is_a_value_error(value):
    with pytest.raises(ValueError):
        mx.array(value)


def test_array_of_none_is_a_type_error():
    with pytest.raises(TypeError):
        mx.array(None)


@pytest.mark.nuvec_only  # MLX rejects NumPy scalars (other than float64) and arrays inside lists
@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        ([np.float32(1.5), 2], "float32", [1.5, 2.0]),
        ([np.int8(1), np.int8(2)], "int8", [1, 2]),
        ([np.uint8(1), 2], "int32", [1, 2]),
        ([np.array([1, 2], np.uint8), np.array([3, 4], np.uint8)], "uint8", [[1, 2], [3, 4]]),
        ([mx.array([1, 2], mx.uint8), np.array([3, 4], np.uint8)], "uint8", [[1, 2], [3, 4]]),
        (([1, 2], (3, 4)), "int32", [[1, 2], [3, 4]]),  # MLX: lists and tuples may not mix
    ],
)
def test_array_of_lists_with_numpy_values(value, dtype, expected):
    x = mx.array(value)
    assert x.dtype == getattr(mx, dtype) and x.tolist() == expected
