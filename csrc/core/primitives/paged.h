// The paged key/value cache's two primitives (nuvec's own; docs/attention.md "Paged attention"):
// paged_write stores new keys and values into page pools, paged_attention runs one query per
// sequence over the keys its block table names. A pool is (num_pages, page_size, Hkv, D): one
// token's heads are contiguous (a write is one copy), a head's rows page_size apart.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Inputs: q (B, Hq, 1, D) float32, k_pages (N, P, Hkv, D) and v_pages (N, P, Hkv, Dv) of one dtype
// (float32, float16 or bfloat16), block_tables (B, max_pages) int32, context_lens (B,) int32.
// Output (B, Hq, 1, Dv) float32: sequence b's query over its first context_lens[b] keys, in the
// decode attention kernel's 256-key blocks (page_size divides 256), merged in order, so each row
// has the bits of scaled_dot_product_attention's one-query call over the same keys laid out
// contiguously. A sequence of no keys gives zeros.
class PagedAttention : public Primitive {
 public:
  explicit PagedAttention(float scale) : scale_(scale) {}
  const char* name() const override { return "paged_attention"; }
  NUVEC_KERNEL_SLOT
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const PagedAttention*>(&o);
    return p && p->scale_ == scale_;
  }
  float scale() const { return scale_; }

 private:
  float scale_;
};

// Inputs: k_pages (N, P, Hkv, D), v_pages (N, P, Hkv, Dv), keys (T, Hkv, D), values (T, Hkv, Dv)
// of the pools' dtype, slot_mapping (T,) int32. Outputs: the pools with token t's key and value at
// slot s = slot_mapping[t] (row s % P of page s / P); a negative slot skips the token (vLLM's
// padding). Written over the input pools' buffers when nothing else holds them.
class PagedWrite : public Primitive {
 public:
  const char* name() const override { return "paged_write"; }
  NUVEC_KERNEL_SLOT
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const PagedWrite*>(&o) != nullptr; }
};

}  // namespace nuvec
