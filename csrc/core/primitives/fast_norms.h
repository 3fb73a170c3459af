// The row normalizations of nuvec.fast: RMS norm, layer norm, and the residual add fused into an
// RMS norm. One primitive per call over the last axis; every row is computed alone, so a row's
// bits never depend on the other rows or on the thread count (docs/fast.md).
#pragma once
#include <cstdint>

#include "core/primitive.h"

namespace nuvec {

enum class NormKind : uint8_t { rms, layer, add_rms };

// Inputs: x, then residual (add_rms), then weight and bias where present (float32, shape (D,)).
// x and residual are float32, float16 or bfloat16; outputs: y in `out` dtype (x's or float32),
// and for add_rms h = x + residual in x's dtype (y = rms_norm(h)). Sums accumulate in float32.
class RowNorm : public Primitive {
 public:
  RowNorm(NormKind kind, bool weighted, bool biased, float eps)
      : kind_(kind), weighted_(weighted), biased_(biased), eps_(eps) {}
  const char* name() const override {
    return kind_ == NormKind::layer ? "layer_norm" : kind_ == NormKind::rms ? "rms_norm" : "add_rms_norm";
  }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const RowNorm*>(&o);
    return p && p->kind_ == kind_ && p->weighted_ == weighted_ && p->biased_ == biased_ && p->eps_ == eps_;
  }
  NormKind kind() const { return kind_; }
  bool weighted() const { return weighted_; }
  bool biased() const { return biased_; }
  float eps() const { return eps_; }
  // The input index of the weight and the bias (valid where present).
  int weight_index() const { return kind_ == NormKind::add_rms ? 2 : 1; }
  int bias_index() const { return weight_index() + (weighted_ ? 1 : 0); }

 private:
  NormKind kind_;
  bool weighted_, biased_;
  float eps_;
};

}  // namespace nuvec
