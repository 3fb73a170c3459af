// The matrix product family.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Rows this many or fewer get, row by row, the bits of the same row's one-row product
// (nuvec.ROW_INDEPENDENT_ROWS; docs/matmul.md states the promise).
constexpr int64_t kRowIndependentRows = 256;

// A primitive because no composition of element-wise ops and reductions reaches the speed of
// packed, register-blocked kernels. Inputs: a (..., M, K) and b (..., K, N) of one dtype with
// equal batch shapes (broadcast views); output (..., M, N) of that dtype.
class Matmul : public Primitive {
 public:
  const char* name() const override { return "matmul"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const Matmul*>(&o) != nullptr; }
};

}  // namespace nuvec
