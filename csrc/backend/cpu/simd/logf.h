// glibc's logf, vectorised: the algorithm of ARM's optimized-routines (a 16-entry table of 1/c and
// log(c), a cubic in double, one rounding to float), which MLX reaches through std::log. Checked
// against glibc on every float in [2^-126, 1] (with and without fused multiply-adds in the cubic),
// so nuvec's log and the random samplers give MLX's bits.
#pragma once
#include <cstring>

#include "backend/cpu/simd/simd.h"

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
inline VecD lookup(const double* table, HalfI i) { return (VecD)_mm512_i32gather_pd((__m256i)i, table, 8); }
#else
typedef double VecD __attribute__((vector_size(32)));
typedef int32_t HalfI __attribute__((vector_size(16)));
inline VecF fmav(VecF a, VecF b, VecF c) { return (VecF)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
inline VecD fmad(VecD a, VecD b, VecD c) { return (VecD)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
inline VecD lookup(const double* table, HalfI i) { return (VecD)_mm256_i32gather_pd(table, (__m128i)i, 8); }
#endif
typedef float HalfF __attribute__((vector_size(kVecBytes / 2)));

constexpr double kInvC[16] = {
    0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0,  0x1.3c995b0b80385p+0, 0x1.30d190c8864a5p+0,
    0x1.25e227b0b8eap+0,  0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0, 0x1.0953f419900a7p+0, 0x1p+0,
    0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,  0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1,
    0x1.767dcf5534862p-1};
constexpr double kLogC[16] = {
    -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3, -0x1.6574f0ac07758p-3,
    -0x1.1aa2bc79c81p-3,   -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4, -0x1.252f438e10c1ep-5, 0x0p+0,
    0x1.aa5aa5df25984p-5,  0x1.c5e53aa362eb4p-4,  0x1.526e57720db08p-3,  0x1.bc2860d22477p-3,   0x1.1058bc8a07ee1p-2,
    0x1.4043057b6ee09p-2};
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kA0 = -0x1.00ea348b88334p-2, kA1 = 0x1.5575b0be00b6ap-2, kA2 = -0x1.ffffef20a4123p-2;

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

// Any input: zeros, negatives, subnormals, infinities and NaN go through glibc lane by lane.
inline VecF logf_v(VecF x) {
  VecU ix = (VecU)x;
  VecI odd = (VecI)(ix - 0x00800000u >= 0x7f000000u);
  VecF y = logf_positive(x);
  bool any = false;
  for (int l = 0; l < kLanesF; ++l) any |= odd[l] != 0;
  if (any)
    for (int l = 0; l < kLanesF; ++l)
      if (odd[l]) y[l] = std::log(x[l]);
  return y;
}
#endif

}  // namespace nuvec::cpu::NUVEC_ISA
