// Copies (with conversion and broadcasting) and buffer donation, for other kernel families.
#pragma once
#include "core/array.h"

namespace nuvec::cpu {
// `out` has its data (contiguous, or a strided view into a larger array); `in` broadcasts to out's shape.
void copy_into(const Array& in, Array& out);
// Gives `out` (unevaluated) the buffer of `in` when nothing else uses that buffer and it has out's
// shape, item size and a plain contiguous layout: the element-wise kernels then write in place.
bool donate(const Array& in, Array& out);
}  // namespace nuvec::cpu
