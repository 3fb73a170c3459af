// The Hadamard transform's loops, one build per instruction set (backend/cpu/simd/hadamard.cpp).
// stage: over w[0, len), len a multiple of 2h, each pair (j, j + h) within a block of 2h becomes
// (x + y, x - y), times `scale` when `scaled`. m: over w holding m runs of n values, position i of
// run j becomes scale * the sum over k (in order, from 0) of +-w[i + k n], the sign from H_m's
// row j ('+' / '-' strings of m * m, read transposed when asked); tmp holds m * n values.
// round: each of w[0, n) to the nearest float16 (or bfloat16) value, kept as a float.
// first_stages: stages h = 1, 2, 4 unscaled over w[0, len) (len a multiple of 8) where the build
// can do them in registers; returns how many it did (3, or 0).
#pragma once
#include <cstdint>

namespace nuvec::cpu {

#define NUVEC_DECLARE_HADAMARD(ns)                                                                                 \
  namespace ns {                                                                                                   \
  void hadamard_stage_f32(float* w, int64_t len, int64_t h, float scale, bool scaled);                             \
  void hadamard_stage_f64(double* w, int64_t len, int64_t h, double scale, bool scaled);                           \
  void hadamard_m_f32(float* w, int64_t n, int64_t m, const char* h, bool transposed, float scale, float* tmp);    \
  void hadamard_m_f64(double* w, int64_t n, int64_t m, const char* h, bool transposed, double scale, double* tmp); \
  void hadamard_round(float* w, int64_t n, bool bfloat);                                                           \
  int hadamard_first_stages_f32(float* w, int64_t len);                                                            \
  }
NUVEC_DECLARE_HADAMARD(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_HADAMARD(avx2)
NUVEC_DECLARE_HADAMARD(avx512)
#endif
#undef NUVEC_DECLARE_HADAMARD

}  // namespace nuvec::cpu
