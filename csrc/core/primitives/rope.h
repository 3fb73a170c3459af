// Rotary positional encoding (nuvec.fast.rope) and nuvec's fused RMS norm + RoPE + key-cache
// write (nuvec.fast.norm_rope). Row (b, ..., t) of x (B, ..., T, D) turns its first `dims`
// features by the angles (offset_b + t) * scale / period_i, i < dims / 2, where period_i is
// base^(2i / dims) or freqs[i]; the rest pass unchanged. Angles are computed in float64 and each
// row alone, so a row's bits never depend on the other rows or the thread count.
#pragma once
#include <cstdint>

#include "core/primitive.h"

namespace nuvec {

struct RopeParams {
  int64_t dims = 0;
  bool traditional = false;  // rotate pairs (2i, 2i+1), else (i, i + dims/2)
  float base = 10000.0f;     // read when there is no freqs input
  float scale = 1.0f;
  int64_t offset = 0;        // read when there is no offset input
  bool inverse = false;      // the negated angles: the transpose (and inverse) of the rotation
  bool has_offsets = false;  // an int32 input of shape () or (B,) gives the offsets
  bool has_freqs = false;    // a float32 input of shape (dims / 2,) gives the periods
  bool operator==(const RopeParams&) const = default;
};

// Inputs: x (float32, float16 or bfloat16, at least 3-d), then offsets and freqs where present.
class Rope : public Primitive {
 public:
  explicit Rope(RopeParams p) : p_(p) {}
  const char* name() const override { return "rope"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* r = dynamic_cast<const Rope*>(&o);
    return r && r->p_ == p_;
  }
  const RopeParams& params() const { return p_; }

 private:
  RopeParams p_;
};

// Inputs: x (B, ..., T, D), the weight (float32 (D,)) when weighted, the cache (B, ..., S, D) in
// the output dtype, then offsets and freqs as Rope's. Outputs: y = rope(rms_norm(x, w, eps)) and
// the cache with rows offset_b .. offset_b + T - 1 of each (b, ...) replaced by y's.
class NormRope : public Primitive {
 public:
  NormRope(RopeParams p, float eps, bool weighted) : p_(p), eps_(eps), weighted_(weighted) {}
  const char* name() const override { return "norm_rope"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* r = dynamic_cast<const NormRope*>(&o);
    return r && r->p_ == p_ && r->eps_ == eps_ && r->weighted_ == weighted_;
  }
  const RopeParams& params() const { return p_; }
  float eps() const { return eps_; }
  bool weighted() const { return weighted_; }
  size_t cache_index() const { return weighted_ ? 2 : 1; }

 private:
  RopeParams p_;
  float eps_;
  bool weighted_;
};

}  // namespace nuvec
