// Convolution micro-kernels: the matrix product's register tile (MR rows by NV vectors), with
// each row's values read straight from the input through a pointer per tap instead of a packed
// panel, so the im2col matrix is never built (backend/cpu/conv.h states the chain over k).
#include <algorithm>
#include <utility>

#include "backend/cpu/conv.h"
#include "backend/cpu/simd/fma.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class T, class V, int R> void micro(int64_t taps, int64_t cin, const T* const* rows, const T* b, T* c,
                                              int64_t ldc, bool accumulate, bool stream) {
  constexpr int L = sizeof(V) / sizeof(T), NR = kNV * L;
  V acc[R][kNV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kNV; ++j) acc[i][j] = accumulate ? loadv<V>(c + i * ldc + j * L) : V{};
  for (int64_t t = 0; t < taps; ++t, rows += kMR) {
    const T* p[R];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) p[i] = rows[i];
    for (int64_t k = 0; k < cin; ++k, b += NR) {
      V bv[kNV];
#pragma GCC unroll 4
      for (int j = 0; j < kNV; ++j) bv[j] = loadv<V>(b + j * L);
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) {
        V av = splat(p[i][k]);
#pragma GCC unroll 4
        for (int j = 0; j < kNV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
      }
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kNV; ++j) {
      if (stream)
        streamv(c + i * ldc + j * L, acc[i][j]);
      else
        storev(c + i * ldc + j * L, acc[i][j]);
    }
}

// U vectors of channels from c, each the chain over taps from zero.
template <class T, class V, int U>
inline void depthwise_block(int64_t taps, int64_t channels, int64_t c, const T* const* ptrs, const T* w, T* out) {
  constexpr int L = sizeof(V) / sizeof(T);
  V acc[U] = {};
  for (int64_t t = 0; t < taps; ++t) {
    const T* p = ptrs[t] + c;
    const T* wt = w + t * channels + c;
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) acc[u] = fmadd(loadv<V>(p + u * L), loadv<V>(wt + u * L), acc[u]);
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) storev(out + c + u * L, acc[u]);
}

template <class T, class V> void depthwise(int64_t taps, int64_t channels, const T* const* ptrs, const T* w, T* out) {
  constexpr int L = sizeof(V) / sizeof(T), U = 4;
  int64_t c = 0;
  for (; c + U * L <= channels; c += U * L) depthwise_block<T, V, U>(taps, channels, c, ptrs, w, out);
  for (; c + L <= channels; c += L) depthwise_block<T, V, 1>(taps, channels, c, ptrs, w, out);
  if (c < channels) {  // the last channels through the same vector chain, zero-padded
    T xs[L], ws[L], r[L];
    V acc{};
    int64_t n = channels - c;
    for (int64_t t = 0; t < taps; ++t) {
      std::fill(xs, xs + L, T(0)), std::fill(ws, ws + L, T(0));
      std::memcpy(xs, ptrs[t] + c, size_t(n) * sizeof(T));
      std::memcpy(ws, w + t * channels + c, size_t(n) * sizeof(T));
      acc = fmadd(loadv<V>(xs), loadv<V>(ws), acc);
    }
    storev(r, acc);
    std::memcpy(out + c, r, size_t(n) * sizeof(T));
  }
}

// One output channel (NR = 1): R dot products over (tap, channel), vectorised along the
// channels; each row's lanes are summed in lane order at the end of the call, then added to c.
// The order is fixed by the shapes, so the bits do not depend on the threads either. Its scalar
// stores never stream.
template <class T, class V, int R>
void dot(int64_t taps, int64_t cin, const T* const* rows, const T* b, T* c, int64_t ldc, bool accumulate, bool) {
  constexpr int L = sizeof(V) / sizeof(T);
  V acc[R] = {};
  T tail[R] = {};
  for (int64_t t = 0; t < taps; ++t, rows += kMR, b += cin) {
    int64_t k = 0;
    for (; k + L <= cin; k += L) {
      V wv = loadv<V>(b + k);
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) acc[i] = fmadd(loadv<V>(rows[i] + k), wv, acc[i]);
    }
    for (; k < cin; ++k)
      for (int i = 0; i < R; ++i) tail[i] = std::fma(rows[i][k], b[k], tail[i]);
  }
  for (int i = 0; i < R; ++i) {
    T sum = accumulate ? c[i * ldc] : T(0);
    for (int l = 0; l < L; ++l) sum += acc[i][l];
    c[i * ldc] = sum + tail[i];
  }
}

template <int... R> void fill_rows(ConvKernels& t, std::integer_sequence<int, 0, R...>) {
  ((t.f32[R] = &micro<float, VecF, R>), ...);
  ((t.f64[R] = &micro<double, VecD, R>), ...);
  ((t.dot_f32[R] = &dot<float, VecF, R>), ...);
  ((t.dot_f64[R] = &dot<double, VecD, R>), ...);
}

}  // namespace

void fill_conv(ConvKernels& t) {
  t.f32_shape = {kMR, kNV * kLanesF};
  t.f64_shape = {kMR, kNV * (kVecBytes / 8)};
  fill_rows(t, std::make_integer_sequence<int, kMR + 1>{});
  t.depthwise_f32 = &depthwise<float, VecF>;
  t.depthwise_f64 = &depthwise<double, VecD>;
}

}  // namespace nuvec::cpu::NUVEC_ISA
