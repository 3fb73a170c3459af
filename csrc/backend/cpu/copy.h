// Copies (with conversion and broadcasting) into a contiguous output, for other kernel families.
#pragma once
#include "core/array.h"

namespace nuvec::cpu {
// `out` has its data (contiguous, or a strided view into a larger array); `in` broadcasts to out's shape.
void copy_into(const Array& in, Array& out);
}  // namespace nuvec::cpu
