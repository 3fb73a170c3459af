// MLX's float32 exp and erf as its CPU computes them (a Cephes-style 2^x polynomial; Abramowitz
// and Stegun 7.1.26 for erf), step for step with real fused multiply-adds, so the random samplers
// built on them give MLX's bits. Less accurate than nuvec's exp and erf, which stay as they are.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

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
