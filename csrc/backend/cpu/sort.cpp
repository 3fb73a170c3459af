// Sorting primitives on the CPU: a row-contiguous input, then the kernels of the instruction
// set chosen for this processor (backend/cpu/simd/sort.cpp).
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/primitives/sort.h"

namespace nuvec::cpu {

AxisRows::AxisRows(const Shape& shape, int axis) {
  for (int i = 0; i < int(shape.size()); ++i) {
    if (i < axis) outer *= shape[i];
    else if (i > axis) inner *= shape[i];
  }
  n = shape.empty() ? 1 : shape[axis];
}

Array row_contiguous(const Array& a) {
  if (a.row_contiguous()) return a;
  Array c = Array::allocate(a.shape(), a.dtype());
  copy_into(a, c);
  return c;
}

}  // namespace nuvec::cpu

namespace nuvec {

void Sort::eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = cpu::row_contiguous(in[0]);
  switch (cpu::isa()) {
#if defined(__x86_64__)
    case cpu::Isa::avx512: return cpu::avx512::sort_axis(x, axis_, out[0], indices_);
    case cpu::Isa::avx2: return cpu::avx2::sort_axis(x, axis_, out[0], indices_);
#endif
    default: return cpu::portable::sort_axis(x, axis_, out[0], indices_);
  }
}

void Partition::eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = cpu::row_contiguous(in[0]);
  switch (cpu::isa()) {
#if defined(__x86_64__)
    case cpu::Isa::avx512: return cpu::avx512::partition_axis(x, axis_, kth_, out[0], indices_);
    case cpu::Isa::avx2: return cpu::avx2::partition_axis(x, axis_, kth_, out[0], indices_);
#endif
    default: return cpu::portable::partition_axis(x, axis_, kth_, out[0], indices_);
  }
}

}  // namespace nuvec
