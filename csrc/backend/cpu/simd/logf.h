// glibc's logf, vectorised: the algorithm of ARM's optimized-routines (a 16-entry table of 1/c and
// log(c), a cubic in double, one rounding to float), which MLX reaches through std::log. Checked
// against glibc on every float in [2^-126, 1] (with and without fused multiply-adds in the cubic),
// so nuvec's log and the random samplers give MLX's bits.
#pragma once
#include <cstring>

#include "backend/cpu/simd/simd.h"
#include "core/mlx_constants.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace nuvec::cpu::NUVEC_ISA {

typedef uint32_t VecU __attribute__((vector_size(kVecBytes)));
typedef int32_t VecI __attribute__((vector_size(kVecBytes)));

#if defined(__AVX2__)
#if defined(__AVX512F__)
typedef double VecD __attribute__((vector_size(64)));
typedef int32_t HalfI __attribute__((vector_size(32)));
inline VecF fmav(VecF a, VecF b, VecF c) { return (VecF)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
inline VecD fmad(VecD a, VecD b, VecD c) { return (VecD)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c); }
// A 16-entry table held in two registers: one permute per lookup, where a gather reads memory.
inline VecD lookup(const double* table, HalfI i) {
  return (VecD)_mm512_permutex2var_pd(_mm512_loadu_pd(table), _mm512_cvtepu32_epi64((__m256i)i),
                                      _mm512_loadu_pd(table + 8));
}
#else
typedef double VecD __attribute__((vector_size(32)));
typedef int32_t HalfI __attribute__((vector_size(16)));
inline VecF fmav(VecF a, VecF b, VecF c) { return (VecF)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
inline VecD fmad(VecD a, VecD b, VecD c) { return (VecD)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
inline VecD lookup(const double* table, HalfI i) { return (VecD)_mm256_i32gather_pd(table, (__m128i)i, 8); }
#endif
typedef float HalfF __attribute__((vector_size(kVecBytes / 2)));

constexpr double kInvC[16] = {NUVEC_LOGF_INV_C};
constexpr double kLogC[16] = {NUVEC_LOGF_LOG_C};
constexpr double kLn2 = NUVEC_LOGF_LN2;
constexpr double kA0 = NUVEC_LOGF_A0, kA1 = NUVEC_LOGF_A1, kA2 = NUVEC_LOGF_A2;

inline HalfF log_half(HalfF zf, HalfI k, HalfI i) {
  VecD z = __builtin_convertvector(zf, VecD), kd = __builtin_convertvector(k, VecD);
  VecD r = fmad(z, lookup(kInvC, i), VecD{} - 1.0);
  VecD y0 = fmad(kd, VecD{} + kLn2, lookup(kLogC, i));
  VecD r2 = r * r;
  VecD y = fmad(VecD{} + kA1, r, VecD{} + kA2);
  y = fmad(VecD{} + kA0, r2, y);
  y = fmad(y, r2, y0 + r);
  return __builtin_convertvector(y, HalfF);
}

// For lanes holding normal positive floats (the caller's guarantee).
inline VecF logf_positive(VecF x) {
  VecU ix = (VecU)x;
  VecU tmp = ix - 0x3f330000u;
  VecI i = (VecI)((tmp >> 19) & 15u);
  VecI k = (VecI)tmp >> 23;
  VecF z = (VecF)(ix - (tmp & 0xff800000u));
  HalfF zlo, zhi, ylo, yhi;
  HalfI klo, khi, ilo, ihi;
  std::memcpy(&zlo, &z, sizeof(zlo)), std::memcpy(&zhi, (char*)&z + sizeof(zlo), sizeof(zhi));
  std::memcpy(&klo, &k, sizeof(klo)), std::memcpy(&khi, (char*)&k + sizeof(klo), sizeof(khi));
  std::memcpy(&ilo, &i, sizeof(ilo)), std::memcpy(&ihi, (char*)&i + sizeof(ilo), sizeof(ihi));
  ylo = log_half(zlo, klo, ilo);
  yhi = log_half(zhi, khi, ihi);
  VecF y;
  std::memcpy(&y, &ylo, sizeof(ylo)), std::memcpy((char*)&y + sizeof(ylo), &yhi, sizeof(yhi));
  return y;
}

// Lanes that are not normal positive floats take glibc's logf, out of line (inlined, the
// lane-by-lane calls would keep the common path's vectors on the stack).
[[gnu::noinline]] inline VecF logf_odd_lanes(VecF x, VecF y, VecI odd) {
  for (int l = 0; l < kLanesF; ++l)
    if (odd[l]) y[l] = std::log(x[l]);
  return y;
}

// Any input: zeros, negatives, subnormals, infinities and NaN go through glibc lane by lane.
inline VecF logf_v(VecF x) {
  VecU ix = (VecU)x;
  VecI odd = (VecI)(ix - 0x00800000u >= 0x7f000000u);
  VecF y = logf_positive(x);
#if defined(__AVX512F__)
  const bool any = _mm512_test_epi32_mask((__m512i)odd, (__m512i)odd) != 0;
#else
  const bool any = _mm256_movemask_ps((__m256)odd) != 0;
#endif
  return any ? logf_odd_lanes(x, y, odd) : y;
}
#endif

}  // namespace nuvec::cpu::NUVEC_ISA
