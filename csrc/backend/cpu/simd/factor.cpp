// The triangular block solve of the factorisations (backend/cpu/factor.h), built per instruction
// set: vectors run along B's columns, so each lane is one column's own sequence of operations.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "backend/cpu/factor.h"
#include "backend/cpu/items.h"

#include "backend/cpu/simd/fma.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

template <class T> struct VecOf;
template <> struct VecOf<float> { using type = VecF; };
template <> struct VecOf<double> { using type = VecD; };

// The register tile of a group of rows (matmul's micro-kernel tile: MR rows by NV vectors of
// columns, fma.h).
constexpr int kGroup = kMR, kVecs = kNV;

// Rows s0 .. s0 + R (in solve order) of one chunk of columns, `x` (nb rows, W apart, the earlier
// rows solved): each row starts from its b, adds the negated triangle (`neg`, row-major in solve
// order) times the earlier rows, first those before the group then those in it, and is divided
// by the diagonal.
template <class T, class V, int R>
void solve_group(const T* neg, const T* diag, int64_t nb, int64_t s0, bool unit, T* x) {
  constexpr int64_t L = sizeof(V) / sizeof(T), W = kVecs * L;
  V acc[R][kVecs];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) acc[r][j] = loadv<V>(x + (s0 + r) * W + j * L);
  const T* t = neg + s0 * nb;
  for (int64_t q = 0; q < s0; ++q) {
    V xv[kVecs];
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) xv[j] = loadv<V>(x + q * W + j * L);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      V tv = splat(t[r * nb + q]);
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) acc[r][j] = fmadd(tv, xv[j], acc[r][j]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int p = 0; p < r; ++p) {
      V tv = splat(t[r * nb + s0 + p]);
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) acc[r][j] = fmadd(tv, acc[p][j], acc[r][j]);
    }
    if (!unit) {
      V d = splat(diag[s0 + r]);
#pragma GCC unroll 4
      for (int j = 0; j < kVecs; ++j) acc[r][j] = acc[r][j] / d;
    }
#pragma GCC unroll 4
    for (int j = 0; j < kVecs; ++j) storev(x + (s0 + r) * W + j * L, acc[r][j]);
  }
}

template <class T, class V, size_t... R> constexpr auto group_kernels(std::index_sequence<R...>) {
  return std::array{&solve_group<T, V, int(R) + 1>...};
}

template <class T>
void solve(const T* t, int64_t rs, int64_t cs, int64_t nb, bool forward, bool unit, T* b, int64_t ldb, int64_t cols) {
  using V = typename VecOf<T>::type;
  constexpr int64_t W = kVecs * int64_t(sizeof(V) / sizeof(T));
  static constexpr auto groups = group_kernels<T, V>(std::make_index_sequence<kGroup>());
  // The triangle negated, in solve order (row s of it is row `forward ? s : nb - 1 - s`).
  T neg[kTriangleLeaf * kTriangleLeaf], diag[kTriangleLeaf];
  auto row = [&](int64_t s) { return forward ? s : nb - 1 - s; };
  for (int64_t s = 0; s < nb; ++s) {
    diag[s] = t[row(s) * (rs + cs)];
    for (int64_t q = 0; q < s; ++q) neg[s * nb + q] = -t[row(s) * rs + row(q) * cs];
  }
  // Columns are solved a block at a time on a copy, chunk by chunk: a chunk's rows contiguous
  // (rows of B a power of two apart would share cache sets), the last chunk padded, so no
  // column's bits depend on its place; the copy reads B's rows in long runs.
  constexpr int64_t kBlock = 256 / W * W;
  thread_local std::vector<T> buf;
  buf.resize(size_t(kTriangleLeaf * kBlock));
  T* x = buf.data();
  for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
    int64_t width = std::min(kBlock, cols - c0), chunks = ceil_div(width, W);
    if (width % W) std::fill(x + (chunks - 1) * nb * W, x + chunks * nb * W, T(0));
    for (int64_t s = 0; s < nb; ++s)
      for (int64_t c = 0; c < chunks; ++c)
        std::memcpy(x + (c * nb + s) * W, b + row(s) * ldb + c0 + c * W,
                    size_t(std::min(W, width - c * W)) * sizeof(T));
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t s0 = 0; s0 < nb; s0 += kGroup)
        groups[size_t(std::min<int64_t>(kGroup, nb - s0) - 1)](neg, diag, nb, s0, unit, x + c * nb * W);
    for (int64_t s = 0; s < nb; ++s)
      for (int64_t c = 0; c < chunks; ++c)
        std::memcpy(b + row(s) * ldb + c0 + c * W, x + (c * nb + s) * W,
                    size_t(std::min(W, width - c * W)) * sizeof(T));
  }
}

}  // namespace

void fill_factor(FactorKernels& t) {
  t.solve_f32 = &solve<float>;
  t.solve_f64 = &solve<double>;
}

}  // namespace nuvec::cpu::NUVEC_ISA
