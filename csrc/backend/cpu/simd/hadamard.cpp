// The Walsh-Hadamard transform's loops, built per instruction set (backend/cpu/hadamard.cpp drives
// them): one radix-2 stage, pairs (j, j + h) becoming (x + y, x - y), each optionally times
// `scale` afterwards, and the m-point part; exactly as MLX's CPU kernel rounds them (no
// contraction in these files).
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/ctypes.h"
#include "backend/cpu/hadamard.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {
template <class T, bool kScaled> void stage(T* w, int64_t len, int64_t h, T scale) {
  for (int64_t b = 0; b < len; b += 2 * h) {
    T* __restrict p = w + b;
    T* __restrict q = w + b + h;
    for (int64_t t = 0; t < h; ++t) {
      T x = p[t], y = q[t];
      T s = x + y, d = x - y;
      if (kScaled) s = s * scale, d = d * scale;
      p[t] = s;
      q[t] = d;
    }
  }
}

// Per position i of the m runs of n values: out_j = (0 +- x_0 +- x_1 ... +- x_{m-1}) * scale, the
// sum in k order as MLX's kernel adds; vectorised across i, which changes no element's sequence.
template <class T> void m_point(T* w, int64_t n, int64_t m, const char* h, bool transposed, T scale, T* tmp) {
  for (int64_t j = 0; j < m; ++j) {
    T* __restrict acc = tmp + j * n;
    for (int64_t i = 0; i < n; ++i) acc[i] = T(0);
    for (int64_t k = 0; k < m; ++k) {
      const T* __restrict x = w + k * n;
      if ((transposed ? h[j + k * m] : h[k + j * m]) == '+') {
        for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + x[i];
      } else {
        for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] - x[i];
      }
    }
  }
  for (int64_t i = 0; i < n * m; ++i) w[i] = tmp[i] * scale;
}
}  // namespace

void hadamard_m_f32(float* w, int64_t n, int64_t m, const char* h, bool transposed, float scale, float* tmp) {
  m_point(w, n, m, h, transposed, scale, tmp);
}

void hadamard_m_f64(double* w, int64_t n, int64_t m, const char* h, bool transposed, double scale, double* tmp) {
  m_point(w, n, m, h, transposed, scale, tmp);
}

int hadamard_first_stages_f32(float* w, int64_t len) {
#if defined(__AVX2__)
  // Stages h = 1, 2, 4 on each block of 8 in a register: the same adds and subtracts (a + b and
  // b + a round alike), in one pass.
  for (int64_t i = 0; i < len; i += 8) {
    __m256 v = _mm256_loadu_ps(w + i);
    __m256 t = _mm256_permute_ps(v, 0xB1);  // h = 1: lanes 2j + 1 take x - y
    v = _mm256_blend_ps(_mm256_add_ps(v, t), _mm256_sub_ps(t, v), 0xAA);
    t = _mm256_permute_ps(v, 0x4E);  // h = 2
    v = _mm256_blend_ps(_mm256_add_ps(v, t), _mm256_sub_ps(t, v), 0xCC);
    t = _mm256_permute2f128_ps(v, v, 0x01);  // h = 4
    v = _mm256_blend_ps(_mm256_add_ps(v, t), _mm256_sub_ps(t, v), 0xF0);
    _mm256_storeu_ps(w + i, v);
  }
  return 3;
#else
  (void)w, (void)len;
  return 0;
#endif
}

void hadamard_round(float* w, int64_t n, bool bfloat) {
  if (!bfloat) {  // float16: F16C's conversions where the build has them
    int64_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(w + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(w + i), _MM_FROUND_TO_NEAREST_INT)));
#endif
    for (; i < n; ++i) w[i] = float(f16(w[i]));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {  // bfloat16: to nearest even, NaN kept quiet (ctypes.h's rule)
    uint32_t u;
    std::memcpy(&u, w + i, 4);
    uint32_t r = (u & 0x7fffffffu) > 0x7f800000u ? (u | 0x400000u) : u + 0x7fffu + ((u >> 16) & 1u);
    r &= 0xffff0000u;
    std::memcpy(w + i, &r, 4);
  }
}

void hadamard_stage_f32(float* w, int64_t len, int64_t h, float scale, bool scaled) {
  scaled ? stage<float, true>(w, len, h, scale) : stage<float, false>(w, len, h, scale);
}

void hadamard_stage_f64(double* w, int64_t len, int64_t h, double scale, bool scaled) {
  scaled ? stage<double, true>(w, len, h, scale) : stage<double, false>(w, len, h, scale);
}

}  // namespace nuvec::cpu::NUVEC_ISA
