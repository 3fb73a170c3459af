"""MLX's functions composed in Python of nuvec's ops: asarray, full_like and convolve, and the
Python form of unique (the other ops are in the C++ core)."""

import operator
from typing import Any

from . import _core
from . import _typing as _t
from ._dtypes import inexact, issubdtype
from ._errors import op_error


def asarray(a: Any, dtype: _core.Dtype | None = None, *, copy: bool | None = None) -> _core.array:
    """An array of `a` (a new array object, as MLX's); copy=False raises as MLX does on the CPU."""
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    return _core.array(a, dtype)


def full_like(
    a: _core.array,
    vals: _t.ArrayLike,
    dtype: _core.Dtype | None = None,
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """An array of a's shape filled with `vals` (broadcast), of a's dtype unless `dtype` is given."""
    a = a if isinstance(a, _core.array) else _core.array(a)
    return _core.full(a.shape, vals, a.dtype if dtype is None else dtype, stream=stream)


def unique(
    a: _core.array,
    /,
    size: int,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    fill_value: _t.ArrayLike | None = None,
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array | tuple[_core.array, ...]:
    """MLX's unique: the `size` smallest distinct elements of the flattened `a`, sorted, padded
    with `fill_value` (the smallest element when None) without evaluating `a`; optionally the
    first index of each (uint32), the inverse (uint32, a's shape) and the counts (int32)."""
    # Composed of ops in C++ (csrc/core/ops/unique.cpp), which the C API's nuvec_unique calls too.
    if not isinstance(a, _core.array):
        raise TypeError(f"unique(): a must be an array, not {type(a).__name__}")
    size = operator.index(size)
    fill = fill_value
    if fill is not None and not isinstance(fill, _core.array):
        fill = _core.array(fill)
    values, index, inverse, counts = _core._unique(a, size, fill, stream=stream)
    wanted = ((index, return_index), (inverse, return_inverse), (counts, return_counts))
    extra = [x for x, want in wanted if want]
    return (values, *extra) if extra else values


def convolve(
    a: _t.ArrayLike,
    v: _t.ArrayLike,
    /,
    mode: str = "full",
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The discrete convolution of two 1-D arrays (the longer one slides, and must be inexact;
    modes full, same, valid as NumPy), as MLX's: exact products summed per output element."""
    a = a if isinstance(a, _core.array) else _core.array(a)
    v = v if isinstance(v, _core.array) else _core.array(v)
    if a.ndim != 1 or v.ndim != 1:
        raise op_error("convolve", "inputs must be 1-D")
    if a.size == 0 or v.size == 0:
        raise op_error("convolve", "inputs cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise op_error("convolve", f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    if v.size > a.size:
        a, v = v, a
    if not issubdtype(a.dtype, inexact):  # the sliding input (MLX's conv1d input) must be inexact
        raise op_error("convolve", f"only inexact dtypes are supported, not {a.dtype}")
    n, m = a.size, v.size
    x = _core.pad(a, (m - 1, m - 1), stream=stream)
    start, length = {
        "full": (0, n + m - 1),
        "same": ((m - 1) // 2, n),
        "valid": (m - 1, n - m + 1),
    }[mode]
    windows = _core.arange(start, start + length)[:, None] + _core.arange(m)[None, :]
    products = _core.take(x, windows, stream=stream) * v[::-1]
    return _core.sum(products, axis=1, stream=stream)
