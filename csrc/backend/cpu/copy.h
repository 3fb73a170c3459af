// Copies (with conversion and broadcasting) and buffer donation, for other kernel families.
#pragma once
#include <vector>

#include "core/array.h"

namespace nuvec::cpu {
// `out` has its data (contiguous, or a strided view into a larger array); `in` broadcasts to out's shape.
void copy_into(const Array& in, Array& out);
// Gives `out` (unevaluated) the buffer of `in` when nothing else uses that buffer and it has out's
// shape, item size and a plain contiguous layout: the element-wise kernels then write in place.
// `holders`: the handles to `in` that the evaluating nodes themselves hold (a multi-output
// primitive's siblings each hold its inputs).
bool donate(const Array& in, Array& out, long holders = 1);
// The handles to `x` held by a multi-output primitive's outputs' nodes (each sibling holds the inputs).
inline long holders(const Array& x, const std::vector<Array>& out) {
  long n = 0;
  for (const Array& o : out)
    for (const Array& in : o.inputs()) n += in.is(x);
  return n;
}
}  // namespace nuvec::cpu
