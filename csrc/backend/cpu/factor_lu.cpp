// LU with partial pivoting (factor.h), recursive over columns (Toledo's, LAPACK's getrf2): factor
// the left half, solve for the top right block (factor_solve.cpp), update the bottom right block by
// one matmul product, factor it. Panels of at most kPanel columns are factorised unblocked on a
// column-major copy, where the pivot search, scaling and updates run along contiguous columns.
// Pivots swap whole rows of the matrix at once (rows are contiguous in row-major), which is
// LAPACK's swaps applied to every column.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/factor.h"
#include "backend/cpu/matmul.h"
#include "core/errors.h"

namespace nuvec::cpu {

namespace {

// Columns of the unblocked panels.
constexpr int64_t kPanel = 16;

template <class T> struct Lu {
  T* a;
  int64_t m, n, lda;
  int32_t* pivots;
  int64_t info = 0;
  std::vector<T> panel, neg;  // scratch: the column-major panel, the negated block of U

  T* at(int64_t i, int64_t j) const { return a + i * lda + j; }

  // Columns [r0, r0 + w) of rows [r0, m), unblocked (LAPACK's getf2 with getrf2's pivot rule).
  void factor_panel(int64_t r0, int64_t w) {
    int64_t rows = m - r0;
    panel.resize(size_t(w * rows));
    T* p = panel.data();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < w; ++j) p[j * rows + i] = *at(r0 + i, r0 + j);
    for (int64_t j = 0; j < w; ++j) {
      T* col = p + j * rows;
      // Left-looking: column j takes the updates of the columns before it, in order (the bits of
      // rank-1 updates applied step by step), while it stays in cache.
      for (int64_t k = 0; k < j; ++k) {
        const T* ck = p + k * rows;
        T u = col[k];
        for (int64_t i = k + 1; i < rows; ++i) col[i] -= ck[i] * u;
      }
      int64_t piv = j;
      T best = std::abs(col[j]);
      for (int64_t i = j + 1; i < rows; ++i)
        if (std::abs(col[i]) > best) best = std::abs(col[i]), piv = i;  // the first of the largest
      pivots[r0 + j] = int32_t(r0 + piv);
      T pv = col[piv];
      if (pv != T(0)) {
        if (piv != j) {
          for (int64_t c = 0; c < w; ++c) std::swap(p[c * rows + j], p[c * rows + piv]);
          swap_outside(r0 + j, r0 + piv, r0, r0 + w);
        }
        if (std::abs(pv) >= std::numeric_limits<T>::min()) {
          T r = T(1) / pv;
          for (int64_t i = j + 1; i < rows; ++i) col[i] *= r;
        } else {
          for (int64_t i = j + 1; i < rows; ++i) col[i] /= pv;
        }
      } else if (info == 0) {
        info = r0 + j + 1;
      }
    }
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < w; ++j) *at(r0 + i, r0 + j) = p[j * rows + i];
  }

  // Swaps rows r and s of the matrix outside columns [c0, c1).
  void swap_outside(int64_t r, int64_t s, int64_t c0, int64_t c1) {
    std::swap_ranges(at(r, 0), at(r, c0), at(s, 0));
    std::swap_ranges(at(r, c1), at(r, n), at(s, c1));
  }

  // Columns [r0, r0 + w) of rows [r0, m), with their row swaps applied to every column.
  void factor(int64_t r0, int64_t w) {
    if (w <= kPanel) return factor_panel(r0, w);
    int64_t w1 = w / 2, w2 = w - w1;
    factor(r0, w1);
    // U12 = L11^-1 A12, then A22 -= A21 U12 (as A22 += A21 (-U12): products only add).
    factor_detail::solve<T>({at(r0, r0), lda, 1, true, true}, w1, at(r0, r0 + w1), lda, w2);
    neg.resize(size_t(w1 * w2));
    for (int64_t i = 0; i < w1; ++i)
      for (int64_t j = 0; j < w2; ++j) neg[size_t(i * w2 + j)] = -*at(r0 + i, r0 + w1 + j);
    Dtype d = sizeof(T) == 4 ? Dtype::float32 : Dtype::float64;
    gemm(d, {reinterpret_cast<const char*>(at(r0 + w1, r0)), lda, 1},
         {reinterpret_cast<const char*>(neg.data()), w2, 1}, m - r0 - w1, w2, w1,
         reinterpret_cast<char*>(at(r0 + w1, r0 + w1)), lda, true);
    factor(r0 + w1, w2);
  }
};

template <class T> int64_t lu_typed(char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  Lu<T> f{reinterpret_cast<T*>(a), m, n, lda, pivots};
  int64_t k = std::min(m, n);
  if (k == 0) return 0;
  f.factor(0, k);
  // A wide matrix: U's columns past the square, with every swap already applied.
  if (n > m) factor_detail::solve<T>({f.at(0, 0), lda, 1, true, true}, m, f.at(0, m), lda, n - m);
  return f.info;
}

}  // namespace

int64_t lu_factor(Dtype d, char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  if (d == Dtype::float32) return lu_typed<float>(a, m, n, lda, pivots);
  if (d == Dtype::float64) return lu_typed<double>(a, m, n, lda, pivots);
  throw KernelError(EvalErrorKind::other, "lu_factor: float32 and float64 only");
}

}  // namespace nuvec::cpu
