"""Methods of `array` written in Python: printing, formatting and pickling as MLX, and NumPy interop."""

import math
import sys

import numpy as np

from . import _core
from ._printoptions import real_text

_EDGE = 3  # an axis longer than 2 * _EDGE shows its first and last _EDGE entries, as MLX


def _real_text(v):
    """A float as C++ streams print it (MLX's printing): "-nan" for a NaN with its sign set."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return real_text(v)


def _scalar_text(v, kind):
    if kind == "b":
        return "True" if v else "False"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        re, im = float(v.real), float(v.imag)
        if im >= 0 or math.isnan(im):
            return f"{_real_text(re)}+{_real_text(im)}j"
        return f"{_real_text(re)}-{_real_text(-im)}j"
    return _real_text(float(v))


def _rows_text(a, kind, depth):
    n = a.shape[0]
    rows = list(range(n)) if n <= 2 * _EDGE else [*range(_EDGE), None, *range(n - _EDGE, n)]
    if a.ndim == 1:
        parts = ["..." if i is None else _scalar_text(a[i], kind) for i in rows]
        return "[" + ", ".join(parts) + "]"
    parts = ["..." if i is None else _rows_text(a[i], kind, depth + 1) for i in rows]
    return "[" + (",\n" + " " * (len("array([") + depth)).join(parts) + "]"


def _repr(self):
    dtype = str(self.dtype).split(".")[-1]
    x = self.astype(_core.float32) if self.dtype == _core.bfloat16 else self
    a = np.asarray(x)
    body = _scalar_text(a[()], a.dtype.kind) if a.ndim == 0 else _rows_text(a, a.dtype.kind, 0)
    return f"array({body}, dtype={dtype})"


def _format(self, spec):
    """A 0-d array formats as its Python scalar; others only with an empty spec (their repr), as MLX."""
    if self.ndim == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to array.__format__")
    return _repr(self)


def _complex(self):
    return complex(self.item())


def _array_namespace(self, api_version=None):
    """The module with the array API functions: nuvec itself, as MLX returns mlx.core."""
    if api_version is not None:
        raise ValueError("explicitly specifying api_version is not supported")
    return sys.modules[__package__]


def _rebuild(data, dtype_name):
    """Unpickles an array: NumPy data and the nuvec dtype's name (bfloat16 travels as its uint16 bits)."""
    if dtype_name == "bfloat16":
        return _core.array(data, _core.uint16).view(_core.bfloat16)
    return _core.array(data, _core.bool_ if dtype_name == "bool" else getattr(_core, dtype_name))


def _reduce(self):
    name = str(self.dtype).split(".")[-1]
    bits = self.view(_core.uint16) if name == "bfloat16" else self
    return _rebuild, (np.array(bits), name)


def _array(self, dtype=None, copy=None):
    # bfloat16's buffer format is "bfloat16", which NumPy rejects with ValueError, as for MLX's arrays.
    a = np.asarray(memoryview(self))
    if dtype is not None and a.dtype != dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


_core.array.__repr__ = _repr
_core.array.__str__ = _repr
_core.array.__format__ = _format
_core.array.__complex__ = _complex
_core.array.__array_namespace__ = _array_namespace
_core.array.__reduce__ = _reduce
_core.array.__array__ = _array


def _shape_args(args):
    """x.reshape(2, 3) and x.reshape((2, 3)) alike."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _reshape(self, *shape, stream=None):
    return _core.reshape(self, _shape_args(shape), stream=stream)


def _transpose(self, *axes, stream=None):
    axes = _shape_args(axes)
    return _core.transpose(self, list(axes) if axes else None, stream=stream)


_core.array.reshape = _reshape
_core.array.transpose = _transpose


def _method(fn):
    """An op as an array method (compiled functions do not bind `self` by themselves)."""

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__, method.__doc__ = fn.__name__, fn.__doc__
    return method


for _name in (
    "flatten",
    "unflatten",
    "squeeze",
    "swapaxes",
    "moveaxis",
    "split",
    "diagonal",
    "diag",
    "abs",
    "square",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "exp",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "round",
    "conj",
    "conjugate",
    "take",
    "expand_dims",
):
    setattr(_core.array, _name, _method(getattr(_core, _name)))
