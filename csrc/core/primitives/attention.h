// scaled_dot_product_attention as one primitive: softmax(scale * q k^T + mask) v, per head, with
// grouped-query heads, causal / additive / boolean masks and per-head sinks (docs/attention.md).
// Its CPU kernels never hold the full score matrix; its derivative and vmap rules go through the
// composition of ops (ops/attention.h) that defines the same function.
#pragma once
#include "core/primitive.h"

namespace nuvec {

enum class AttentionMask : uint8_t { none, causal, additive, boolean };

struct AttentionParams {
  float scale = 1.0f;
  AttentionMask mask = AttentionMask::none;
  bool sinks = false;
  bool operator==(const AttentionParams&) const = default;
};

// Inputs (float32, row-contiguous after the kernel's copy): q (B, Hq, Lq, D), k (B, Hkv, Lk, D),
// v (B, Hkv, Lk, Dv), then the mask broadcast to (B, Hq, Lq, Lk) (float32 or bool) when it is an
// array, then the sinks (Hq,) float32. Output (B, Hq, Lq, Dv) float32. Query head h reads key
// head h / (Hq / Hkv). Causal: query i sees keys j <= i + Lk - Lq (aligned to the keys' end).
// A masked score (boolean or causal) is float32's lowest, as MLX's where(mask, s, finfo.min).
class ScaledDotProductAttention : public Primitive {
 public:
  explicit ScaledDotProductAttention(AttentionParams p) : p_(p) {}
  const char* name() const override { return "scaled_dot_product_attention"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* a = dynamic_cast<const ScaledDotProductAttention*>(&o);
    return a && a->p_ == p_;
  }
  const AttentionParams& params() const { return p_; }

 private:
  AttentionParams p_;
};

}  // namespace nuvec
