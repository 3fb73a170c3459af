// Scales and biases of the quantized products as float32, shared by their kernel files. Included
// inside nothing: it opens the build's own NUVEC_ISA namespace.
#pragma once
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/ctypes.h"
#include "core/dtype.h"

namespace nuvec::cpu::NUVEC_ISA {

// n elements of a float32, float16 or bfloat16 buffer from element i, as floats (exact): eight at a
// time through the conversion instructions where the build has them (GCC converts vectors of
// _Float16 lane by lane).
inline void to_floats(const void* p, Dtype d, int64_t i, int64_t n, float* out) {
  int64_t j = 0;
  if (d == Dtype::float32) {
    std::memcpy(out, static_cast<const float*>(p) + i, size_t(n) * sizeof(float));
  } else if (d == Dtype::float16) {
    const f16* h = static_cast<const f16*>(p) + i;
#if defined(__F16C__)
    for (; j + 8 <= n; j += 8)
      _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + j))));
#endif
    for (; j < n; ++j) out[j] = float(h[j]);
  } else {
    const bf16* h = static_cast<const bf16*>(p) + i;
#if defined(__AVX2__)
    for (; j + 8 <= n; j += 8) {
      __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + j)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), _mm256_slli_epi32(w, 16));
    }
#endif
    for (; j < n; ++j) out[j] = bf16_to_float(h[j]);
  }
}

}  // namespace nuvec::cpu::NUVEC_ISA
