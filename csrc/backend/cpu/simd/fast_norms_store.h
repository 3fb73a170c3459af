// Stores that bypass the caches, for the row kernels' outputs larger than the caches: they
// skip the read-for-ownership of each output line (a third of the traffic of a copy-like pass).
// Included by the simd row kernels (fast_norms.cpp, rope.cpp) only; their callers fence
// (stream_fence in backend/cpu/copy.h) once a thread's rows are done.
#pragma once
#include <cstdint>

#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {

inline bool vector_aligned(const float* p) { return reinterpret_cast<uintptr_t>(p) % kVecBytes == 0; }

// p must be vector_aligned.
inline void store_stream(float* p, VecF v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, v);
#elif defined(__AVX__)
  _mm256_stream_ps(p, v);
#elif defined(__SSE__)
  _mm_stream_ps(p, v);
#else
  store(p, v);
#endif
}

}  // namespace nuvec::cpu::NUVEC_ISA
