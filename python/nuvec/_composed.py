"""MLX's functions that are argument handling over nuvec's ops: asarray, full_like and
broadcast_shapes (the ops themselves are in the C++ core)."""

from . import _core
from ._errors import op_error


def asarray(a, dtype=None, *, copy=None):
    """An array of `a` (a new array object, as MLX's); copy=False raises as MLX does on the CPU."""
    if copy is False:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    return _core.array(a, dtype)


def full_like(a, vals, dtype=None, *, stream=None):
    """An array of a's shape filled with `vals` (broadcast), of a's dtype unless `dtype` is given."""
    a = a if isinstance(a, _core.array) else _core.array(a)
    return _core.full(a.shape, vals, a.dtype if dtype is None else dtype, stream=stream)


def broadcast_shapes(*shapes):
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
