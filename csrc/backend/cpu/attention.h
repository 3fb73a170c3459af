// The CPU attention kernels' operands, and their loops in each instruction set's build
// (backend/cpu/simd/attention.cpp). docs/attention.md describes both kernels.
#pragma once
#include <algorithm>
#include <cstdint>

#include "backend/cpu/matmul.h"
#include "core/ops/attention.h"
#include "core/primitives/attention.h"

namespace nuvec::cpu {

// The floats of one packed key tile: k as panels of mr keys (round_up(TK, mr) x D), and v^T as
// panels of mr value columns (round_up(Dv, mr) x TK).
inline int64_t prefill_k_floats(int64_t mr, int64_t D) { return (kAttentionTileK + mr - 1) / mr * mr * D; }
inline int64_t prefill_v_floats(int64_t mr, int64_t Dv) { return (Dv + mr - 1) / mr * mr * kAttentionTileK; }

struct AttentionOperands {
  const float* q;     // (B, Hq, Lq, D), rows of unit stride
  const void *k, *v;  // (B, Hkv, Lk, D), (B, Hkv, Lk, Dv) of dtype kv, rows of unit stride
  float* out;         // (B, Hq, Lq, Dv), row-contiguous
  int64_t B, Hq, Hkv, Lq, Lk, D, Dv;
  float scale;
  AttentionMask mask;
  const char* mask_data;  // float32 or bool elements of (B, Hq, Lq, Lk) at mask_strides (elements)
  int64_t mask_strides[4];
  const float* sinks;              // Hq values, or null
  const MatmulKernels* mm;         // the matrix-product micro-kernels of the same build
  int64_t qst[3], kst[3], vst[3];  // q, k, v strides (elements) of batch, head and row
  Dtype kv = Dtype::float32;       // k and v: float32, float16 or bfloat16 (read as float32)
  // Paged keys and values (fast.paged_attention): key row r of batch b is row r % page_size of
  // page pages[b * pages_stride + r / page_size]; kst[0] and vst[0] are then the page strides.
  const int32_t* pages = nullptr;
  int64_t page_size = 0, pages_stride = 0;
};

// The decode kernel's piece: keys [k0, k1) (at most kAttentionKeyBlock) of query row i of heads
// (b, h0) .. (b, h0 + heads - 1) (1 to 4 of one key head's group), head h0 + r's as part + r *
// part_step = {max score, sum of exp(score - max), the Dv weighted value sums}. Every score is
// masked (float32's lowest) when `all_masked`. A row's parts depend only on its keys (not on the
// heads taken with it).
// The merge: a row's nb parts in order, then the head's sink, divided out into `out` (Dv values).
// Prefill: pack key tile [j0, j0 + kAttentionTileK) of key head (b, g) as the micro-kernels' A
// panels of mr rows (k: prefill_k_floats at kp; v^T: prefill_v_floats at vp); then query rows
// [i0, i1) of head (b, h) over the packed tiles of its key head.
#define NUVEC_DECLARE_ATTENTION_ISA(ns)                                                                            \
  namespace ns {                                                                                                   \
  void attention_decode_block(const AttentionOperands& a, int64_t b, int64_t h0, int heads, int64_t i, int64_t k0, \
                              int64_t k1, bool all_masked, float* part, int64_t part_step);                        \
  void attention_decode_merge(const AttentionOperands& a, const float* parts, int64_t nb, int64_t h, float* out);  \
  void attention_prefill_pack(const AttentionOperands& a, int64_t b, int64_t g, int64_t j0, float* kp, float* vp); \
  void attention_prefill_tile(const AttentionOperands& a, const float* kpack, const float* vpack, int64_t b,       \
                              int64_t h, int64_t i0, int64_t i1);                                                  \
  }
NUVEC_DECLARE_ATTENTION_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_ATTENTION_ISA(avx2)
NUVEC_DECLARE_ATTENTION_ISA(avx512)
#endif
#undef NUVEC_DECLARE_ATTENTION_ISA

// The query heads one decode piece takes together (attention_decode_block): a key head's group of
// `rep` query heads is cut into decode_chunks(rep) chunks, chunk c holding decode_chunk_heads(rep, c).
constexpr int kDecodeHeads = 4;
inline int64_t decode_chunks(int64_t rep) { return (rep + kDecodeHeads - 1) / kDecodeHeads; }
inline int decode_chunk_heads(int64_t rep, int64_t c) {
  return int(std::min<int64_t>(kDecodeHeads, rep - c * kDecodeHeads));
}

}  // namespace nuvec::cpu
