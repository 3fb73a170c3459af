// Sorting primitives on the CPU: a row-contiguous input, then the kernels of the instruction
// set chosen for this processor (backend/cpu/simd/sort.cpp).
#include "backend/cpu/sort.h"
#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "core/primitives/sort.h"

namespace nuvec::cpu {

AxisRows::AxisRows(const Shape& shape, int axis) {
  for (int i = 0; i < int(shape.size()); ++i) {
    if (i < axis)
      outer *= shape[i];
    else if (i > axis)
      inner *= shape[i];
  }
  n = shape.empty() ? 1 : shape[axis];
}

Array row_contiguous(const Array& a) {
  if (a.row_contiguous()) return a;
  Array c = Array::allocate(a.shape(), a.dtype());
  copy_into(a, c);
  return c;
}

namespace {

void eval_sort(const Sort& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  NUVEC_FOR_ISA(sort_axis)(row_contiguous(in[0]), prim.axis(), out[0], prim.indices());
}

void eval_partition(const Partition& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  NUVEC_FOR_ISA(partition_axis)(row_contiguous(in[0]), prim.axis(), prim.kth(), out[0], prim.indices());
}

}  // namespace

void register_sort_kernels(Backend& b) {
  b.add<Sort, eval_sort>();
  b.add<Partition, eval_partition>();
}

}  // namespace nuvec::cpu
