// The CPU quantized products' operands, and their row kernels in each instruction set's build
// (backend/cpu/simd/quantized.cpp).
//
// The determinism contract: every output element is computed by one fixed sequence of operations
// that depends only on its own row of x, the weights and the shapes, never on the number of rows,
// the tiling or the thread:
//   transposed (y = x @ W.T, groups along k), float x (bits other than 4): per group g, d = sum
//     over the group's L-lane vectors v of q_v * x_v (two accumulators, even and odd v, fused
//     multiply-adds where the build has them, then added), acc = fma(scale_g, d, acc) per lane; the
//     bias term is the dot product of the row's biases with x's group sums xsum_g (each the group's
//     lanes added in order, then halved pairwise), L groups per vector, fused multiply-added, then
//     halved; then y = halving_sum(acc) + bias term.
//   not transposed (y = x @ W, groups along n): acc = fma(x_k * scale_kg, q_kn, acc) for k in
//     order, bsum_g = bsum_g + x_k * bias_kg for k in order; y = acc + bsum_g.
//   transposed, a product of more than kRowIndependentRows rows (past the row-independence
//     promise; prompt prefill): w_kn = float(q) * scale + bias in float32 (multiply, then add),
//     then the dense float32 product x @ w.T (backend/cpu/matmul.h's gemm), in blocks of weight rows.
// Codes are decoded to floats exactly, so whether a path decodes on the fly or from a buffer of
// decoded rows changes no bits.
//
// Integer activations (transposed affine weights, at most kRowIndependentRows rows;
// backend/cpu/simd/quantized_q8.cpp), the same bits in every instruction set's build. x is rounded
// per group to integers D_e of at most `limit` in magnitude, held as `digits` int8 planes:
//   int8 activations (QuantizedProduct::activation_bits() == 8; 4- or 8-bit weights): one digit,
//     limit 127 (about 0.5% error in a product);
//   float32 x on 4-bit weights, and on 8-bit weights in groups of 32 or 64 where the AVX-512 build
//     runs on a processor with VNNI (the default, activation_bits None): three digits,
//     D = d0 * 65536 + d1 * 256 + d2 with d1, d2 in [-128, 127],
//     limit = floor((2^31 - 1) / ((2^bits - 1) * group)) - 128 (4-bit: 4473796, 2236834 and
//     1118353 for groups 32, 64, 128, 20 to 22 bits of the group's largest |x|; 8-bit: 263046 and
//     131395 for groups 32 and 64, 18 and 17 bits), so every integer sum below fits in int32. The
//     integer dot products then run at memory speed (4-bit: six VPDPBUSD per 128 codes, two per
//     digit), where float decoding cannot.
//   Per group g of x's row: amax_g = the largest |x| (NaN if one is), d_g = amax_g / limit,
//     id_g = amax_g > 0 ? limit / amax_g : 0 (float32 divisions), D_e = round-half-even(min(max(
//     x_e * id_g, -limit), limit)) (min and max as the x86 instructions: a NaN becomes -limit, and
//     d_g carries it to y); qsum_g = d_g * float(the sum of the group's D_e). (The bias term takes
//     x's integers as the scale term does, so y is W times the rounded x.)
//   per weight row and group: isum_g = sum of code_e * D_e (exact in int32);
//   eight accumulators, group g in lane g mod 8, in order of g:
//     a = fma(scale_g * d_g, float(isum_g), a), then a = fma(bias_g, qsum_g, a);
//   y = the accumulators added in halves: (a_j + a_{j+4}), then (t_j + t_{j+2}), then t_0 + t_1.
#pragma once
#include <algorithm>
#include <cstdint>

#include "backend/cpu/ctypes.h"
#include "backend/cpu/kernels.h"
#include "core/array.h"
#include "core/primitives/quantized.h"

namespace nuvec::cpu {

struct QmmProblem {
  const float* x;               // m rows of k float32 values, row-contiguous
  const float* xsum;            // transposed: m rows of k / group sums of x (qmm_group_sums)
  const float* bsum;            // not transposed: m rows of n / group sums of x_k * bias_kg (qmm_bias_sums)
  const int8_t* xq;             // integer activations: m rows of `digits` planes (qmm_q8_plane) of int8 digits
  const float* xd;              // integer activations: m rows of qmm_q8_padded(groups) d_g, then as many qsum_g
  const uint32_t* w;            // transposed: n rows of k codes; else k rows of n codes (packed words)
  const void *scales, *biases;  // transposed: n rows of k / group; else k rows of n / group
  Dtype sdtype, bdtype;         // float32, float16 or bfloat16
  float* y;                     // m rows of n
  int64_t m, n, k;
  int bits, group;
  int digits;  // integer activations' int8 planes per row of x (0: float x)
};

// The floating-point modes' quantize (w row-contiguous; codes and scales allocated) and dequantize
// (backend/cpu/quantized_fp.cpp).
void quantize_fp(QuantSpec q, const Array& w, Array& codes, Array& scales);
void dequantize_fp(QuantSpec q, const Array& codes, const Array& scales, Array& out);

#define NUVEC_DECLARE_QMM_ISA(ns)                                                                                     \
  namespace ns {                                                                                                      \
  void qmm_group_sums(const float* x, int64_t m, int64_t k, int group, float* xsum);                                  \
  void qmm_transposed(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch);                                   \
  void qmm_plain(const QmmProblem& p, int64_t c0, int64_t c1, float* scratch);                                        \
  void qmm_dequantize(const QmmProblem& p, int64_t n0, int64_t n1, float* out);                                       \
  void qmm_q8_quantize(const float* x, int64_t m, int64_t k, int group, int bits, int digits, int8_t* xq, float* xd); \
  void qmm_q8_transposed(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch);                                \
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
// The one-row kernels read weight rows in order: one stream each of codes, scales and biases, which
// the hardware prefetchers alone start too late. They ask for the codes about kQmmAheadBytes ahead
// of the ones they read, a line or a group at a time as they go, into L2 (scales and biases
// likewise): spread out, the requests overlap the arithmetic, where all of the next rows' lines
// asked for at once (qmm_prefetch_rows, which asks only for a call's first rows) took the core's line-fill
// buffers and stalled it. The 4-bit GEMV from memory: 19 -> 24-25 GB/s; the float 8-bit one of
// SmolLM2's head (rows of 576 bytes) 14 -> 15-16 GB/s on two cores (bench/RESULTS.md).
constexpr int64_t kQmmAheadBytes = 4096;
// Asks the caches for the codes, scales and biases of weight rows [n, n + count) (transposed).
inline void qmm_prefetch_rows(const QmmProblem& p, int64_t n, int64_t count) {
  count = std::min(count, p.n - n);
  if (count <= 0) return;
  const int64_t groups = p.k / p.group, row_bytes = p.k * p.bits / 8;
  const int64_t sbytes = groups * int64_t(size_of(p.sdtype)), bbytes = groups * int64_t(size_of(p.bdtype));
  const char* w = reinterpret_cast<const char*>(p.w) + n * row_bytes;
  const char* s = static_cast<const char*>(p.scales) + n * sbytes;
  const char* b = static_cast<const char*>(p.biases) + n * bbytes;
  for (int64_t off = 0; off < count * row_bytes; off += 64) __builtin_prefetch(w + off);
  for (int64_t off = 0; off < count * sbytes; off += 64) __builtin_prefetch(s + off);
  for (int64_t off = 0; off < count * bbytes; off += 64) __builtin_prefetch(b + off);
}
#if defined(__x86_64__)
// Whether the processor has VPDPBUSD (AVX512-VNNI): the AVX-512 build's integer-activation kernels
// use it where it does. Asked once.
inline bool cpu_has_vnni() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx512vnni"));
  return yes;
}
#endif
// The integer activations' largest |D| for `digits` int8 planes (above).
inline float qmm_q8_limit(int bits, int group, int digits) {
  if (digits == 1) return 127.0f;
  return float(int64_t(0x7FFFFFFF) / (((int64_t(1) << bits) - 1) * group) - 128);
}
// The int8 planes of x for a transposed product: one for int8 activations; three for float x on
// 4-bit weights (20-22 bits of each group's largest |x|), and on 8-bit weights in groups of 32 or
// 64 (18 or 17 bits) where VPDPBUSD multiplies them (the AVX-512 build on a processor with VNNI:
// SmolLM2's 8-bit head 0.89 -> 0.70 ms; the AVX2 kernels widen 8-bit codes to 16 bits, and there
// the digits ran slower than the float kernels, 0.98 -> 1.35-1.47 ms); else none (float x). In
// groups of 128, 8-bit codes would leave x 16 bits, whose rounding is more than float32's.
inline int qmm_q8_digits(int bits, int group, int activation_bits) {
  if (activation_bits == 8) return 1;
  if (bits == 4) return 3;
#if defined(__x86_64__)
  if (bits == 8 && isa() == Isa::avx512 && cpu_has_vnni() && qmm_q8_limit(8, group, 3) >= float(1 << 17)) return 3;
#endif
  return 0;
}
// The bytes between x's digit planes (qmm_q8_quantize): k rounded up to whole sixteen groups, the
// bytes past k zero (the kernels' last sixteen groups read them).
inline int64_t qmm_q8_plane(int64_t k, int group) { return (k + 16 * group - 1) / (16 * group) * (16 * group); }
// Groups rounded up to whole eight-lane vectors: the int8 path's per-group rows (zero-padded).
inline int64_t qmm_q8_padded(int64_t groups) { return (groups + 7) / 8 * 8; }
// The scratch floats one thread of any kernel needs (the int8 path: 2 * qmm_q8_padded(k / 32)).
inline int64_t qmm_scratch(int64_t m, int64_t n, int64_t k) {
  int64_t t = kQmmRowBlock * k + (2 * kQmmParamRows + 1) * (k / 32 + 16),
          p = m * (kQmmChunk / 32) + int64_t(kQmmKBlock) * kQmmChunk, one = 9 * (n / 32 + 1);
  return std::max({t, p, one});
}

}  // namespace nuvec::cpu
