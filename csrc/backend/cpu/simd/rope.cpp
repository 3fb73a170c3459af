// RoPE's loops, built per instruction set (backend/cpu/fast_norms.h): the cos / sin of a row's
// angles from float64 (reduced by pi/2, then fdlibm's float kernels evaluated in float64), and
// the rotation of a row. Only IEEE basic operations, lane by lane: every build gives the same bits.
#include <cstring>

#include "backend/cpu/fast_norms.h"
#include "backend/cpu/simd/fast_norms_store.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

typedef double VecD __attribute__((vector_size(kVecBytes)));
typedef long long VecL __attribute__((vector_size(kVecBytes)));
constexpr int kLanesD = kVecBytes / 8;

constexpr double kInvPio2 = 6.36619772367581382433e-01;
constexpr double kPio2Hi = 1.57079632673412561417e+00;  // pi/2's first 33 bits: k * kPio2Hi is exact
constexpr double kPio2Lo = 6.07710050650619224932e-11;  // pi/2 - kPio2Hi
constexpr double kRound = 0x1.8p52;                     // adding it rounds to an integer

// sin and cos of a in [-pi/4, pi/4] (FreeBSD's k_sinf.c / k_cosf.c: float accuracy).
inline VecD sin_kernel(VecD x) {
  const double s1 = -0x15555554cbac77.0p-55, s2 = 0x111110896efbb2.0p-59, s3 = -0x1a00f9e2cae774.0p-65,
               s4 = 0x16cd878c3b46a7.0p-71;
  VecD z = x * x, w = z * z, r = s3 + z * s4, s = z * x;
  return (x + s * (s1 + z * s2)) + s * w * r;
}
inline VecD cos_kernel(VecD x) {
  const double c0 = -0x1ffffffd0c5e81.0p-54, c1 = 0x155553e1053a42.0p-57, c2 = -0x16c087e80f1e27.0p-62,
               c3 = 0x199342e0ee5069.0p-68;
  VecD z = x * x, w = z * z, r = c2 + z * c3;
  return ((1.0 + z * c0) + w * c1) + (w * z) * r;
}

}  // namespace

namespace {

typedef float VecHalfF __attribute__((vector_size(kVecBytes / 2)));  // kLanesD floats

// The cos and sin of kLanesD angles pos * f.
inline void angles(VecD f, double pos, bool inverse, float* cs, float* sn) {
  VecD a = pos * f;
  VecD shifted = a * kInvPio2 + kRound;
  VecD k = shifted - kRound;
  VecL q;
  std::memcpy(&q, &shifted, sizeof(q));  // the low bits of the shifted sum are k's
  VecD r = (a - k * kPio2Hi) - k * kPio2Lo;
  VecD s = sin_kernel(r), c = cos_kernel(r);
  VecL odd = (q & 1) != 0;
  VecD sin_v = odd ? c : s, cos_v = odd ? s : c;
  VecD one = VecD{} + 1.0;
  sin_v = sin_v * (((q & 2) != 0) ? -one : one);
  cos_v = cos_v * ((((q + 1) & 2) != 0) ? -one : one);
  if (inverse) sin_v = -sin_v;
  VecHalfF cf = __builtin_convertvector(cos_v, VecHalfF), sf = __builtin_convertvector(sin_v, VecHalfF);
  std::memcpy(cs, &cf, sizeof(cf));
  std::memcpy(sn, &sf, sizeof(sf));
}

}  // namespace

void rope_angles(const double* inv_freq, int64_t half, double pos, bool inverse, float* cs, float* sn) {
  int64_t i = 0;
  VecD f;
  for (; i + kLanesD <= half; i += kLanesD) {
    std::memcpy(&f, inv_freq + i, sizeof(f));
    angles(f, pos, inverse, cs + i, sn + i);
  }
  if (i == half) return;
  double t[kLanesD] = {};
  float c[kLanesD], s[kLanesD];
  std::memcpy(t, inv_freq + i, size_t(half - i) * 8);
  std::memcpy(&f, t, sizeof(f));
  angles(f, pos, inverse, c, s);
  std::memcpy(cs + i, c, size_t(half - i) * 4);
  std::memcpy(sn + i, s, size_t(half - i) * 4);
}

void rope_row(const float* x, float* y, const float* cs, const float* sn, int64_t half, int64_t d, bool traditional,
              bool stream) {
  if (traditional) {
    for (int64_t i = 0; i < half; ++i) {
      float a = x[2 * i], b = x[2 * i + 1], c = cs[i], s = sn[i];
      y[2 * i] = a * c - b * s;
      y[2 * i + 1] = a * s + b * c;
    }
  } else {
    int64_t i = 0;
    bool nt = stream && vector_aligned(y) && vector_aligned(y + half);
    for (; i + kLanesF <= half; i += kLanesF) {
      VecF a = load(x + i), b = load(x + half + i), c = load(cs + i), s = load(sn + i);
      VecF lo = a * c - b * s, hi = a * s + b * c;
      nt ? store_stream(y + i, lo) : store(y + i, lo);
      nt ? store_stream(y + half + i, hi) : store(y + half + i, hi);
    }
    for (; i < half; ++i) {
      float a = x[i], b = x[half + i], c = cs[i], s = sn[i];
      y[i] = a * c - b * s;
      y[half + i] = a * s + b * c;
    }
  }
  if (y != x && d > 2 * half) std::memcpy(y + 2 * half, x + 2 * half, size_t(d - 2 * half) * 4);
}

}  // namespace nuvec::cpu::NUVEC_ISA
