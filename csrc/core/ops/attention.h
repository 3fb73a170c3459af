// nuvec.fast.scaled_dot_product_attention (MLX's mx.fast one) and plan_attention, which names the
// kernel a call routes to: routing depends only on shapes, dtypes and options (docs/attention.md).
#pragma once
#include <optional>
#include <string>

#include "core/ops/common.h"
#include "core/primitives/attention.h"

namespace nuvec {

// The decode kernel takes calls of at most this many query rows; more go to the prefill kernel.
constexpr int64_t kAttentionDecodeRows = 8;
// The decode kernel's key block: a row of n keys is n / kAttentionKeyBlock (rounded up) blocks,
// each one task, merged in order (so the split depends on the row's key count alone).
constexpr int64_t kAttentionKeyBlock = 256;
// The prefill kernel's tiles: query rows by keys.
constexpr int64_t kAttentionTileQ = 64, kAttentionTileK = 64;

struct AttentionPlan {
  std::string kernel;  // "decode", "prefill", "reference" (float64: the op composition) or "empty"
  Dtype compute = Dtype::float32;
  int64_t key_block = 0;           // decode: keys per block
  int64_t key_blocks = 0;          // decode: blocks of the last query row (it sees every key)
  int64_t tile_q = 0, tile_k = 0;  // prefill
  int64_t tasks = 0;               // independent pieces of work the threads share
};

// Validates as MLX does (OpError, a ValueError, with MLX's reasons) and returns the plan.
// mask_mode: "" (none), "causal", "array" (then mask_dtype and mask_shape name the array).
AttentionPlan plan_attention(const Shape& q, const Shape& k, const Shape& v, Dtype q_dtype, Dtype k_dtype,
                             Dtype v_dtype, const std::string& mask_mode, std::optional<Dtype> mask_dtype,
                             const std::optional<Shape>& mask_shape, std::optional<Dtype> sinks_dtype,
                             const std::optional<Shape>& sinks_shape);

Array scaled_dot_product_attention(const Array& q, const Array& k, const Array& v, float scale,
                                   const std::string& mask_mode, const std::optional<Array>& mask,
                                   const std::optional<Array>& sinks, Stream s);

// The same function composed of ops (matmul, where, softmax) in q's dtype, with the primitive's
// inputs: q, k, v, then the mask broadcast to (B, Hq, Lq, Lk) if p.mask is an array kind, then the
// sinks. The float64 route, and the derivative rules' definition.
Array attention_reference(const std::vector<Array>& inputs, const AttentionParams& p, Stream s);

// The reference's pieces, heads split as (B, Hkv, rep, ...): q scaled (B, Hkv, rep, Lq, D), k and v
// (B, Hkv, 1, Lk, D or Dv), the softmax weights w (B, Hkv, rep, Lq, Lk), with the sink's column
// first when p.sinks, and where a boolean or causal mask keeps a score (broadcastable to w's keys).
struct AttentionWeights {
  Array q, k, v, w;
  std::optional<Array> keep;
};
AttentionWeights attention_weights(const std::vector<Array>& inputs, const AttentionParams& p, Stream s);
// w without the sink's column.
Array attention_keys_weights(const AttentionWeights& a, Stream s);

}  // namespace nuvec
