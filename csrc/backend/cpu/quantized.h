// The CPU quantized products' operands, and their row kernels in each instruction set's build
// (backend/cpu/simd/quantized.cpp).
//
// The determinism contract: every output element is computed by one fixed sequence of float32
// operations that depends only on its own row of x, the weights and the shapes, never on the
// number of rows, the tiling or the thread:
//   transposed (y = x @ W.T, groups along k): per group g, d = sum over the group's L-lane vectors
//     v of q_v * x_v (two accumulators, even and odd v, fused multiply-adds where the build has
//     them, then added), acc = fma(scale_g, d, acc) per lane; the bias term is the dot product of
//     the row's biases with x's group sums xsum_g (each the group's lanes added in order, then
//     halved pairwise), L groups per vector, fused multiply-added, then halved; then
//     y = halving_sum(acc) + bias term.
//   not transposed (y = x @ W, groups along n): acc = fma(x_k * scale_kg, q_kn, acc) for k in
//     order, bsum_g = bsum_g + x_k * bias_kg for k in order; y = acc + bsum_g.
//   transposed, a product of more than kRowIndependentRows rows (past the row-independence
//     promise; prompt prefill): w_kn = float(q) * scale + bias in float32 (multiply, then add),
//     then the dense float32 product x @ w.T (backend/cpu/matmul.h's gemm), in blocks of weight rows.
// The lanes hold consecutive elements, except in the AVX2 build's 4-bit kernels, whose vectors
// hold the even, then the odd elements of each 16 (x is permuted to match: qmm_lane_order).
// Codes are decoded to floats exactly, so whether a path decodes on the fly or from a buffer of
// decoded rows changes no bits.
#pragma once
#include <algorithm>
#include <cstdint>

#include "backend/cpu/ctypes.h"
#include "core/array.h"
#include "core/primitives/quantized.h"

namespace nuvec::cpu {

struct QmmProblem {
  const float* x;               // m rows of k float32 values, row-contiguous
  const float* xt;              // transposed: x's rows in the kernel's lane order (qmm_lane_order), else x
  const float* xsum;            // transposed: m rows of k / group sums of x (qmm_group_sums)
  const float* bsum;            // not transposed: m rows of n / group sums of x_k * bias_kg (qmm_bias_sums)
  const uint32_t* w;            // transposed: n rows of k codes; else k rows of n codes (packed words)
  const void *scales, *biases;  // transposed: n rows of k / group; else k rows of n / group
  Dtype sdtype, bdtype;         // float32, float16 or bfloat16
  float* y;                     // m rows of n
  int64_t m, n, k;
  int bits, group;
};

// The floating-point modes' quantize (w row-contiguous; codes and scales allocated) and dequantize
// (backend/cpu/quantized_fp.cpp).
void quantize_fp(QuantSpec q, const Array& w, Array& codes, Array& scales);
void dequantize_fp(QuantSpec q, const Array& codes, const Array& scales, Array& out);

#define NUVEC_DECLARE_QMM_ISA(ns)                                                    \
  namespace ns {                                                                     \
  void qmm_group_sums(const float* x, int64_t m, int64_t k, int group, float* xsum); \
  bool qmm_lane_order(int bits);                                                     \
  void qmm_to_lane_order(const float* x, int64_t count, float* out);                 \
  void qmm_transposed(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch);  \
  void qmm_plain(const QmmProblem& p, int64_t c0, int64_t c1, float* scratch);       \
  void qmm_dequantize(const QmmProblem& p, int64_t n0, int64_t n1, float* out);      \
  }
NUVEC_DECLARE_QMM_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_QMM_ISA(avx2)
NUVEC_DECLARE_QMM_ISA(avx512)
#endif
#undef NUVEC_DECLARE_QMM_ISA

constexpr int kQmmRowBlock = 4;    // weight rows (outputs) the transposed kernel takes together
constexpr int kQmmParamRows = 16;  // weight rows whose scales and biases the transposed kernel converts at once
constexpr int kQmmChunk = 128;     // output columns of one chunk of the plain kernel
constexpr int kQmmKBlock = 64;     // rows of k the plain kernel decodes at a time for many x rows
// The scratch floats one thread of either kernel needs.
inline int64_t qmm_scratch(int64_t m, int64_t n, int64_t k) {
  int64_t t = kQmmRowBlock * k + (2 * kQmmParamRows + 1) * (k / 32 + 16),
          p = m * (kQmmChunk / 32) + int64_t(kQmmKBlock) * kQmmChunk, one = 9 * (n / 32 + 1);
  return std::max({t, p, one});
}

}  // namespace nuvec::cpu
