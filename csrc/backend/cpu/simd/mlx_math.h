// MLX's float32 exp and erf as its CPU computes them (a Cephes-style 2^x polynomial; Abramowitz
// and Stegun 7.1.26 for erf), step for step with real fused multiply-adds, so the random samplers
// built on them give MLX's bits. Less accurate than nuvec's exp and erf, which stay as they are.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef NUVEC_ISA
#error "NUVEC_ISA must name the instruction set this file is built for"
#endif

namespace nuvec::cpu::NUVEC_ISA {

inline float mlx_expf(float x0) {
  if (std::isnan(x0)) return x0;
  if (x0 > 88.0f) return INFINITY;
  if (x0 < -88.0f) return 0.0f;
  float x = x0 * 1.442695f;  // log2(e)
  float ipart = std::floor(x + 0.5f);
  float f = x - ipart;
  float p = 1.535336188319500e-4f;
  p = std::fma(p, f, 1.339887440266574e-3f);
  p = std::fma(p, f, 9.618437357674640e-3f);
  p = std::fma(p, f, 5.550332471162809e-2f);
  p = std::fma(p, f, 2.402264791363012e-1f);
  p = std::fma(p, f, 6.931472028550421e-1f);
  p = std::fma(p, f, 1.0f);
  // 2^ipart from its exponent bits (ipart in [-127, 127] here; -127 gives 0 as MLX's does).
  int32_t bits = (int32_t(ipart) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return scale * p;
}

#if defined(__AVX512F__)
// mlx_expf on sixteen lanes: the same operations lane by lane (the products, the floor, the fused
// multiply-adds, the exponent bits), the lanes out of [-88, 88] computed as 0 (no subnormal
// arithmetic, which this processor runs in microcode) and then set as mlx_expf sets them.
inline __m512 mlx_expf16(__m512 x0) {
  auto all = [](float v) { return _mm512_set1_ps(v); };
  const __mmask16 above = _mm512_cmp_ps_mask(x0, all(88.0f), _CMP_GT_OQ);
  const __mmask16 below = _mm512_cmp_ps_mask(x0, all(-88.0f), _CMP_LT_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q);
  const __m512 x = _mm512_mul_ps(_mm512_maskz_mov_ps(__mmask16(~(above | below | nan)), x0), all(1.442695f));
  const __m512 ipart = _mm512_roundscale_ps(_mm512_add_ps(x, all(0.5f)), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, ipart);
  __m512 p = all(1.535336188319500e-4f);
  p = _mm512_fmadd_ps(p, f, all(1.339887440266574e-3f));
  p = _mm512_fmadd_ps(p, f, all(9.618437357674640e-3f));
  p = _mm512_fmadd_ps(p, f, all(5.550332471162809e-2f));
  p = _mm512_fmadd_ps(p, f, all(2.402264791363012e-1f));
  p = _mm512_fmadd_ps(p, f, all(6.931472028550421e-1f));
  p = _mm512_fmadd_ps(p, f, all(1.0f));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(ipart), _mm512_set1_epi32(127)), 23);
  __m512 r = _mm512_mul_ps(_mm512_castsi512_ps(bits), p);
  r = _mm512_mask_mov_ps(r, above, all(INFINITY));
  r = _mm512_mask_mov_ps(r, below, _mm512_setzero_ps());
  return _mm512_mask_mov_ps(r, nan, x0);
}
#endif

// erf(v) for v > 0; MLX negates it otherwise (so MLX's erf(0) is -(1 - r(1)), a tiny negative).
inline float mlx_erf_magnitude(float v) {
  float t = 1.0f / std::fma(0.3275911f, std::fabs(v), 1.0f);
  float r = std::fma(1.061405429f, t, -1.453152027f);
  r = std::fma(r, t, 1.421413741f);
  r = std::fma(r, t, -0.284496736f);
  r = std::fma(r, t, 0.254829592f);
  float e = -mlx_expf(-v * v);
  return std::fma(e * t, r, 1.0f);
}

}  // namespace nuvec::cpu::NUVEC_ISA
