// The triangular block solve of the factorisations (backend/cpu/factor.h), built per instruction
// set: vectors run along B's columns, so each lane is one column's own sequence of operations.
#include "backend/cpu/factor.h"

#include "backend/cpu/simd/fma.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

template <class T> struct VecOf;
template <> struct VecOf<float> { using type = VecF; };
template <> struct VecOf<double> { using type = VecD; };

// Vectors of columns solved at once (their running values stay in registers).
constexpr int kSolveVectors = 4;

// One chunk of columns (kSolveVectors vectors wide) of B, rows in solve order: each row is its
// b minus the already solved rows times the negated triangle (`neg`, nb x nb row-major), divided
// by the diagonal.
template <class T>
void solve_chunk(const T* neg, const T* diag, int64_t nb, bool forward, bool unit, T* b, int64_t ldb) {
  using V = typename VecOf<T>::type;
  constexpr int64_t L = kVecBytes / int64_t(sizeof(T));
  for (int64_t s = 0; s < nb; ++s) {
    int64_t i = forward ? s : nb - 1 - s;
    V acc[kSolveVectors];
    for (int j = 0; j < kSolveVectors; ++j) acc[j] = loadv<V>(b + i * ldb + j * L);
    for (int64_t q = 0; q < s; ++q) {
      int64_t k = forward ? q : nb - 1 - q;
      V t = splat(neg[i * nb + k]);
      for (int j = 0; j < kSolveVectors; ++j) acc[j] = fmadd(t, loadv<V>(b + k * ldb + j * L), acc[j]);
    }
    if (!unit) {
      V d = splat(diag[i]);
      for (int j = 0; j < kSolveVectors; ++j) acc[j] = acc[j] / d;
    }
    for (int j = 0; j < kSolveVectors; ++j) storev(b + i * ldb + j * L, acc[j]);
  }
}

template <class T>
void solve(const T* t, int64_t rs, int64_t cs, int64_t nb, bool forward, bool unit, T* b, int64_t ldb, int64_t cols) {
  constexpr int64_t W = kSolveVectors * kVecBytes / int64_t(sizeof(T));
  T neg[kTriangleLeaf * kTriangleLeaf], diag[kTriangleLeaf];
  for (int64_t i = 0; i < nb; ++i) {
    diag[i] = t[i * (rs + cs)];
    int64_t k0 = forward ? 0 : i + 1, k1 = forward ? i : nb;
    for (int64_t k = k0; k < k1; ++k) neg[i * nb + k] = -t[i * rs + k * cs];
  }
  int64_t c = 0;
  for (; c + W <= cols; c += W) solve_chunk(neg, diag, nb, forward, unit, b + c, ldb);
  if (c == cols) return;
  // The last columns through the same code on a padded copy, so no column's bits depend on its place.
  alignas(64) T pad[kTriangleLeaf * W] = {};
  size_t bytes = size_t(cols - c) * sizeof(T);
  for (int64_t i = 0; i < nb; ++i) std::memcpy(pad + i * W, b + i * ldb + c, bytes);
  solve_chunk(neg, diag, nb, forward, unit, pad, W);
  for (int64_t i = 0; i < nb; ++i) std::memcpy(b + i * ldb + c, pad + i * W, bytes);
}

}  // namespace

void fill_factor(FactorKernels& t) {
  t.solve_f32 = &solve<float>;
  t.solve_f64 = &solve<double>;
}

}  // namespace nuvec::cpu::NUVEC_ISA
