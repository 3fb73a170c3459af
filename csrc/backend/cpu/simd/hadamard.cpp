// One radix-2 stage of the Walsh-Hadamard butterfly, built per instruction set
// (backend/cpu/hadamard.cpp drives it): pairs (j, j + h) become (x + y, x - y), each optionally
// times `scale` afterwards, exactly as MLX's CPU kernel rounds them (no contraction in these files).
#include <cstdint>

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
}  // namespace

void hadamard_stage_f32(float* w, int64_t len, int64_t h, float scale, bool scaled) {
  scaled ? stage<float, true>(w, len, h, scale) : stage<float, false>(w, len, h, scale);
}

void hadamard_stage_f64(double* w, int64_t len, int64_t h, double scale, bool scaled) {
  scaled ? stage<double, true>(w, len, h, scale) : stage<double, false>(w, len, h, scale);
}

}  // namespace nuvec::cpu::NUVEC_ISA
