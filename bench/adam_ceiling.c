// What bench/adam.py's Adam step could reach: hand-written loops over 10M float32 on 2 threads,
// beside `c = a + b`. "3 passes" is the structure nuvec's fused element-wise chains give the
// plain rule today (new m, new v, then the parameter reading them back); "1 pass" computes all
// three in one loop (a multi-output fused kernel). "new buffers" writes the results to other
// arrays (as a fused group does now); "in place" writes them over their inputs (as a donated
// buffer would). The arithmetic is MLX's Adam rule in float32.
//
//   gcc -O3 -mavx2 -mfma -fno-math-errno -pthread bench/adam_ceiling.c -o /tmp/adam_ceiling -lm
//   /tmp/adam_ceiling
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 10000000L
#define REPS 15

enum { ADD, THREE_NEW, THREE_IN_PLACE, ONE_NEW, ONE_IN_PLACE, KINDS };
static const char* names[KINDS] = {"c = a + b (12 B/elem)", "Adam, 3 passes, new buffers", "Adam, 3 passes, in place",
                                   "Adam, 1 pass, new buffers", "Adam, 1 pass, in place"};
static const double bytes[KINDS] = {12, 28, 28, 28, 28};  // Adam: what the update needs

static float *p, *g, *m, *v, *p2, *m2, *v2;
static int kind;
static const float b1 = 0.9f, b2 = 0.999f, lr = 1e-3f, eps = 1e-8f;

// Each variant names its arrays itself: through pointer arguments that may alias, the compiler
// would guard the vector loop with an overlap test, which in place fails (a scalar loop).
#define M_RULE(i) (b1 * m[i] + (1 - b1) * g[i])
#define V_RULE(i) (b2 * v[i] + (1 - b2) * (g[i] * g[i]))
#define P_RULE(i, mi, vi) (p[i] - lr * (mi) / (sqrtf(vi) + eps))

static void three_new(long lo, long hi) {
  for (long i = lo; i < hi; ++i) m2[i] = M_RULE(i);
  for (long i = lo; i < hi; ++i) v2[i] = V_RULE(i);
  for (long i = lo; i < hi; ++i) p2[i] = P_RULE(i, m2[i], v2[i]);
}

static void three_in_place(long lo, long hi) {
  for (long i = lo; i < hi; ++i) m[i] = M_RULE(i);
  for (long i = lo; i < hi; ++i) v[i] = V_RULE(i);
  for (long i = lo; i < hi; ++i) p[i] = P_RULE(i, m[i], v[i]);
}

static void one_new(long lo, long hi) {
  for (long i = lo; i < hi; ++i) {
    float mi = M_RULE(i), vi = V_RULE(i);
    p2[i] = P_RULE(i, mi, vi);
    m2[i] = mi;
    v2[i] = vi;
  }
}

static void one_in_place(long lo, long hi) {
  for (long i = lo; i < hi; ++i) {
    float mi = M_RULE(i), vi = V_RULE(i);
    p[i] = P_RULE(i, mi, vi);
    m[i] = mi;
    v[i] = vi;
  }
}

static void* work(void* arg) {
  long t = (long)arg, lo = t * N / 2, hi = (t + 1) * N / 2;
  switch (kind) {
    case ADD:
      for (long i = lo; i < hi; ++i) p2[i] = p[i] + g[i];
      break;
    case THREE_NEW: three_new(lo, hi); break;
    case THREE_IN_PLACE: three_in_place(lo, hi); break;
    case ONE_NEW: one_new(lo, hi); break;
    case ONE_IN_PLACE: one_in_place(lo, hi); break;
  }
  return 0;
}

static double run(int k) {
  struct timespec a, b;
  pthread_t th[2];
  kind = k;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long t = 0; t < 2; ++t) pthread_create(&th[t], 0, work, (void*)t);
  for (int t = 0; t < 2; ++t) pthread_join(th[t], 0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  float** arrays[] = {&p, &g, &m, &v, &p2, &m2, &v2};
  for (int i = 0; i < 7; ++i) {
    *arrays[i] = aligned_alloc(64, N * sizeof(float));
    for (long j = 0; j < N; ++j) (*arrays[i])[j] = 1.0f + (float)(j % 7) * 0.1f;
  }
  double t[KINDS][REPS];
  for (int r = 0; r < REPS; ++r)  // interleaved, so a busy moment costs every row alike
    for (int k = 0; k < KINDS; ++k) t[k][r] = run(k);
  printf("| loop | ms (median) | GB/s |\n|---|---:|---:|\n");
  for (int k = 0; k < KINDS; ++k) {
    qsort(t[k], REPS, sizeof(double), by_value);
    printf("| %s | %.1f | %.2f |\n", names[k], t[k][REPS / 2] * 1e3, bytes[k] * N / t[k][REPS / 2] / 1e9);
  }
  return 0;
}
