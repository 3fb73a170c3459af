// The CPU Adam step's operands, and its loop in each instruction set's build
// (backend/cpu/simd/optimizer.cpp).
#pragma once
#include <cstdint>

#include "core/primitives/optimizer.h"

namespace nuvec::cpu {

struct AdamOperands {
  const float *p, *g, *m, *v;  // read (p, m, v may alias their outputs: element i is read first)
  float *p_out, *m_out, *v_out;
  AdamConstants c;
  float lr, correction, decay;  // correction and decay are read only when the flags say so
  bool corrected, decayed;
};

// Elements [begin, end) of one step, all in registers, every op rounded to float32 as the op
// path rounds it (these files build without FMA contraction).
#define NUVEC_DECLARE_ADAM_ISA(ns)                                   \
  namespace ns {                                                     \
  void adam_step(const AdamOperands& a, int64_t begin, int64_t end); \
  }
NUVEC_DECLARE_ADAM_ISA(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_ADAM_ISA(avx2)
NUVEC_DECLARE_ADAM_ISA(avx512)
#endif
#undef NUVEC_DECLARE_ADAM_ISA

}  // namespace nuvec::cpu
