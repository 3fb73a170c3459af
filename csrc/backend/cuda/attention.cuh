// scaled_dot_product_attention as the CUDA kernel sees it: backend/cuda/attention.cpp builds the
// operands, attention.cu computes them. Kernel files include no core header but dtype.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

constexpr int kAttentionMaxDim = 256;  // D and Dv the kernel takes

// q (B, Hq, Lq, D) float32; k (B, Hkv, Lk, D) and v (B, Hkv, Lk, Dv) of dtype kv; strides in
// elements (batch, head, row; rows have unit stride). out (B, Hq, Lq, Dv) float32, contiguous.
// mask: 0 none, 1 causal, 2 additive (float32), 3 boolean, at mask_strides (B, Hq, Lq, Lk).
struct AttentionRows {
  const float* q;
  const void* k;
  const void* v;
  float* out;
  const void* mask_data;
  const float* sinks;  // Hq logits, or null
  int64_t B, Hq, Hkv, Lq, Lk, D, Dv;
  int64_t qst[3], kst[3], vst[3], mask_strides[4];
  float scale;
  int mask;
  Dtype kv;
};

// Decode, prefill and wide-head kernels (attention.cu; docs/cuda.md, "Attention").
void attention_rows(const AttentionRows& a, cudaStream_t stream);

}  // namespace nuvec::cuda
