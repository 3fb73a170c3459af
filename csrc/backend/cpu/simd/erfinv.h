// MLX's float32 inverse error function (N. Juffa's minimax polynomials in log(1 - a^2), split at
// |t| = 6.125). The same constants, fused multiply-adds and a correctly rounded logf give the
// same bits as MLX, which erfinv and random.normal rely on. Shared by unary.cpp and random.cpp.
#pragma once
#include <cmath>

#ifndef NUVEC_ISA
#error "NUVEC_ISA must name the instruction set this file is built for"
#endif

namespace nuvec::cpu::NUVEC_ISA {

constexpr float kErfinvTail[] = {3.03697567e-10f, 2.93243101e-8f, 1.22150334e-6f,  2.84108955e-5f, 3.93552968e-4f,
                                 3.02698812e-3f,  4.83185798e-3f, -2.64646143e-1f, 8.40016484e-1f};
constexpr float kErfinvCenter[] = {5.43877832e-9f,  1.43285448e-7f, 1.22774793e-6f, 1.12963626e-7f,  -5.61530760e-5f,
                                   -1.47697632e-4f, 2.31468678e-3f, 1.15392581e-2f, -2.32015476e-1f, 8.86226892e-1f};
constexpr float kErfinvSplit = 6.125f;

// For |a| < 1 (callers handle the edges).
inline float erfinv_f(float a) {
  float t = std::log(std::fma(a, 0.0f - a, 1.0f));
  float p;
  if (std::fabs(t) > kErfinvSplit) {
    p = kErfinvTail[0];
    for (int k = 1; k < 9; ++k) p = std::fma(p, t, kErfinvTail[k]);
  } else {
    p = kErfinvCenter[0];
    for (int k = 1; k < 10; ++k) p = std::fma(p, t, kErfinvCenter[k]);
  }
  return a * p;
}

}  // namespace nuvec::cpu::NUVEC_ISA
