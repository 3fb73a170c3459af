// The Walsh-Hadamard transform along the last axis (docs/matmul.md, "Hadamard transform").
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Input and output (..., N) of one float dtype, N = m * 2^k with m in {1, 12, 20, 28}: each row
// times scale * H (H = kron(H_m, H_2^k), H_m MLX's matrices), or H^T when `transposed` (the
// cotangent rule: H_20 and H_28 are not symmetric).
class Hadamard : public Primitive {
 public:
  Hadamard(float scale, bool transposed) : scale_(scale), transposed_(transposed) {}
  const char* name() const override { return "hadamard_transform"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* h = dynamic_cast<const Hadamard*>(&o);
    return h && h->scale_ == scale_ && h->transposed_ == transposed_;
  }
  float scale() const { return scale_; }
  bool transposed() const { return transposed_; }

 private:
  float scale_;
  bool transposed_;
};

// N = m * 2^k: m (1, 12, 20 or 28), or 0 when N has no such form.
int64_t hadamard_m(int64_t n);

}  // namespace nuvec
