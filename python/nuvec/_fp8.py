"""MLX's fp8 (e4m3) conversions: ``to_fp8`` rounds floats to e4m3 codes held in uint8 (to
nearest, ties to even; NaN and magnitudes past 448 saturate to +-448), ``from_fp8`` decodes them.

The e4m3 format ("fn": no infinities, codes 0x7F and 0xFF are NaN) has 4 exponent bits (bias 7)
and 3 mantissa bits. Both functions are composed of nuvec ops, so they are lazy and batchable.
"""

import functools
import struct

from . import _core
from . import _typing as _t
from ._core import array, bfloat16, float16, float32, float64, uint8, uint16, uint32, uint64

_FLOATS = (float16, bfloat16, float32, float64)


def _decode(code):
    """The value of an e4m3 code (a Python float; NaN for 0x7F and 0xFF)."""
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 3) & 0xF, code & 7
    if e == 0xF and m == 7:
        return float("nan")
    return sign * (m / 8 * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


# The bits of NaN each dtype gets, as MLX's from_fp8 gives them (by sign). MLX decodes to float32
# as 0x7FF00000 and narrows with its own float16 conversion; its bfloat16 NaN is the canonical one.
# (MLX's float64 results are wrong, docs/io.md: nuvec gives the values, with Python's NaN.)
_NAN_BITS = {
    float16: (0x7D00, 0xFD00),
    bfloat16: (0x7FC0, 0x7FC0),
    float32: (0x7FF00000, 0xFFF00000),
}
_BITS = {
    float16: ("<e", "<H", uint16),
    bfloat16: ("<f", "<I", uint16),
    float32: ("<f", "<I", uint32),
}


@functools.cache
def _table_bits(dtype):
    """The bits of the 256 decoded values in ``dtype`` (every e4m3 value is exact in each)."""
    pack, unpack, _ = _BITS[dtype]
    bits = []
    for code in range(256):
        v = _decode(code)
        if v != v:
            bits.append(_NAN_BITS[dtype][code >> 7])
        else:
            b = struct.unpack(unpack, struct.pack(pack, v))[0]
            bits.append(b >> 16 if dtype == bfloat16 else b)  # a float32 cut to its top half
    return bits


def _table(dtype):
    """The 256 decoded values as an array of ``dtype`` (Python data is cached, never arrays)."""
    if dtype == float64:
        return array([_decode(c) for c in range(256)], dtype=float64)
    return array(_table_bits(dtype), dtype=_BITS[dtype][2]).view(dtype)


def _check_array(x, op):
    if not isinstance(x, array):
        raise TypeError(f"{op}(): expected an array, got {type(x).__name__}")


def from_fp8(
    x: array, dtype: _core.Dtype = bfloat16, *, stream: _t.StreamLike | None = None
) -> array:
    """Decodes fp8 (e4m3) codes, a uint8 array, to ``dtype`` (a floating type; bfloat16 by default)."""
    _check_array(x, "from_fp8")
    if x.dtype != uint8:
        raise _core.OpError(f"from_fp8: the input must have type uint8, not {x.dtype}")
    if dtype not in _FLOATS:
        raise _core.OpError(f"from_fp8: only real floating types are supported, not {dtype}")
    return _core.take(_table(dtype), x, stream=stream)


# (unsigned type, mantissa bits, exponent bias) of the float types the rounding works in.
_LAYOUT = {float32: (uint32, 23, 127), float64: (uint64, 52, 1023)}


def to_fp8(x: array, *, stream: _t.StreamLike | None = None) -> array:
    """Rounds a floating array to fp8 (e4m3) codes (uint8), to nearest with ties to even; NaN
    and magnitudes past 448 saturate to the largest code of their sign (0x7E, 0xFE)."""
    _check_array(x, "to_fp8")
    if x.dtype not in _FLOATS:
        raise _core.OpError(f"to_fp8: only real floating types are supported, not {x.dtype}")
    s = stream
    wide = x if x.dtype == float64 else _core.astype(x, float32, stream=s)  # half types: exact
    utype, mant, bias = _LAYOUT[wide.dtype]
    bits = _core.view(wide, utype, stream=s)
    top = (8 if utype == uint64 else 4) * 8 - 8  # leaves the sign bit as 0x80
    sign = _core.bitwise_and(_core.right_shift(bits, top, stream=s), 0x80, stream=s)
    mag = _core.abs(wide, stream=s)
    big = _core.logical_or(_core.isnan(mag, stream=s), mag >= 448.0, stream=s)
    mag = _core.where(big, 448.0, mag, stream=s).astype(wide.dtype)
    # Normal e4m3 values: rebias the exponent and round the mantissa to 3 bits, ties to even.
    mbits = _core.view(mag, utype, stream=s)
    drop = mant - 3
    odd = _core.bitwise_and(_core.right_shift(mbits, drop, stream=s), 1, stream=s)
    rebased = mbits - ((bias - 7) << mant) + ((1 << (drop - 1)) - 1) + odd
    normal = _core.right_shift(rebased, drop, stream=s)
    # Subnormal ones (below 2**-6): adding 2**(mant - 9) leaves the rounded multiple of 2**-9 in
    # the low bits, rounded by the float addition itself.
    magic = 2.0 ** (mant - 9)
    summed = _core.view((mag + magic).astype(wide.dtype), utype, stream=s)
    sub = summed - _core.view(_core.array(magic, dtype=wide.dtype), utype, stream=s)
    code = _core.where(mag < 2.0**-6, sub, normal, stream=s)
    return _core.bitwise_or(
        _core.astype(code, uint8, stream=s), _core.astype(sign, uint8, stream=s), stream=s
    )
