// MLX's float32 inverse error function (N. Juffa's minimax polynomials in log(1 - a^2), split at
// |t| = 6.125). The same constants, fused multiply-adds and a correctly rounded logf give the
// same bits as MLX, which erfinv and random.normal rely on. Shared by unary.cpp and random.cpp.
#pragma once
#include <cmath>

#include "core/mlx_constants.h"

#ifndef NUVEC_ISA
#error "NUVEC_ISA must name the instruction set this file is built for"
#endif

namespace nuvec::cpu::NUVEC_ISA {

constexpr float kErfinvTail[] = {NUVEC_ERFINV_TAIL};
constexpr float kErfinvCenter[] = {NUVEC_ERFINV_CENTER};
constexpr float kErfinvSplit = NUVEC_ERFINV_SPLIT;

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
