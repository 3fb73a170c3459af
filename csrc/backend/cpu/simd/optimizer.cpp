// The Adam step's loop, built per instruction set (backend/cpu/optimizer.h).
#include <cmath>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/optimizer.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

inline VecF vsqrt(VecF x) {  // IEEE square root per lane, as the sqrt kernel's
#if defined(__AVX512F__)
  return _mm512_sqrt_ps(x);
#elif defined(__AVX2__)
  return _mm256_sqrt_ps(x);
#elif defined(__SSE2__)
  return _mm_sqrt_ps(x);
#else
  for (int l = 0; l < kLanesF; ++l) x[l] = std::sqrt(x[l]);
  return x;
#endif
}

struct Factors { VecF b1, omb1, b2, omb2, eps, lr, correction, decay; };

// The op path's ops in its order: `lr * m / den` is (lr * m) / den.
template <bool kCorrected, bool kDecayed> inline void update(const Factors& f, VecF& p, VecF g, VecF& m, VecF& v) {
  if (kDecayed) p = p * f.decay;
  m = f.b1 * m + f.omb1 * g;
  v = f.b2 * v + f.omb2 * (g * g);
  VecF den = kCorrected ? vsqrt(v) * f.correction + f.eps : vsqrt(v) + f.eps;
  p = p - (f.lr * m) / den;
}

template <bool kCorrected, bool kDecayed> void loop(const AdamOperands& a, int64_t i, int64_t end) {
  const Factors f{splat(a.c.b1), splat(a.c.one_minus_b1), splat(a.c.b2), splat(a.c.one_minus_b2), splat(a.c.eps),
                  splat(a.lr),   splat(a.correction),     splat(a.decay)};
  for (; i + kLanesF <= end; i += kLanesF) {
    VecF p = load(a.p + i), m = load(a.m + i), v = load(a.v + i);
    update<kCorrected, kDecayed>(f, p, load(a.g + i), m, v);
    store(a.p_out + i, p), store(a.m_out + i, m), store(a.v_out + i, v);
  }
  if (i == end) return;
  // The tail through the same vector code (padded), so no element's bits depend on its place.
  float t[4][kLanesF] = {};
  const float* src[4] = {a.p, a.g, a.m, a.v};
  for (int k = 0; k < 4; ++k) std::memcpy(t[k], src[k] + i, size_t(end - i) * 4);
  VecF p = load(t[0]), m = load(t[2]), v = load(t[3]);
  update<kCorrected, kDecayed>(f, p, load(t[1]), m, v);
  store(t[0], p), store(t[2], m), store(t[3], v);
  std::memcpy(a.p_out + i, t[0], size_t(end - i) * 4);
  std::memcpy(a.m_out + i, t[2], size_t(end - i) * 4);
  std::memcpy(a.v_out + i, t[3], size_t(end - i) * 4);
}

}  // namespace

void adam_step(const AdamOperands& a, int64_t begin, int64_t end) {
  if (a.corrected)
    a.decayed ? loop<true, true>(a, begin, end) : loop<true, false>(a, begin, end);
  else
    a.decayed ? loop<false, true>(a, begin, end) : loop<false, false>(a, begin, end);
}

}  // namespace nuvec::cpu::NUVEC_ISA
