// Helpers the CPU sort and scan kernels share: both work row by row along one axis of a
// row-contiguous array.
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

}  // namespace nuvec::cpu
