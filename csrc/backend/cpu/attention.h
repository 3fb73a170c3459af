// The CPU attention kernels' operands, and their loops in each instruction set's build
// (backend/cpu/simd/attention.cpp). docs/attention.md describes both kernels.
#pragma once
#include <cstdint>

#include "backend/cpu/matmul.h"
#include "core/primitives/attention.h"

namespace nuvec::cpu {

struct AttentionOperands {
  const float *q, *k, *v;  // row-contiguous (B, Hq, Lq, D), (B, Hkv, Lk, D), (B, Hkv, Lk, Dv)
  float* out;              // (B, Hq, Lq, Dv)
  int64_t B, Hq, Hkv, Lq, Lk, D, Dv;
  float scale;
  AttentionMask mask;
  const char* mask_data;  // float32 or bool elements of (B, Hq, Lq, Lk) at mask_strides (elements)
  int64_t mask_strides[4];
  const float* sinks;  // Hq values, or null
  const MatmulKernels* mm;  // the matrix-product micro-kernels of the same build
};

// The decode kernel's piece: keys [k0, k1) (at most kAttentionKeyBlock) of query row i of head
// (b, h), as part = {max score, sum of exp(score - max), the Dv weighted value sums}. Every score
// is masked (float32's lowest) when `all_masked`. A row's parts depend only on its keys.
// The merge: a row's nb parts in order, then the head's sink, divided out into `out` (Dv values).
#define NUVEC_DECLARE_ATTENTION_ISA(ns)                                                                     \
  namespace ns {                                                                                            \
  void attention_decode_block(const AttentionOperands& a, int64_t b, int64_t h, int64_t i, int64_t k0,      \
                              int64_t k1, bool all_masked, float* part);                                    \
  void attention_decode_merge(const AttentionOperands& a, const float* parts, int64_t nb, int64_t h,        \
                              float* out);                                                                  \
  void attention_prefill_tile(const AttentionOperands& a, int64_t b, int64_t h, int64_t i0, int64_t i1);    \
  }
NUVEC_DECLARE_ATTENTION_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_ATTENTION_ISA(avx2)
NUVEC_DECLARE_ATTENTION_ISA(avx512)
#endif
#undef NUVEC_DECLARE_ATTENTION_ISA

}  // namespace nuvec::cpu
