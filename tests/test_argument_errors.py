"""Wrong arguments raise what MLX raises, with messages that name the op the user called, and no
raw C++ exception (``RuntimeError('std::bad_cast')``) reaches the user from any public function.

* dtype arguments: MLX accepts only its own dtypes; NumPy dtypes, NumPy and Python types, names
  and ints raise TypeError (nuvec's message also names the nuvec dtype meant);
* operands that are not array-like name the op (``a + "x"`` names ``add``), strings say strings
  are not supported, and the reshape error shows the requested shape;
* the audit calls every public function and array method with wrong-typed arguments.
"""

import inspect
import re
import types

import numpy as np
import pytest

from _impl import IS_MLX, mx

NOT_MLX_DTYPES = [
    np.float32,
    np.dtype("float32"),
    "float32",
    np.int64,
    np.dtype("int8"),
    float,
    int,
    bool,
    3,
]

# name -> call(dtype): every function taking a dtype, as MLX spells its signature.
DTYPE_CALLS = {
    "zeros": lambda d: mx.zeros((2,), dtype=d),
    "ones": lambda d: mx.ones((2,), dtype=d),
    "full": lambda d: mx.full((2,), 1, dtype=d),
    "arange": lambda d: mx.arange(3, dtype=d),
    "linspace": lambda d: mx.linspace(0, 1, 3, dtype=d),
    "eye": lambda d: mx.eye(2, dtype=d),
    "identity": lambda d: mx.identity(2, dtype=d),
    "tri": lambda d: mx.tri(2, dtype=d),
    "array": lambda d: mx.array([1, 2], dtype=d),
    "astype": lambda d: mx.astype(mx.array([1, 2]), d),
    "array.astype": lambda d: mx.array([1, 2]).astype(d),
    "view": lambda d: mx.view(mx.array([1, 2]), d),
    "array.view": lambda d: mx.array([1, 2]).view(d),
    "cumsum": lambda d: mx.cumsum(mx.array([1, 2]), dtype=d),
    "cumprod": lambda d: mx.cumprod(mx.array([1, 2]), dtype=d),
    "random.uniform": lambda d: mx.random.uniform(shape=(2,), dtype=d),
    "random.normal": lambda d: mx.random.normal((2,), dtype=d),
    "random.randint": lambda d: mx.random.randint(0, 5, (2,), dtype=d),
    "random.gumbel": lambda d: mx.random.gumbel((2,), dtype=d),
    "random.laplace": lambda d: mx.random.laplace((2,), dtype=d),
    "random.truncated_normal": lambda d: mx.random.truncated_normal(-1, 1, (2,), dtype=d),
}
# MLX's cumsum/cumprod take no dtype (nuvec's do, converting first).
NUVEC_ONLY_DTYPE = {"cumsum", "cumprod"}


def _dtype_cases_iter():
    for name, call in DTYPE_CALLS.items():
        marks = [pytest.mark.nuvec_only] if name in NUVEC_ONLY_DTYPE else []
        yield pytest.param(call, id=name, marks=marks)


def _dtype_cases():
    return list(_dtype_cases_iter())


@pytest.mark.parametrize("dtype", NOT_MLX_DTYPES, ids=repr)
@pytest.mark.parametrize("call", _dtype_cases())
def test_dtype_that_is_not_a_framework_dtype_raises_type_error(call, dtype):
    with pytest.raises(TypeError):
        call(dtype)


@pytest.mark.parametrize("call", _dtype_cases())
def test_framework_dtypes_are_accepted(call):
    dtype = mx.int32 if call is DTYPE_CALLS["random.randint"] else mx.float32
    assert call(dtype).dtype == dtype


@pytest.mark.parametrize(
    "name",
    [
        "zeros",
        "ones",
        "full",
        "arange",
        "linspace",
        "eye",
        "identity",
        "tri",
        "array",
        "cumsum",
        "cumprod",
    ],
)
def test_dtype_none_is_the_default(name):
    if IS_MLX and name in NUVEC_ONLY_DTYPE:
        pytest.skip("MLX's cumsum/cumprod take no dtype")
    mx.eval(DTYPE_CALLS[name](None))


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "dtype, meant",
    [
        (np.float32, "float32"),
        (np.dtype("int8"), "int8"),
        ("uint16", "uint16"),
        (np.bool_, "bool_"),
        (float, None),
    ],
    ids=repr,
)
def test_dtype_error_names_the_op_and_the_dtype_meant(dtype, meant):
    with pytest.raises(TypeError, match=r"^zeros\(\): dtype must be a nuvec Dtype") as info:
        mx.zeros((2,), dtype=dtype)
    if meant:
        assert f"(use nuvec.{meant})" in str(info.value)
    else:
        assert "(use" not in str(info.value)


# ----------------------------------------------------------------------------- messages
@pytest.mark.parametrize(
    "call, op",
    [
        (lambda a: a + "x", "add"),
        (lambda a: "x" + a, "add"),
        (lambda a: a * "x", "multiply"),
        (lambda a: mx.add(a, "x"), "add"),
        (lambda a: mx.maximum(a, "x"), "maximum"),
    ],
    ids=["a+x", "x+a", "a*x", "add", "maximum"],
)
def test_operand_that_is_not_array_like_raises_value_error_naming_the_op(call, op):
    with pytest.raises(ValueError) as info:
        call(mx.array([1.0, 2.0]))
    if not IS_MLX:
        assert info.value.op_name == op
        assert str(info.value).startswith(op + ": ")


@pytest.mark.parametrize(
    "value",
    [["a", "b"], "a", [b"a"], ["a", 1], [[1], "a"]],
    ids=["strs", "str", "bytes", "mixed", "nested"],
)
def test_strings_raise_value_error_saying_strings_are_not_supported(value):
    with pytest.raises(ValueError) as info:
        mx.array(value)
    if not IS_MLX:
        assert "strings are not supported" in str(info.value)
        assert "format" not in str(info.value)


@pytest.mark.nuvec_only  # MLX: RuntimeError('std::bad_cast')
@pytest.mark.parametrize(
    "value", [np.array(["a", "b"]), np.array([b"a"])], ids=["unicode", "bytes"]
)
def test_numpy_string_arrays_raise_value_error(value):
    with pytest.raises(ValueError, match="strings are not supported"):
        mx.array(value)


def test_bytes_object_is_a_uint8_buffer_as_mlx():
    a = mx.array(b"ab")
    assert a.dtype == mx.uint8 and a.tolist() == [97, 98]


@pytest.mark.parametrize(
    "shape, shown",
    [((2, 2), "(2, 2)"), ((2, -1), "(2, -1)"), ((4,), "(4,)")],
    ids=["2x2", "infer", "1d"],
)
def test_reshape_error_shows_the_requested_shape(shape, shown):
    with pytest.raises(ValueError) as info:
        mx.reshape(mx.array([1, 2, 3]), shape)
    if not IS_MLX:
        assert str(info.value) == f"reshape: cannot reshape an array of size 3 into shape {shown}"
    with pytest.raises(ValueError):
        mx.array([1, 2, 3]).reshape(*shape)


# ----------------------------------------------------------------------------- the audit
# Functions with effects beyond their result (process-wide settings) are called by their own tests.
EFFECTS = {
    "set_cache_limit",
    "set_default_device",
    "set_default_stream",
    "set_memory_limit",
    "set_num_threads",
    "set_wired_limit",
    "clear_cache",
    "clear_streams",
    "set_printoptions",
    "reset_peak_memory",
    "seed",
}
WRONG = [None, "x", object(), np.float32, 2**70, -(2**70), 1.5, [object()], (2**70,), [[1], 2]]


def _public_functions():
    if IS_MLX:
        return []
    out = []
    for module in (mx, mx.random, mx.utils):
        for name in dir(module):
            obj = getattr(module, name)
            if (
                name.startswith("_")
                or name in EFFECTS
                or inspect.isclass(obj)
                or isinstance(obj, types.ModuleType)
            ):
                continue
            if callable(obj):
                out.append((f"{module.__name__}.{name}", obj))
    # Array methods by name: a bound method kept for the session would keep its array alive.
    for name in dir(mx.array):
        if not name.startswith("_") and callable(getattr(mx.array, name)):
            out.append((f"array.{name}", name))
    return out


def _raw_cxx(exc):
    """A C++ exception nanobind passed through untranslated: RuntimeError('std::...') and the like."""
    text = str(exc)
    return (
        type(exc) is RuntimeError or re.match(r"(std::|bad |basic_string|vector)", text) is not None
    )


@pytest.mark.nuvec_only  # MLX itself raises RuntimeError('std::bad_cast') for several of these
@pytest.mark.parametrize(
    "name, fn", _public_functions(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_wrong_arguments_never_raise_a_raw_cxx_exception(name, fn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the writers' "x" paths land here
    a = mx.ones((2, 2))
    if isinstance(fn, str):
        fn = getattr(mx.ones((2, 2)), fn)
    calls = [()]
    for w in WRONG:
        calls += [(w,), (a, w), (w, a), (a, a, w), (a, w, a), (w, w)]
    raw = []
    for args in calls:
        for kwargs in ({}, {"axis": 2**70}, {"dtype": np.float32}, {"stream": "cpu"}):
            try:
                fn(*args, **kwargs)
            except Exception as exc:  # any Python exception type but a raw C++ one is fine here
                if _raw_cxx(exc):
                    raw.append(f"{name}{args!r} {kwargs}: {type(exc).__name__}({exc})")
    assert not raw, "\n".join(raw[:10])


def test_synchronize_with_a_wrong_argument_raises_without_crashing():
    # nuvec converted the stream after releasing the GIL: a bad argument crashed the interpreter.
    with pytest.raises((TypeError, ValueError)):
        mx.synchronize("cpu")
    mx.synchronize(mx.default_stream(mx.cpu))


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param(lambda p, a: mx.sin(p[0]), id="array"),
        pytest.param(lambda p, a: [[mx.sin(p[0])], [0]], id="list"),
        pytest.param(
            lambda p, a: ([mx.sin(p[0])], "x"),
            id="bad-axes",
            marks=pytest.mark.nuvec_only,  # MLX: RuntimeError('std::bad_cast')
        ),
    ],
)
def test_custom_vmap_rule_that_returns_no_tuple_of_outputs_and_axes_raises_value_error(rule):
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    f.vmap(rule)
    with pytest.raises(ValueError):
        mx.vmap(f)(mx.ones((2, 3)))
