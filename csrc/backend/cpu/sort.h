// The CPU sort kernels' entry points, and helpers the sort and scan kernels share (both work
// row by row along one axis of a row-contiguous array).
#pragma once
#include <cstdint>

#include "core/array.h"

namespace nuvec::cpu {

// The rows along `axis` of a row-contiguous array seen as [outer, n, inner]: row r starts at
// element base(r) and steps by `inner`.
struct AxisRows {
  AxisRows(const Shape& shape, int axis);
  int64_t outer = 1, n = 1, inner = 1;
  int64_t count() const { return outer * inner; }
  int64_t base(int64_t r) const { return (r / inner) * n * inner + r % inner; }
};

// `a` itself when row-contiguous, else a row-contiguous copy.
Array row_contiguous(const Array& a);

// The sort and partition kernels of each instruction set's build (backend/cpu/simd/sort.cpp):
// `x` is row-contiguous, `out` row-contiguous and allocated; values, or uint32 indices.
#define NUVEC_DECLARE_SORT_ISA(ns)                                                      \
  namespace ns {                                                                        \
  void sort_axis(const Array& x, int axis, Array& out, bool indices);                   \
  void partition_axis(const Array& x, int axis, int64_t kth, Array& out, bool indices); \
  }
NUVEC_DECLARE_SORT_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_SORT_ISA(avx2)
NUVEC_DECLARE_SORT_ISA(avx512)
#endif
#undef NUVEC_DECLARE_SORT_ISA

}  // namespace nuvec::cpu
