// The vector arithmetic the matrix-product and convolution micro-kernels share: fused
// multiply-adds, broadcasts, unaligned loads and stores, and the register tile (MR rows by NV
// vectors) of this build. Included inside the kernel files' own NUVEC_ISA namespace.
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {

typedef double VecD __attribute__((vector_size(kVecBytes)));

// One fused multiply-add per lane; the portable x86-64 build has no FMA, so every path there
// rounds the product and the sum separately, in the same order.
inline VecF fmadd(VecF a, VecF b, VecF c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__AVX2__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}
inline VecD fmadd(VecD a, VecD b, VecD c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_pd(a, b, c);
#elif defined(__AVX2__)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

// Every lane x, through the broadcast instruction (splat of a float: simd.h).
inline VecD splat(double x) {
#if defined(__AVX512F__)
  return _mm512_set1_pd(x);
#elif defined(__AVX2__)
  return _mm256_set1_pd(x);
#elif defined(__SSE2__)
  return _mm_set1_pd(x);
#else
  VecD v;
  for (int i = 0; i < kVecBytes / 8; ++i) v[i] = x;
  return v;
#endif
}

template <class V, class T> inline V loadv(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V, class T> inline void storev(T* p, V v) { std::memcpy(p, &v, sizeof(V)); }

// An aligned store around the caches where the build has one (a plain store otherwise); the
// caller fences (sfence) before another thread may read the lines.
template <class V, class T> inline void streamv(T* p, V v) {
#if defined(__AVX512F__)
  if constexpr (sizeof(T) == 4)
    _mm512_stream_ps(p, (__m512)v);
  else
    _mm512_stream_pd(p, (__m512d)v);
#elif defined(__AVX2__)
  if constexpr (sizeof(T) == 4)
    _mm256_stream_ps(p, (__m256)v);
  else
    _mm256_stream_pd(p, (__m256d)v);
#else
  storev(p, v);
#endif
}

// The micro-kernels' register tile: MR rows by NV vectors of accumulators.
#if defined(__AVX512F__)
constexpr int kMR = 14, kNV = 2;
#elif defined(__AVX2__)
constexpr int kMR = 6, kNV = 2;
#else
constexpr int kMR = 4, kNV = 2;
#endif

}  // namespace nuvec::cpu::NUVEC_ISA
