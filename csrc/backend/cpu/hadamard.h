// The Hadamard transform's butterfly stage, one build per instruction set
// (backend/cpu/simd/hadamard.cpp): over w[0, len), len a multiple of 2h, each pair (j, j + h)
// within a block of 2h becomes (x + y, x - y), times `scale` when `scaled`.
#pragma once
#include <cstdint>

namespace nuvec::cpu {

#define NUVEC_DECLARE_HADAMARD(ns)                                                             \
  namespace ns {                                                                               \
  void hadamard_stage_f32(float* w, int64_t len, int64_t h, float scale, bool scaled);         \
  void hadamard_stage_f64(double* w, int64_t len, int64_t h, double scale, bool scaled);       \
  }
NUVEC_DECLARE_HADAMARD(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_HADAMARD(avx2)
NUVEC_DECLARE_HADAMARD(avx512)
#endif
#undef NUVEC_DECLARE_HADAMARD

}  // namespace nuvec::cpu
