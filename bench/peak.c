// The machine's ceilings for bench/matmul.py: float32 FMA rate and memory read bandwidth, on
// `threads` threads. `peak fma N`: every thread runs independent chains of 512-bit FMAs (enough
// chains to cover the FMA latency on every pipe). `peak read N`: every thread sums its share of a
// 512 MiB buffer with 512-bit loads. Prints GFLOP/s or GB/s.
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 24
#define FMA_ITERS 20000000L
#define READ_BYTES (512L << 20)
#define READ_PASSES 8

static float* buffer;
static int threads;

static void* fma_loop(void* out) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_set1_ps((float)i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < FMA_ITERS; ++n) {
#pragma GCC unroll 24
    for (int i = 0; i < CHAINS; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float s = 0;
  for (int i = 0; i < CHAINS; ++i) s += _mm512_reduce_add_ps(acc[i]);
  *(float*)out = s;
  return NULL;
}

// Four streams in lockstep per thread (as a matrix-vector product reads rows of its matrix):
// one stream alone does not reach the memory's bandwidth.
static void* read_loop(void* arg) {
  long id = *(long*)arg, n = READ_BYTES / 4 / threads, q = n / 4;
  const float* p = buffer + id * n;
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int pass = 0; pass < READ_PASSES; ++pass)
    for (long i = 0; i < q; i += 64)
      for (int j = 0; j < 64; j += 16) {  // 256 bytes of each stream per step
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p + i + j));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + q + i + j));
        s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + 2 * q + i + j));
        s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + 3 * q + i + j));
      }
  *(float*)arg = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: peak fma|read THREADS\n");
    return 2;
  }
  int fma = strcmp(argv[1], "fma") == 0;
  threads = atoi(argv[2]);
  if (threads < 1 || threads > 256) return 2;
  pthread_t t[256];
  long args[256];
  if (!fma) {
    buffer = aligned_alloc(64, READ_BYTES);
    memset(buffer, 0, READ_BYTES);  // touch every page before timing
  }
  double t0 = now();
  for (int i = 0; i < threads; ++i) {
    args[i] = i;
    pthread_create(&t[i], NULL, fma ? fma_loop : read_loop, &args[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  double s = now() - t0;
  if (fma) printf("%.1f\n", 2.0 * 16 * CHAINS * (double)FMA_ITERS * threads / s / 1e9);
  else printf("%.1f\n", (double)READ_BYTES * READ_PASSES / s / 1e9);
  return 0;
}
