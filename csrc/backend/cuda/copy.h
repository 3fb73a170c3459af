// Copies on the GPU (with conversion and broadcasting), for other kernel families: the CUDA
// counterpart of backend/cpu/copy.h. Host code only: no CUDA header needed to call it.
#pragma once
#include "core/array.h"

namespace nuvec::cuda {
// `out` has its device data (contiguous, or a strided window of a larger array); `in` broadcasts
// to out's shape and converts to out's dtype with the CPU's meaning.
void copy_into(const Array& in, Array& out);
// x's elements in row-major order in a fresh device array of x's shape and dtype.
Array row_major_copy(const Array& x);
}  // namespace nuvec::cuda
