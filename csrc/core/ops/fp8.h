// MLX's fp8 (e4m3, "fn": no infinities, codes 0x7F and 0xFF are NaN) conversions, composed of ops
// so they are lazy, batchable and the same from Python and C.
#pragma once
#include "core/array.h"

namespace nuvec {

// A real floating array rounded to e4m3 codes (uint8): to nearest, ties to even; NaN and
// magnitudes past 448 saturate to the largest code of their sign (0x7E, 0xFE).
Array to_fp8(const Array& x, Stream s);
// e4m3 codes (uint8) decoded to `dtype`, a real floating type (NaN with MLX's bits per dtype).
Array from_fp8(const Array& x, Dtype dtype, Stream s);

}  // namespace nuvec
