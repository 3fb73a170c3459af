// Explicit SIMD for the kernel builds: a native-width vector type and float32 math through
// glibc's vector math library (libmvec), whose variant matches the build's instruction set.
// Each file in this folder is compiled once per ISA with NUVEC_ISA naming its namespace.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cpu/ctypes.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#ifndef NUVEC_ISA
#error "NUVEC_ISA must name the instruction set this file is built for"
#endif

namespace nuvec::cpu::NUVEC_ISA {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

// (GCC ignores vector_size on alias templates, so each vector type is spelled out.)
typedef float VecF __attribute__((vector_size(kVecBytes)));
constexpr int kLanesF = kVecBytes / 4;

inline VecF load(const float* p) {
  VecF v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, VecF v) { std::memcpy(p, &v, sizeof(v)); }
// Every lane x, through the broadcast instruction (not `VecF{} + x`, which costs an addition and
// makes -0.0 +0.0; a lane-by-lane fill compiles to inserts).
inline VecF splat(float x) {
#if defined(__AVX512F__)
  return _mm512_set1_ps(x);
#elif defined(__AVX2__)
  return _mm256_set1_ps(x);
#elif defined(__SSE2__)
  return _mm_set1_ps(x);
#else
  VecF v;
  for (int i = 0; i < kLanesF; ++i) v[i] = x;
  return v;
#endif
}

// The lanes added in halves: lane i + lane i + L/2 for i < L/2, then the same over those, down to
// one lane (a fixed tree, which kernels that promise their bits keep). Through shuffles: the
// lane-by-lane loop compiled to a store and scalar reloads, several times slower.
inline float halving_sum(VecF v) {
#if defined(__AVX512F__)
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
#elif defined(__AVX2__)
  const __m256 h = v;
#endif
#if defined(__AVX2__)
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#elif defined(__SSE2__)
  __m128 q = v;
#endif
#if defined(__SSE2__)
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));                           // lanes 0, 1 plus lanes 2, 3
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 0x55)));  // lane 0 plus lane 1
#else
  for (int w = kLanesF / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) v[i] = v[i] + v[i + w];
  return v[0];
#endif
}

// halving_sum of each of N vectors into out[0, N). Eight at a time in the AVX-512 build: each step
// of the tree adds the same pairs of lanes for two, four, then eight vectors at once.
template <int N> inline void halving_sums(const VecF* v, float* out) {
#if defined(__AVX512F__)
  if constexpr (N == 8) {
    __m512 s[4], u[2];
    for (int p = 0; p < 4; ++p)  // [v_2p lanes i + i+8 | v_2p+1's], i < 8
      s[p] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * p], v[2 * p + 1], 0xEE));
    for (int p = 0; p < 2; ++p)  // quarters: vector 4p + c's lanes i + i+4, i < 4
      u[p] = _mm512_add_ps(_mm512_shuffle_f32x4(s[2 * p], s[2 * p + 1], 0x88),
                           _mm512_shuffle_f32x4(s[2 * p], s[2 * p + 1], 0xDD));
    // quarter c: vector c's lanes i + i+2 (i < 2), then vector 4 + c's; then lane 0 + lane 1 of each
    const __m512 w = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x44), _mm512_shuffle_ps(u[0], u[1], 0xEE));
    const __m512 z = _mm512_add_ps(_mm512_shuffle_ps(w, w, 0x88), _mm512_shuffle_ps(w, w, 0xDD));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
    _mm256_storeu_ps(out, _mm512_castps512_ps256(_mm512_permutexvar_ps(order, z)));
    return;
  }
#elif defined(__AVX2__)
  // Four at a time in the AVX2 build, the same tree (a decode step's attention scores: one lane at
  // a time took a seventh of the kernel).
  for (int i = 0; i + 4 <= N; i += 4) {
    const __m256 ab = _mm256_add_ps(_mm256_permute2f128_ps(v[i], v[i + 1], 0x20),  // [a, b] lanes j + j+4
                                    _mm256_permute2f128_ps(v[i], v[i + 1], 0x31));
    const __m256 cd = _mm256_add_ps(_mm256_permute2f128_ps(v[i + 2], v[i + 3], 0x20),
                                    _mm256_permute2f128_ps(v[i + 2], v[i + 3], 0x31));
    // Lanes 0 + 2 and 1 + 3 of each: [a, c | b, d], then lane 0 + lane 1: [a, c, ., . | b, d, ., .].
    const __m256 u = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, 0x44), _mm256_shuffle_ps(ab, cd, 0xEE));
    const __m256 z = _mm256_add_ps(_mm256_shuffle_ps(u, u, 0x88), _mm256_shuffle_ps(u, u, 0xDD));
    _mm_storeu_ps(out + i, _mm_unpacklo_ps(_mm256_castps256_ps128(z), _mm256_extractf128_ps(z, 1)));
  }
  for (int i = N / 4 * 4; i < N; ++i) out[i] = halving_sum(v[i]);
  return;
#endif
  for (int i = 0; i < N; ++i) out[i] = halving_sum(v[i]);
}

#if defined(__GLIBC__) && defined(__x86_64__)
#define NUVEC_HAS_VECTOR_MATH 1
#if defined(__AVX512F__)
#define NUVEC_MVEC(name) _ZGVeN16v_##name##f
#define NUVEC_MVEC2(name) _ZGVeN16vv_##name##f
#elif defined(__AVX2__)
#define NUVEC_MVEC(name) _ZGVdN8v_##name##f
#define NUVEC_MVEC2(name) _ZGVdN8vv_##name##f
#else
#define NUVEC_MVEC(name) _ZGVbN4v_##name##f
#define NUVEC_MVEC2(name) _ZGVbN4vv_##name##f
#endif
extern "C" {
#define NUVEC_DECLARE_MVEC(name) VecF NUVEC_MVEC(name)(VecF);
#define NUVEC_DECLARE_MVEC2(name) VecF NUVEC_MVEC2(name)(VecF, VecF);
NUVEC_DECLARE_MVEC(exp)
NUVEC_DECLARE_MVEC(expm1)
NUVEC_DECLARE_MVEC(log)
NUVEC_DECLARE_MVEC(log1p)
NUVEC_DECLARE_MVEC(log2)
NUVEC_DECLARE_MVEC(log10)
NUVEC_DECLARE_MVEC(sin)
NUVEC_DECLARE_MVEC(cos)
NUVEC_DECLARE_MVEC(tan)
NUVEC_DECLARE_MVEC(asin)
NUVEC_DECLARE_MVEC(acos)
NUVEC_DECLARE_MVEC(atan)
NUVEC_DECLARE_MVEC(sinh)
NUVEC_DECLARE_MVEC(cosh)
NUVEC_DECLARE_MVEC(tanh)
NUVEC_DECLARE_MVEC(asinh)
NUVEC_DECLARE_MVEC(acosh)
NUVEC_DECLARE_MVEC(atanh)
NUVEC_DECLARE_MVEC2(pow)
NUVEC_DECLARE_MVEC2(atan2)
}
#undef NUVEC_DECLARE_MVEC
#undef NUVEC_DECLARE_MVEC2
#endif

// Applies a vector function to n floats; the tail goes through the same vector code (padded),
// so an element's result never depends on where it sits.
template <class VF> inline void map_vec(const float* a, float* o, int64_t n, VF vf) {
  int64_t i = 0;
  for (; i + kLanesF <= n; i += kLanesF) store(o + i, vf(load(a + i)));
  if (i < n) {
    float in[kLanesF] = {}, out[kLanesF];
    std::memcpy(in, a + i, (n - i) * 4);
    store(out, vf(load(in)));
    std::memcpy(o + i, out, (n - i) * 4);
  }
}

template <class VF>
inline void map_vec2(const float* a, bool a_scalar, const float* b, bool b_scalar, float* o, int64_t n, VF vf) {
  VecF sa = splat(a_scalar ? a[0] : 0.0f), sb = splat(b_scalar ? b[0] : 0.0f);
  int64_t i = 0;
  for (; i + kLanesF <= n; i += kLanesF) store(o + i, vf(a_scalar ? sa : load(a + i), b_scalar ? sb : load(b + i)));
  if (i < n) {
    float ta[kLanesF] = {}, tb[kLanesF] = {}, out[kLanesF];
    if (!a_scalar) std::memcpy(ta, a + i, (n - i) * 4);
    if (!b_scalar) std::memcpy(tb, b + i, (n - i) * 4);
    store(out, vf(a_scalar ? sa : load(ta), b_scalar ? sb : load(tb)));
    std::memcpy(o + i, out, (n - i) * 4);
  }
}

}  // namespace nuvec::cpu::NUVEC_ISA
