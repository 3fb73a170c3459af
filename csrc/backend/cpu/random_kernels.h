// The random kernels (backend/cpu/simd/random.cpp), built once per instruction set.
#pragma once
#include <cstdint>

#include "core/primitives/random.h"

namespace nuvec::cpu {

// What a kernel makes of each 32-bit Threefry output b (u = min(b / 2^32, nextafter(1, 0))):
// the bits; u; erfinv(2u + nextafter(-1, 0)); or sqrt(2) times that, all in float32 with MLX's
// rounding at each step (so the fused kernel gives the bits of MLX's chain of ops).

// For i < n: (a, b) = threefry2x32(key (k0, k1), counters (c0 + i, c1 + i)); out0[i] = f(a), and
// out1[i] = f(b) unless out1 is null. Outputs are uint32 for `bits`, float32 otherwise.
using RandomKernel = void (*)(RandomKind kind, uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, int64_t n,
                              void* out0, void* out1);

#define NUVEC_DECLARE_RANDOM(ns)                                                                               \
  namespace ns {                                                                                               \
  void random_fill(RandomKind kind, uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, int64_t n, void* out0, \
                   void* out1);                                                                                \
  }
NUVEC_DECLARE_RANDOM(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_RANDOM(avx2)
NUVEC_DECLARE_RANDOM(avx512)
#endif
#undef NUVEC_DECLARE_RANDOM

}  // namespace nuvec::cpu
