"""Methods of `array` written in Python: printing in MLX's style and NumPy interop."""

import numpy as np

from . import _core

_SUMMARY_THRESHOLD = 1000  # elements; above it each axis shows its first and last 3
_EDGE = 3


def _format_scalar(v, kind):
    if kind == "b":
        return "True" if v else "False"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        re, im = _format_scalar(v.real, "f"), _format_scalar(abs(v.imag), "f")
        return f"{re}{'-' if v.imag < 0 else '+'}{im}j"
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return f"{v:.6g}"


def _format(a, kind, indent, summarize):
    if a.ndim == 0:
        return _format_scalar(a[()], kind)
    n = a.shape[0]
    if summarize and n > 2 * _EDGE:
        idx = list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))
    else:
        idx = list(range(n))
    parts = ["..." if i is None else _format(a[i], kind, indent + 1, summarize) for i in idx]
    if a.ndim == 1:
        return "[" + ", ".join(parts) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _repr(self):
    dtype = str(self.dtype).split(".")[-1]
    x = self.astype(_core.float32) if self.dtype == _core.bfloat16 else self
    a = np.asarray(x)
    if a.size == 0:
        return f"array([], dtype={dtype})"
    body = _format(a, a.dtype.kind, len("array("), a.size > _SUMMARY_THRESHOLD)
    return f"array({body}, dtype={dtype})"


def _array(self, dtype=None, copy=None):
    x = self.astype(_core.float32) if self.dtype == _core.bfloat16 else self
    a = np.asarray(memoryview(x))
    if dtype is not None and a.dtype != dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


_core.array.__repr__ = _repr
_core.array.__str__ = _repr
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
