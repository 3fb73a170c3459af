// The row kernels of nuvec.fast's normalizations and RoPE, built per instruction set
// (backend/cpu/simd/fast_norms.cpp, simd/rope.cpp), on float32 rows. The callers
// (backend/cpu/fast_norms.cpp, rope.cpp) convert half rows and split rows among threads.
#pragma once
#include <cstdint>

#include "core/backend.h"

namespace nuvec::cpu {

// Row sums accumulate in 16 float32 lanes in every build (lane j % 16 takes element j) and
// combine in a fixed tree, so every build gives the same bits.
#define NUVEC_DECLARE_FAST_NORMS_ISA(ns)                                                                               \
  namespace ns {                                                                                                       \
  /* y = x / sqrt(mean(x^2) + eps) * w (w may be null); y may be x. stream: y past the caches. */                      \
  void rms_row(const float* x, const float* w, float* y, int64_t d, float eps, bool stream);                           \
  /* rms_row (layer_row when `layer`) over `rows` contiguous rows, the next row's sum beside this                      \
     row's output. */                                                                                                  \
  void norm_rows(bool layer, const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t d,        \
                 float eps, bool stream);                                                                              \
  /* y = (x - mean) / sqrt(var + eps) * w + b (w, b may be null). */                                                   \
  void layer_row(const float* x, const float* w, const float* b, float* y, int64_t d, float eps, bool stream);         \
  /* logsumexp(x) - x[target], summed in 16 lanes; NaN for a target outside [0, d). */                                 \
  float xent_row(const float* x, int64_t d, int64_t target);                                                           \
  /* cos and sin of pos * inv_freq[i], i < half, from float64 angles (sin negated when inverse). */                    \
  void rope_angles(const double* inv_freq, int64_t half, double pos, bool inverse, float* cs, float* sn);              \
  /* y = x with its first 2 * half features rotated by the angles (cs, sn); y may be x. */                             \
  void rope_row(const float* x, float* y, const float* cs, const float* sn, int64_t half, int64_t d, bool traditional, \
                bool stream);                                                                                          \
  }
NUVEC_DECLARE_FAST_NORMS_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_FAST_NORMS_ISA(avx2)
NUVEC_DECLARE_FAST_NORMS_ISA(avx512)
#endif
#undef NUVEC_DECLARE_FAST_NORMS_ISA

void register_rope_kernels(Backend& b);
void register_cross_entropy_kernels(Backend& b);

}  // namespace nuvec::cpu
