// Threefry-2x32 (20 rounds, as JAX and MLX) across vector lanes of counters, and the float32
// samplers fused onto it. Bit-exactness with MLX's scalar chain of ops is the contract: this file
// is compiled with -ffp-contract=off, so every fused multiply-add below is written out.
#include <cstring>

#include "backend/cpu/random_kernels.h"
#include "backend/cpu/simd/erfinv.h"
#include "backend/cpu/simd/simd.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace nuvec::cpu::NUVEC_ISA {
namespace {

typedef uint32_t VecU __attribute__((vector_size(kVecBytes)));
typedef int32_t VecI __attribute__((vector_size(kVecBytes)));

constexpr float kUpper = 0x1.fffffep-1f;   // nextafter(1, 0)
constexpr float kLow = -0x1.fffffep-1f;    // nextafter(-1, 0), the low end of normal's uniform
constexpr float kSqrt2 = 1.41421356237309515f;

inline VecU rotl(VecU x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32 with 20 rounds: five groups of four, a key injection after each.
inline void threefry(uint32_t k0, uint32_t k1, VecU& x0, VecU& x1) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  constexpr int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
  for (int g = 0; g < 5; ++g) {
    for (int r : rot[g % 2]) {
      x0 += x1;
      x1 = rotl(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + uint32_t(g + 1);
  }
}

inline VecF uniform(VecU b) {
  VecF u = __builtin_convertvector(b, VecF) * 0x1p-32f;  // = b / float(2^32 - 1): that rounds to 2^32
  return u < kUpper ? u : VecF{} + kUpper;
}

#if defined(__AVX2__)
// Vector erfinv for the vector builds; lane for lane the bits of erfinv_f (and so of MLX).
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
constexpr int kHalf = kLanesF / 2;
typedef float HalfF __attribute__((vector_size(kVecBytes / 2)));

// glibc's logf (the algorithm of ARM's optimized-routines: a 16-entry table of 1/c and log(c),
// a cubic in double, one rounding to float), which MLX calls through std::log. For normal
// positive x; checked against glibc on every float in [2^-126, 1], with and without fused
// multiply-adds in the cubic.
constexpr double kInvC[16] = {
    0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0, 0x1.3c995b0b80385p+0,
    0x1.30d190c8864a5p+0, 0x1.25e227b0b8eap+0,  0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0,
    0x1.0953f419900a7p+0, 0x1p+0,               0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,
    0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1, 0x1.767dcf5534862p-1};
constexpr double kLogC[16] = {
    -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3,
    -0x1.6574f0ac07758p-3, -0x1.1aa2bc79c81p-3,   -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4,
    -0x1.252f438e10c1ep-5, 0x0p+0,                0x1.aa5aa5df25984p-5,  0x1.c5e53aa362eb4p-4,
    0x1.526e57720db08p-3,  0x1.bc2860d22477p-3,   0x1.1058bc8a07ee1p-2,  0x1.4043057b6ee09p-2};
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

inline VecF logf_v(VecF x) {
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

inline VecF erfinv_v(VecF a) {
  VecF t = logf_v(fmav(a, VecF{} - a, VecF{} + 1.0f));
  VecF tail = VecF{} + kErfinvTail[0], center = VecF{} + kErfinvCenter[0];
  for (int k = 1; k < 9; ++k) tail = fmav(tail, t, VecF{} + kErfinvTail[k]);
  for (int k = 1; k < 10; ++k) center = fmav(center, t, VecF{} + kErfinvCenter[k]);
  VecF at = t < 0 ? -t : t;
  return a * (at > kErfinvSplit ? tail : center);
}
#else
// The portable build calls the scalar erfinv (and so glibc's logf) lane by lane.
inline VecF erfinv_v(VecF a) {
  VecF r;
  for (int l = 0; l < kLanesF; ++l) r[l] = erfinv_f(a[l]);
  return r;
}
#endif

inline VecF transform(RandomKind kind, VecU b) {
  VecF u = uniform(b);
  if (kind == RandomKind::uniform) return u;
  VecF e = erfinv_v(u * 2.0f + kLow);  // MLX: range (1 - low) rounds to 2; 2u is exact
  return kind == RandomKind::erfinv ? e : e * kSqrt2;
}

template <RandomKind K>
void fill(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, int64_t n, uint32_t* out0, uint32_t* out1) {
  VecU lane;
  for (int l = 0; l < kLanesF; ++l) lane[l] = uint32_t(l);
  auto one = [&](int64_t i, VecU& x0, VecU& x1) {
    x0 = lane + uint32_t(c0 + uint32_t(i));
    x1 = lane + uint32_t(c1 + uint32_t(i));
    threefry(k0, k1, x0, x1);
    if constexpr (K != RandomKind::bits) {
      x0 = (VecU)transform(K, x0);
      x1 = (VecU)transform(K, x1);
    }
  };
  int64_t i = 0;
  VecU x0, x1;
  for (; i + kLanesF <= n; i += kLanesF) {
    one(i, x0, x1);
    std::memcpy(out0 + i, &x0, sizeof(x0));
    if (out1) std::memcpy(out1 + i, &x1, sizeof(x1));
  }
  if (i < n) {  // the tail through the same vector code
    one(i, x0, x1);
    std::memcpy(out0 + i, &x0, (n - i) * 4);
    if (out1) std::memcpy(out1 + i, &x1, (n - i) * 4);
  }
}

}  // namespace

void random_fill(RandomKind kind, uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, int64_t n, void* out0,
                 void* out1) {
  auto* o0 = static_cast<uint32_t*>(out0);
  auto* o1 = static_cast<uint32_t*>(out1);
  switch (kind) {
    case RandomKind::bits: return fill<RandomKind::bits>(k0, k1, c0, c1, n, o0, o1);
    case RandomKind::uniform: return fill<RandomKind::uniform>(k0, k1, c0, c1, n, o0, o1);
    case RandomKind::erfinv: return fill<RandomKind::erfinv>(k0, k1, c0, c1, n, o0, o1);
    case RandomKind::normal: return fill<RandomKind::normal>(k0, k1, c0, c1, n, o0, o1);
  }
}

}  // namespace nuvec::cpu::NUVEC_ISA
