// The machine's float32 FMA peak: every core runs independent chains of 512-bit FMAs
// (enough chains to cover the FMA latency on both pipes). Built and run by bench/matmul.py.
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS 24
static long iters = 20000000;

static void* spin(void* out) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_set1_ps((float)i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iters; ++n) {
#pragma GCC unroll 24
    for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float s = 0;
  for (int i = 0; i < CHAINS; ++i) s += _mm512_reduce_add_ps(acc[i]);
  *(float*)out = s;
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  pthread_t t[256];
  float sink[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, spin, &sink[i]);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  double flops = 2.0 * 16 * CHAINS * (double)iters * threads;
  printf("%.1f\n", flops / s / 1e9);
  return sink[0] == 12345.f;  // keeps the chains alive
}
