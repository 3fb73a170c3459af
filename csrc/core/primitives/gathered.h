// Products of gathered and segmented matrices (docs/matmul.md, "Gathered, segmented and masked
// products"). Their CPU kernels run matmul's own product (backend/cpu/matmul.h, cpu::gemm), so a
// gathered row gets the bits of its one-row dense product.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// kind product: inputs a (A..., M, K), b (B..., K, N), lhs and rhs (uint32 of one shape I, flat
// indices into A... and B...); output (I..., M, N), out[i] = a[lhs[i]] @ b[rhs[i]].
// kind grad_b: inputs a (A..., M, K), g (I..., M, N), lhs, rhs; output (B..., K, N), out[e] = the
// sum over i with rhs[i] = e, in increasing i, of a[lhs[i]]^T @ g[i] (one product whose inner
// axis is those rows of a and g in that order: b's cotangent, deterministic).
class GatherMM : public Primitive {
 public:
  enum class Kind { product, grad_b };
  explicit GatherMM(Kind k) : kind_(k) {}
  const char* name() const override { return kind_ == Kind::product ? "gather_mm" : "gather_mm_grad_b"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* g = dynamic_cast<const GatherMM*>(&o);
    return g && g->kind_ == kind_;
  }
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Inputs a (M, K), b (K, N), segments (S..., 2) uint32; output (S..., M, N): out[s] =
// a[:, s0:s1] @ b[s0:s1, :] (zeros where s1 <= s0).
class SegmentedMM : public Primitive {
 public:
  const char* name() const override { return "segmented_mm"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const SegmentedMM*>(&o) != nullptr; }
};

}  // namespace nuvec
