// Threefry-2x32 (20 rounds, as JAX and MLX) across vector lanes of counters, and the float32
// samplers fused onto it. Bit-exactness with MLX's scalar chain of ops is the contract: this file
// is compiled with -ffp-contract=off, so every fused multiply-add below is written out.
#include <cstring>

#include "backend/cpu/random_kernels.h"
#include "backend/cpu/simd/erfinv.h"
#include "backend/cpu/simd/logf.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

constexpr float kUpper = 0x1.fffffep-1f;  // nextafter(1, 0)
constexpr float kLow = -0x1.fffffep-1f;   // nextafter(-1, 0), the low end of normal's uniform
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
inline VecF erfinv_v(VecF a) {
  VecF t = logf_positive(fmav(a, VecF{} - a, VecF{} + 1.0f));
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
