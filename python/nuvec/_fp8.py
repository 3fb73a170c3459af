"""MLX's fp8 (e4m3) conversions: ``to_fp8`` rounds floats to e4m3 codes held in uint8 (to
nearest, ties to even; NaN and magnitudes past 448 saturate to +-448), ``from_fp8`` decodes them.

The e4m3 format ("fn": no infinities, codes 0x7F and 0xFF are NaN) has 4 exponent bits (bias 7)
and 3 mantissa bits. Both are composed of ops in C++ (csrc/core/ops/fp8.cpp, which the C API's
nuvec_to_fp8 / nuvec_from_fp8 call too), so they are lazy and batchable.
"""

from . import _core
from . import _typing as _t
from ._core import array, bfloat16


def _check_array(x, op):
    if not isinstance(x, array):
        raise TypeError(f"{op}(): expected an array, got {type(x).__name__}")


def from_fp8(
    x: array, dtype: _core.Dtype = bfloat16, *, stream: _t.StreamLike | None = None
) -> array:
    """Decodes fp8 (e4m3) codes, a uint8 array, to ``dtype`` (a floating type; bfloat16 by default)."""
    _check_array(x, "from_fp8")
    return _core._from_fp8(x, dtype, stream=stream)


def to_fp8(x: array, *, stream: _t.StreamLike | None = None) -> array:
    """Rounds a floating array to fp8 (e4m3) codes (uint8), to nearest with ties to even; NaN
    and magnitudes past 448 saturate to the largest code of their sign (0x7E, 0xFE)."""
    _check_array(x, "to_fp8")
    return _core._to_fp8(x, stream=stream)
