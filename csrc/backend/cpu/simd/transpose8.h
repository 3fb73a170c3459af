// An 8 x 8 float32 block transposed in AVX2 registers (unpack pairs, then quads, then 128-bit
// halves), shared by the matrix product's packing and the transposing copies. Included inside
// nothing: it opens the build's own NUVEC_ISA namespace.
#pragma once
#if defined(__AVX2__)
#include <immintrin.h>

namespace nuvec::cpu::NUVEC_ISA {

// v[i] holds row i of the block on entry, column i on return.
inline void transpose8(__m256 (&v)[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    v[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    v[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    v[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    v[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(v[i], v[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(v[i], v[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) v[i] = t[i];
}

}  // namespace nuvec::cpu::NUVEC_ISA
#endif
