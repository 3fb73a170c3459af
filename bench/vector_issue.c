// How often one core issues a 512-bit VPDPBUSD, a 256-bit VPDPBUSD and a 512-bit FMA: twelve
// independent chains of each (more than their latency covers), timed. The quantized products'
// kernels are counted in these operations (docs/lm.md "Speed"); on the project's 2-vCPU Xeon VM
// the 512-bit ones issued once per 0.55 ns, the 256-bit VPDPBUSD once per 0.36-0.50 ns.
//
//   gcc -O2 bench/vector_issue.c -o /tmp/vector_issue && /tmp/vector_issue
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHAINS 12
#define ROUNDS 100000000L

#define TIMED(NAME, TYPE, INIT, OP, SINK)                                  \
  {                                                                        \
    TYPE acc[CHAINS];                                                      \
    for (int j = 0; j < CHAINS; ++j) acc[j] = INIT;                        \
    double t0 = now();                                                     \
    for (long i = 0; i < ROUNDS; ++i) {                                    \
      for (int j = 0; j < CHAINS; ++j) acc[j] = OP;                        \
      __asm__ volatile("" : "+v"(acc[0]));                                 \
    }                                                                      \
    double ns = (now() - t0) / (ROUNDS * (double)CHAINS) * 1e9;            \
    double sink = 0;                                                       \
    for (int j = 0; j < CHAINS; ++j) sink += SINK;                         \
    printf("%-16s %.3f ns per instruction (%g)\n", NAME, ns, sink);        \
  }

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) int main(void) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(5);
  const __m256i a8 = _mm256_set1_epi8(3), b8 = _mm256_set1_epi8(5);
  const __m512 f = _mm512_set1_ps(1.0f);
  TIMED("vpdpbusd zmm", __m512i, _mm512_set1_epi32(j), _mm512_dpbusd_epi32(acc[j], a, b),
        (double)_mm512_reduce_add_epi32(acc[j]));
  TIMED("vpdpbusd ymm", __m256i, _mm256_set1_epi32(j), _mm256_dpbusd_epi32(acc[j], a8, b8),
        (double)_mm256_extract_epi32(acc[j], 0));
  TIMED("vfmadd zmm", __m512, _mm512_set1_ps((float)j), _mm512_fmadd_ps(acc[j], f, f),
        (double)_mm512_reduce_add_ps(acc[j]));
  return 0;
}
