// What a one-input, one-output float32 op can reach on this machine: y = x + 1 over n floats on
// 2 threads, written three ways: over x itself (in place: the lines were just read, so a store
// needs no read first), to another buffer with plain stores (each line is read into the cache
// before it is written) and with non-temporal stores (written around the caches). bench/compile.py
// and bench/fast_norms.py take the in-place row as "the bandwidth"; an op that makes a fresh
// result is bounded by the better of the other two.
//
//   gcc -O2 -mavx512f -fopenmp bench/store_ceiling.c -o /tmp/store_ceiling
//   /tmp/store_ceiling 16777216   (elements: 64 MiB)
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_time(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 16L << 20;
  float* x = aligned_alloc(64, n * 4);
  float* y = aligned_alloc(64, n * 4);
  for (long i = 0; i < n; ++i) x[i] = 1, y[i] = 0;
  const char* names[] = {"in place", "plain stores", "non-temporal stores"};
  for (int mode = 0; mode < 3; ++mode) {
    double t[15];
    for (int r = 0; r < 15; ++r) {
      double t0 = now();
#pragma omp parallel for num_threads(2)
      for (long i = 0; i < n; i += 16) {
        __m512 v = _mm512_add_ps(_mm512_load_ps(x + i), _mm512_set1_ps(1));
        if (mode == 0)
          _mm512_store_ps(x + i, v);
        else if (mode == 1)
          _mm512_store_ps(y + i, v);
        else
          _mm512_stream_ps(y + i, v);
      }
      t[r] = now() - t0;
    }
    qsort(t, 15, sizeof t[0], by_time);
    printf("%ld MiB, %s: %.1f GB/s (median of 15)\n", n * 4 >> 20, names[mode], 8.0 * n / t[7] / 1e9);
  }
  return 0;
}
