"""Errors: invalid calls raise at the call site. Against MLX the exception types are checked;
nuvec additionally raises `nuvec.OpError` (a ValueError) that names the op and the caller's
file and line, and evaluation-time failures name the op and where its node was made.

The call sites below are one-line lambdas: their line is the caller's line nuvec must report.
"""

import gc
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from _impl import mx

THIS_FILE = os.path.abspath(__file__)
_F = dict(float=lambda: mx.array([1.0, 2.0]), cplx=lambda: mx.array([1j, 2.0]))


@dataclass
class Bad:
    id: str
    fn: Callable
    # What MLX raises (nuvec's OpError is a ValueError, so ValueError is always accepted).
    exc: tuple = (ValueError,)
    # Acceptable op_name values for nuvec (None: not checked).
    ops: frozenset | None = None


def _ops(*names):
    return frozenset(names)


# fmt: off
BAD_CALLS = [
    Bad("add-broadcast", lambda: mx.add(mx.zeros((2, 3)), mx.zeros((4,))), ops=_ops("add")),
    Bad("operator-broadcast", lambda: mx.zeros((2, 3)) + mx.zeros((4,)), ops=_ops("add")),
    Bad("maximum-broadcast", lambda: mx.maximum(mx.zeros((2,)), mx.zeros((3,))), ops=_ops("maximum")),
    Bad("where-broadcast", lambda: mx.where(mx.array([True, False]), mx.zeros((3,)), 0), ops=_ops("where")),
    Bad("isclose-broadcast", lambda: mx.isclose(mx.zeros((2,)), mx.zeros((3,))), ops=_ops("isclose")),
    Bad("allclose-broadcast", lambda: mx.allclose(mx.zeros((2,)), mx.zeros((3,))), ops=_ops("allclose", "isclose")),
    Bad("int8-plus-1000", lambda: mx.zeros((2,), mx.int8) + 1000),
    Bad("uint8-minus-scalar", lambda: mx.subtract(mx.zeros((2,), mx.uint8), -1)),
    Bad("negative-bool", lambda: mx.negative(mx.array([True, False])), ops=_ops("negative")),
    Bad("neg-operator-bool", lambda: -mx.array([True, False]), ops=_ops("negative")),
    *[Bad(f"{op}-float", lambda op=op: getattr(mx, op)(_F["float"](), _F["float"]()), (ValueError, RuntimeError),
          _ops(op))
      for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")],
    Bad("and-operator-float", lambda: _F["float"]() & _F["float"](), ops=_ops("bitwise_and")),
    Bad("invert-float", lambda: mx.bitwise_invert(_F["float"]()), ops=_ops("bitwise_invert")),
    Bad("invert-operator-float", lambda: ~_F["float"](), ops=_ops("bitwise_invert")),
    Bad("expm1-complex", lambda: mx.expm1(_F["cplx"]()), ops=_ops("expm1")),
    Bad("erf-complex", lambda: mx.erf(_F["cplx"]()), ops=_ops("erf")),
    Bad("erfinv-complex", lambda: mx.erfinv(_F["cplx"]()), ops=_ops("erfinv")),
    Bad("sigmoid-complex", lambda: mx.sigmoid(_F["cplx"]()), ops=_ops("sigmoid")),
    Bad("floor-complex", lambda: mx.floor(_F["cplx"]()), ops=_ops("floor")),
    Bad("ceil-complex", lambda: mx.ceil(_F["cplx"]()), ops=_ops("ceil")),
    Bad("remainder-complex", lambda: mx.remainder(_F["cplx"](), _F["cplx"]()), ops=_ops("remainder")),
    Bad("divmod-complex", lambda: mx.divmod(_F["cplx"](), _F["cplx"]()), ops=_ops("divmod")),
    Bad("arctan2-complex", lambda: mx.arctan2(_F["cplx"](), _F["cplx"]()), ops=_ops("arctan2")),
    Bad("zeros-negative", lambda: mx.zeros((-1,)), ops=_ops("zeros", "full")),
    Bad("ones-negative", lambda: mx.ones((3, -1)), ops=_ops("ones", "full")),
    Bad("full-negative", lambda: mx.full((-2,), 1), ops=_ops("full")),
    Bad("zeros-huge", lambda: mx.zeros((2**40, 2**40)), (ValueError, OverflowError, MemoryError),
        _ops("zeros", "full")),
    Bad("ones-huge", lambda: mx.ones((2**31, 2**31, 4)), (ValueError, OverflowError, MemoryError),
        _ops("ones", "full")),
    Bad("reshape-size", lambda: mx.reshape(mx.zeros((6,)), (4,)), ops=_ops("reshape")),
    Bad("arange-zero-step", lambda: mx.arange(0, 10, 0), ops=_ops("arange")),
    Bad("arange-infinite", lambda: mx.arange(0, float("inf")), ops=_ops("arange")),
    Bad("eye-negative", lambda: mx.eye(-1), ops=_ops("eye")),
    Bad("linspace-negative", lambda: mx.linspace(0, 1, -1), ops=_ops("linspace")),
    Bad("view-indivisible", lambda: mx.ones((3,), mx.uint8).view(mx.uint16), ops=_ops("view")),
    Bad("array-ragged", lambda: mx.array([[1, 2], [3]]), ops=_ops("array")),
]
# fmt: on


def _ids(cases):
    return [c.id for c in cases]


@pytest.mark.parametrize("case", BAD_CALLS, ids=_ids(BAD_CALLS))
def test_invalid_call_raises(case):
    with pytest.raises(case.exc + (ValueError,)):
        out = case.fn()
        mx.eval(out)
    # The framework is unharmed afterwards.
    assert (mx.ones((3,)) + mx.ones((3,))).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.nuvec_only
@pytest.mark.parametrize("case", BAD_CALLS, ids=_ids(BAD_CALLS))
def test_invalid_call_raises_op_error_at_the_call_site(case):
    # No eval: the error comes from the call itself.
    with pytest.raises(mx.OpError) as info:
        case.fn()
    err = info.value
    assert isinstance(err, ValueError)
    if case.ops is not None:
        assert err.op_name in case.ops, (err.op_name, case.ops)
        assert err.op_name in str(err)
    assert os.path.abspath(err.filename) == THIS_FILE
    assert err.lineno == case.fn.__code__.co_firstlineno


@pytest.mark.nuvec_only
def test_op_error_class():
    assert issubclass(mx.OpError, ValueError)
    assert issubclass(mx.OpError, Exception)


@pytest.mark.nuvec_only
def test_op_error_names_the_op_and_the_caller():
    a, b = mx.zeros((2, 3)), mx.zeros((4,))
    with pytest.raises(mx.OpError) as info:
        line = inspect.currentframe().f_lineno + 1
        mx.add(a, b)
    err = info.value
    assert err.op_name == "add"
    assert os.path.abspath(err.filename) == THIS_FILE
    assert err.lineno == line
    assert "add" in str(err)
    assert "(2, 3)" in str(err) or "(2,3)" in str(err)

    # Through an operator, from a nested helper function: the helper's line.
    def helper():
        return a * b

    with pytest.raises(mx.OpError) as info:
        helper()
    assert info.value.op_name == "multiply"
    assert os.path.abspath(info.value.filename) == THIS_FILE
    assert info.value.lineno == helper.__code__.co_firstlineno + 1


@pytest.mark.nuvec_only
def test_op_error_is_catchable_as_value_error():
    try:
        mx.zeros((2,), mx.int8) + 1000
    except ValueError as e:
        assert isinstance(e, mx.OpError)
    else:
        pytest.fail("no error raised")


AXIS_ERRORS = [
    ("transpose", lambda: mx.transpose(mx.zeros((2, 3)), (0, 5))),
    ("expand_dims", lambda: mx.expand_dims(mx.zeros((2, 3)), 5)),
]


def _needs(name):
    if not hasattr(mx, name):
        pytest.skip(f"mx.{name} is not part of the framework yet")


@pytest.mark.parametrize("name,fn", AXIS_ERRORS, ids=[n for n, _ in AXIS_ERRORS])
def test_axis_out_of_range_raises(name, fn):
    _needs(name)
    with pytest.raises((IndexError, ValueError)):
        fn()


@pytest.mark.nuvec_only
@pytest.mark.parametrize("name,fn", AXIS_ERRORS, ids=[n for n, _ in AXIS_ERRORS])
def test_axis_out_of_range_is_op_error_and_index_error(name, fn):
    _needs(name)
    with pytest.raises(mx.OpError) as info:
        fn()
    assert isinstance(info.value, IndexError)
    assert info.value.op_name == name


# ----------------------------------------------------------------------------- eval-time errors
@pytest.fixture
def restore_memory_limit():
    gc.collect()
    mx.clear_cache()
    old = mx.set_memory_limit(1 << 40)
    mx.set_memory_limit(old)
    try:
        yield
    finally:
        mx.set_memory_limit(old)
        gc.collect()
        mx.clear_cache()


@pytest.mark.nuvec_only
def test_memory_limit_failure_names_the_op_and_source(restore_memory_limit):
    # MLX treats the limit as a soft hint on the CPU and allocates anyway.
    a = mx.zeros((4096, 1))
    b = mx.ones((1, 4096))
    mx.eval(a, b)
    mx.set_memory_limit(1 << 20)
    c = mx.add(a, b)  # 64 MB once evaluated
    with pytest.raises(Exception) as info:
        mx.eval(c)
    text = str(info.value)
    assert "add" in text
    assert os.path.basename(__file__) in text
    mx.set_memory_limit(1 << 40)
    # Nothing half-written is left behind: c evaluates once memory is available.
    assert c.shape == (4096, 4096)
    assert c[4095, 4095].item() == 1.0


@pytest.mark.nuvec_only
def test_unallocatable_array_fails_cleanly():
    # 2**40 float32 elements (4 TiB): either refused at the call, or at evaluation; never a
    # crash (MLX 0.32 segfaults here).
    try:
        x = mx.zeros((2**20, 2**20))
    except mx.OpError:
        return
    with pytest.raises(Exception) as info:
        mx.eval(x)
    assert "zeros" in str(info.value) or "full" in str(info.value)
    assert (mx.ones((2,)) * 2).tolist() == [2.0, 2.0]
