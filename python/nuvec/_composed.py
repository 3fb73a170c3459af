"""MLX's functions composed in Python of nuvec's ops: asarray, full_like, broadcast_shapes, median and
searchsorted (the other ops are in the C++ core)."""

import math
from collections.abc import Sequence
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


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to, as a tuple."""
    if not shapes:
        raise op_error("broadcast_shapes", "at least one shape is required")
    out = []
    for shape in shapes:
        if isinstance(shape, int) or not hasattr(shape, "__iter__"):
            raise TypeError(f"broadcast_shapes: shapes must be sequences of ints, not {shape!r}")
        shape = [int(d) for d in shape]
        n = max(len(out), len(shape))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(shape)) + shape
        if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
            raise op_error(
                "broadcast_shapes", f"shapes {tuple(out)} and {tuple(shape)} cannot be broadcast"
            )
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(out)


def median(
    a: _t.ArrayLike,
    /,
    axis: _t.Axis | None = None,
    keepdims: bool = False,
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The median over `axis` (all axes when None): the mean of the two middle values for an even
    count, NaN where a value is NaN; integers and bools give float32."""
    a = a if isinstance(a, _core.array) else _core.array(a)
    nd = a.ndim
    if axis is None:
        axes = list(range(nd))
    else:
        axes = [axis] if isinstance(axis, int) else list(axis)
        for i, ax in enumerate(axes):
            if not -nd <= ax < nd:
                raise op_error(
                    "median", f"axis {ax} is out of bounds for an array of dimension {nd}", True
                )
            axes[i] = ax % nd
        if len(set(axes)) != len(axes):
            raise op_error("median", "repeated axis")
    rest = [d for d in range(nd) if d not in axes]
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    if n == 0:
        raise op_error("median", "cannot take the median along an empty axis")
    x = a if issubdtype(a.dtype, inexact) else _core.astype(a, _core.float32)
    x = _core.transpose(x, rest + axes, stream=stream)
    x = _core.reshape(x, [a.shape[d] for d in rest] + [n], stream=stream)
    s = _core.sort(x, axis=-1, stream=stream)
    m = (s[..., (n - 1) // 2] + s[..., n // 2]) * 0.5
    m = _core.where(_core.any(_core.isnan(x), axis=-1, stream=stream), math.nan, m, stream=stream)
    if keepdims:
        m = _core.expand_dims(m, sorted(axes), stream=stream)
    return m


def searchsorted(
    sorted_sequence: _t.ArrayLike,
    values: _t.ArrayLike,
    /,
    side: str = "left",
    *,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Where `values` go in the 1-D ascending `sorted_sequence` to keep it sorted: per value, the
    count of elements below it ("left") or not above it ("right"), NaN last; uint32, values' shape.

    One stable sort of both together: a value's position there, less its position among the values,
    counts the elements before it (ties put the values first for "left", last for "right")."""
    a = (
        sorted_sequence
        if isinstance(sorted_sequence, _core.array)
        else _core.array(sorted_sequence)
    )
    v = values if isinstance(values, _core.array) else _core.array(values)
    if a.ndim != 1:
        raise op_error("searchsorted", f"the sorted sequence must be 1-D, not {a.ndim}-D")
    if side not in ("left", "right"):
        raise op_error("searchsorted", f"side must be 'left' or 'right', not {side!r}")
    flat = _core.reshape(v, (-1,), stream=stream)
    m = flat.size
    both = [flat, a] if side == "left" else [a, flat]
    rank = _core.argsort(_core.argsort(_core.concatenate(both, stream=stream), stream=stream))
    mine = rank[:m] if side == "left" else rank[a.size :]
    among = _core.argsort(_core.argsort(flat, stream=stream), stream=stream)
    return _core.reshape(mine - among, v.shape, stream=stream)
