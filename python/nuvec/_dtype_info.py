"""Dtype queries as MLX's: finfo, iinfo, result_type, can_cast and isdtype."""

from . import _core
from . import _typing as _t
from ._errors import op_error

_D = _core.Dtype

# (bits, max, eps, smallest normal) of the floating types; complex64 reports float32's.
_FLOATS = {
    _D.float16: (16, 65504.0, 2.0**-10, 2.0**-14),
    _D.bfloat16: (16, (2 - 2.0**-7) * 2.0**127, 2.0**-7, 2.0**-126),
    _D.float32: (32, (2 - 2.0**-23) * 2.0**127, 2.0**-23, 2.0**-126),
    _D.float64: (64, 1.7976931348623157e308, 2.0**-52, 2.0**-1022),
}
_SIGNED = (_D.int8, _D.int16, _D.int32, _D.int64)
_UNSIGNED = (_D.uint8, _D.uint16, _D.uint32, _D.uint64)


def _name(dtype):
    return "bool" if dtype == _D.bool_ else dtype.name


def _check_dtype(op, dtype):
    if not isinstance(dtype, _D):
        raise TypeError(f"{op}: expected a Dtype, not {type(dtype).__name__}")


class finfo:  # noqa: N801 (MLX's name)
    """Machine limits of a floating dtype: bits, min, max, eps, smallest_normal, dtype."""

    def __init__(self, dtype: _core.Dtype, /) -> None:
        _check_dtype("finfo", dtype)
        if dtype == _D.complex64:
            dtype = _D.float32
        if dtype not in _FLOATS:
            raise op_error("finfo", f"dtype {_name(dtype)} is not inexact")
        self.bits, self.max, self.eps, self.smallest_normal = _FLOATS[dtype]
        self.min = -self.max
        self.dtype = dtype

    def __repr__(self):
        return f"finfo(min={self.min:g}, max={self.max:g}, dtype={_name(self.dtype)})"


class iinfo:  # noqa: N801 (MLX's name)
    """Machine limits of an integer dtype: min, max, dtype."""

    def __init__(self, dtype: _core.Dtype, /) -> None:
        _check_dtype("iinfo", dtype)
        bits = dtype.size * 8
        if dtype in _SIGNED:
            self.min, self.max = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        elif dtype in _UNSIGNED:
            self.min, self.max = 0, 2**bits - 1
        else:
            raise op_error("iinfo", f"only integer types are supported, not {_name(dtype)}")
        self.dtype = dtype

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={_name(self.dtype)})"


def result_type(*arrays_and_dtypes: _t.ArrayLike | _core.Dtype) -> _core.Dtype:
    """The dtype that promoting the inputs (arrays or dtypes) gives."""
    if not arrays_and_dtypes:
        raise op_error("result_type", "at least one array or dtype is required")
    dtypes = []
    for x in arrays_and_dtypes:
        if isinstance(x, _core.array):
            dtypes.append(x.dtype)
        elif isinstance(x, _D):
            dtypes.append(x)
        else:
            raise op_error("result_type", "the inputs must be arrays or dtypes")
    # The promotion of the ops themselves: add records a node (never evaluated) of the result dtype.
    out = dtypes[0]
    for d in dtypes[1:]:
        out = _core.add(_core.zeros((0,), out), _core.zeros((0,), d)).dtype
    return out


def can_cast(from_: _t.ArrayLike | _core.Dtype, to: _core.Dtype) -> bool:
    """Whether promoting `from_` (an array or a dtype) with `to` gives `to`."""
    if not isinstance(from_, (_core.array, _D)):
        raise op_error("can_cast", "`from_` must be an array or a dtype")
    _check_dtype("can_cast", to)
    return result_type(from_, to) == to


_KINDS = {
    "bool": (_D.bool_,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": tuple(_FLOATS),
    "complex floating": (_D.complex64,),
    "numeric": _SIGNED + _UNSIGNED + tuple(_FLOATS) + (_D.complex64,),
}


def isdtype(dtype: _core.Dtype, kind: _core.Dtype | str | tuple[_core.Dtype | str, ...]) -> bool:
    """Whether `dtype` is `kind`: a dtype, a kind name ("bool", "signed integer", "unsigned
    integer", "integral", "real floating", "complex floating", "numeric") or a tuple of those."""
    _check_dtype("isdtype", dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, _D):
            if dtype == k:
                return True
        elif isinstance(k, str):
            if k not in _KINDS:
                raise op_error("isdtype", f"unknown data type kind {k!r}")
            if dtype in _KINDS[k]:
                return True
        else:
            raise op_error("isdtype", "`kind` must be a dtype, a string, or a tuple of them")
    return False
