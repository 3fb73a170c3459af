// The LAPACK side of nuvec.linalg's LU / triangular / Cholesky kernels (declared in lapack.h).
// LAPACK is column-major: a row-major matrix is, to it, the transpose. Triangular solves, Cholesky
// and inverses are rewritten on that transpose (no copy); LU needs the matrix itself, so it
// factors a transposed copy.
#include <algorithm>
#include <vector>

#include "backend/cpu/lapack.h"
#include "core/threads.h"

namespace nuvec::cpu::lapack {

namespace {

lapack_int li(int64_t v) { return lapack_int(std::max<int64_t>(v, 1)); }

template <class T> struct Routines;
template <> struct Routines<float> {
  static constexpr auto getrf = scipy_sgetrf_;
  static constexpr auto getri = scipy_sgetri_;
  static constexpr auto potrf = scipy_spotrf_;
  static constexpr auto trtri = scipy_strtri_;
  static constexpr auto trsm = scipy_strsm_;
  static constexpr auto gemm = scipy_sgemm_;
  static constexpr auto laswp = scipy_slaswp_;
  static constexpr auto syrk = scipy_ssyrk_;
};
template <> struct Routines<double> {
  static constexpr auto getrf = scipy_dgetrf_;
  static constexpr auto getri = scipy_dgetri_;
  static constexpr auto potrf = scipy_dpotrf_;
  static constexpr auto trtri = scipy_dtrtri_;
  static constexpr auto trsm = scipy_dtrsm_;
  static constexpr auto gemm = scipy_dgemm_;
  static constexpr auto laswp = scipy_dlaswp_;
  static constexpr auto syrk = scipy_dsyrk_;
};

// Large matrices are cut into blocks of these sizes (fixed: the bits depend on the shape alone).
constexpr int64_t kParallelFrom = 512;  // orders from which one matrix's work is spread on the pool
constexpr int64_t kPanel = 128;         // LU panel width
constexpr int64_t kColumns = 256;       // columns (right-hand sides) per task

// Runs fn(begin, count) over [0, n) in pieces of kColumns, on the pool.
template <class F> void by_columns(int64_t n, F fn) {
  int64_t pieces = (n + kColumns - 1) / kColumns;
  parallel_for(pieces, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) fn(p * kColumns, std::min(kColumns, n - p * kColumns));
  });
}

// Right-looking blocked LU of the column-major m x n a (LAPACK's getrf, 1-based ipiv): LAPACK
// factors each panel; the row swaps, the triangular solve for U's block row and the product
// updating the trailing matrix run per column block on the pool.
template <class T> lapack_int blocked_getrf(T* a, int64_t m, int64_t n, int64_t lda, lapack_int* ipiv) {
  int64_t k = std::min(m, n);
  lapack_int info = 0, ld = lapack_int(lda);
  for (int64_t j = 0; j < k; j += kPanel) {
    int64_t jb = std::min(kPanel, k - j);
    lapack_int pm = lapack_int(m - j), pn = lapack_int(jb), pinfo = 0;
    Routines<T>::getrf(&pm, &pn, a + j + j * lda, &ld, ipiv + j, &pinfo);
    if (info == 0 && pinfo > 0) info = pinfo + lapack_int(j);
    for (int64_t i = j; i < j + jb; ++i) ipiv[i] += lapack_int(j);
    lapack_int k1 = lapack_int(j + 1), k2 = lapack_int(j + jb), one = 1;
    int64_t right = j + jb;
    // Columns [0, j) take the swaps; columns [right, n) also their block row and update.
    by_columns(j + (n - right), [&](int64_t c0, int64_t w) {
      for (int64_t c = c0; c < c0 + w;) {
        int64_t col = c < j ? c : right + (c - j);
        int64_t cw = c < j ? std::min(c0 + w, j) - c : c0 + w - c;
        lapack_int W = lapack_int(cw);
        Routines<T>::laswp(&W, a + col * lda, &ld, &k1, &k2, ipiv, &one);
        if (col >= right) {
          lapack_int JB = lapack_int(jb), rest = lapack_int(m - right);
          T p1 = 1, m1 = -1;
          Routines<T>::trsm("L", "L", "N", "U", &JB, &W, &p1, a + j + j * lda, &ld, a + j + col * lda, &ld, 1, 1, 1, 1);
          if (rest > 0)
            Routines<T>::gemm("N", "N", &rest, &W, &JB, &m1, a + right + j * lda, &ld, a + j + col * lda, &ld, &p1,
                              a + right + col * lda, &ld, 1, 1);
        }
        c += cw;
      }
    });
  }
  return info;
}

// dst[j * ldd + i] = src[i * lds + j] for i < rows, j < cols, in tiles that stay in cache.
template <class T> void transpose(const T* src, int64_t lds, T* dst, int64_t ldd, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(cols, j0 + kTile); ++j) dst[j * ldd + i] = src[i * lds + j];
}

template <class T> int64_t getrf(T* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  lapack_int M = lapack_int(m), N = lapack_int(n), ld = li(lda), info = 0;
  if (std::min(m, n) >= kParallelFrom)
    info = blocked_getrf(a, m, n, lda, pivots);
  else
    Routines<T>::getrf(&M, &N, a, &ld, pivots, &info);
  for (int64_t i = 0; i < std::min(m, n); ++i) pivots[i] -= 1;
  return info;
}

template <class T> int64_t lu_factor_t(T* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  std::vector<T> col(static_cast<size_t>(m * n));  // column-major copy, leading dimension m
  transpose(a, lda, col.data(), m, m, n);
  int64_t info = getrf(col.data(), m, n, m, pivots);
  transpose(col.data(), m, a, lda, n, m);
  return info;
}

template <class T> void triangular_solve_t(const T* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit,
                                           T* b, int64_t nrhs, int64_t ldb) {
  // Row-major B (n x nrhs) is column-major B^T: solve X^T op(T)^T = B^T, with column-major
  // T^T (upper when T is lower): op(T)^T is T^T itself, or its transpose. Right-hand sides are
  // rows of B^T: a large solve runs them in blocks on the pool.
  auto solve = [&](int64_t r0, int64_t rows) {
    lapack_int M = lapack_int(rows), N = lapack_int(n), lt = li(ldt), lb = li(ldb);
    T one = 1;
    Routines<T>::trsm("R", lower ? "U" : "L", transpose ? "T" : "N", unit ? "U" : "N", &M, &N, &one, t, &lt, b + r0,
                      &lb, 1, 1, 1, 1);
  };
  if (n >= kParallelFrom)
    by_columns(nrhs, solve);
  else
    solve(0, nrhs);
}

// Right-looking blocked Cholesky of the column-major n x n a in its upper (A = U^T U) or lower
// (A = L L^T) triangle: LAPACK factors each diagonal block; the block row (column) solve and the
// trailing update run per column block on the pool. Returns LAPACK's info.
template <class T> lapack_int blocked_potrf(T* a, int64_t n, int64_t lda, bool up) {
  lapack_int ld = lapack_int(lda);
  T p1 = 1, m1 = -1;
  auto at = [&](int64_t i, int64_t j) { return a + i + j * lda; };
  constexpr int64_t kBlock = 2 * kPanel;
  for (int64_t j = 0; j < n; j += kBlock) {
    int64_t jb = std::min(kBlock, n - j), r = j + jb, rest = n - r;
    lapack_int JB = lapack_int(jb), info = 0;
    Routines<T>::potrf(up ? "U" : "L", &JB, at(j, j), &ld, &info, 1);
    if (info > 0) return info + lapack_int(j);
    if (rest == 0) break;
    // U12 = U11^-T A12 (L21 = A21 L11^-T), by columns of U12 (rows of L21).
    by_columns(rest, [&](int64_t c0, int64_t w) {
      lapack_int W = lapack_int(w);
      if (up)
        Routines<T>::trsm("L", "U", "T", "N", &JB, &W, &p1, at(j, j), &ld, at(j, r + c0), &ld, 1, 1, 1, 1);
      else
        Routines<T>::trsm("R", "L", "T", "N", &W, &JB, &p1, at(j, j), &ld, at(r + c0, j), &ld, 1, 1, 1, 1);
    });
    // A22 -= U12^T U12 (L21 L21^T) in the triangle, by columns of A22.
    by_columns(rest, [&](int64_t c0, int64_t w) {
      lapack_int W = lapack_int(w), off = lapack_int(up ? c0 : rest - c0 - w);
      if (up) {
        Routines<T>::syrk("U", "T", &W, &JB, &m1, at(j, r + c0), &ld, &p1, at(r + c0, r + c0), &ld, 1, 1);
        if (off > 0)
          Routines<T>::gemm("T", "N", &off, &W, &JB, &m1, at(j, r), &ld, at(j, r + c0), &ld, &p1, at(r, r + c0), &ld, 1,
                            1);
      } else {
        Routines<T>::syrk("L", "N", &W, &JB, &m1, at(r + c0, j), &ld, &p1, at(r + c0, r + c0), &ld, 1, 1);
        if (off > 0)
          Routines<T>::gemm("N", "T", &off, &W, &JB, &m1, at(r + c0 + w, j), &ld, at(r + c0, j), &ld, &p1,
                            at(r + c0 + w, r + c0), &ld, 1, 1);
      }
    });
  }
  return 0;
}

template <class T> int64_t cholesky_t(T* a, int64_t n, int64_t lda, bool upper) {
  // Row-major A's lower triangle is column-major A^T's upper: A = L L^T is A^T = U^T U, U = L^T.
  if (n >= kParallelFrom) return blocked_potrf(a, n, lda, !upper);
  lapack_int N = lapack_int(n), ld = li(lda), info = 0;
  Routines<T>::potrf(upper ? "L" : "U", &N, a, &ld, &info, 1);
  return info;
}

template <class T> int64_t inverse_t(T* a, int64_t n, int32_t* pivots) {
  // Column-major, `a` is A^T; its inverse is (A^-1)^T, which is A^-1 read row-major.
  lapack_int N = lapack_int(n), ld = li(n), info = 0;
  if (n >= kParallelFrom) {
    // Large: getri's steps with the work on the pool. X = U^-1; then X L = U^-1 row block by row
    // block; then the column swaps, last first: A^-T = U^-1 L^-1 P^T.
    std::vector<T> lu(a, a + n * n);
    info = blocked_getrf(lu.data(), n, n, n, pivots);
    if (info != 0) return info;
    // U^-1 by column blocks: block [c0, c0 + w) has rows below c0 + w zero, so solves U's leading
    // (c0 + w) x (c0 + w) block against those columns of I.
    by_columns(n, [&](int64_t c0, int64_t w) {
      T* x = a + c0 * n;
      std::fill(x, x + w * n, T(0));
      for (int64_t i = 0; i < w; ++i) x[i * n + c0 + i] = 1;
      lapack_int M = lapack_int(c0 + w), W = lapack_int(w);
      T p1 = 1;
      Routines<T>::trsm("L", "U", "N", "N", &M, &W, &p1, lu.data(), &ld, x, &ld, 1, 1, 1, 1);
    });
    by_columns(n, [&](int64_t r0, int64_t rows) {
      lapack_int R = lapack_int(rows);
      T p1 = 1;
      Routines<T>::trsm("R", "L", "N", "U", &R, &N, &p1, lu.data(), &ld, a + r0, &ld, 1, 1, 1, 1);
    });
    for (int64_t j = n - 1; j >= 0; --j)
      if (pivots[j] - 1 != j) std::swap_ranges(a + j * n, a + (j + 1) * n, a + (pivots[j] - 1) * n);
    return info;
  }
  Routines<T>::getrf(&N, &N, a, &ld, pivots, &info);
  if (info != 0) return info;
  lapack_int lwork = li(n * 64);
  std::vector<T> work(static_cast<size_t>(lwork));
  Routines<T>::getri(&N, a, &ld, pivots, work.data(), &lwork, &info);
  return info;
}

template <class T> int64_t triangular_inverse_t(T* a, int64_t n, bool upper) {
  lapack_int N = lapack_int(n), ld = li(n), info = 0;
  Routines<T>::trtri(upper ? "L" : "U", "N", &N, a, &ld, &info, 1, 1);
  return info;
}

}  // namespace

int64_t lu_factor(Dtype d, char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  if (m == 0 || n == 0) return 0;
  return d == Dtype::float64 ? lu_factor_t(reinterpret_cast<double*>(a), m, n, lda, pivots)
                             : lu_factor_t(reinterpret_cast<float*>(a), m, n, lda, pivots);
}

void triangular_solve(Dtype d, const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit_diagonal,
                      char* b, int64_t nrhs, int64_t ldb) {
  if (n == 0 || nrhs == 0) return;
  if (d == Dtype::float64)
    triangular_solve_t(reinterpret_cast<const double*>(t), n, ldt, lower, transpose, unit_diagonal,
                       reinterpret_cast<double*>(b), nrhs, ldb);
  else
    triangular_solve_t(reinterpret_cast<const float*>(t), n, ldt, lower, transpose, unit_diagonal,
                       reinterpret_cast<float*>(b), nrhs, ldb);
}

int64_t cholesky(Dtype d, char* a, int64_t n, int64_t lda, bool upper) {
  if (n == 0) return 0;
  return d == Dtype::float64 ? cholesky_t(reinterpret_cast<double*>(a), n, lda, upper)
                             : cholesky_t(reinterpret_cast<float*>(a), n, lda, upper);
}

int64_t lu_factor_transposed(Dtype d, char* a, int64_t n, int32_t* pivots) {
  if (n == 0) return 0;
  return d == Dtype::float64 ? getrf(reinterpret_cast<double*>(a), n, n, n, pivots)
                             : getrf(reinterpret_cast<float*>(a), n, n, n, pivots);
}

int64_t inverse(Dtype d, char* a, int64_t n, int32_t* pivots) {
  if (n == 0) return 0;
  return d == Dtype::float64 ? inverse_t(reinterpret_cast<double*>(a), n, pivots)
                             : inverse_t(reinterpret_cast<float*>(a), n, pivots);
}

int64_t triangular_inverse(Dtype d, char* a, int64_t n, bool upper) {
  if (n == 0) return 0;
  return d == Dtype::float64 ? triangular_inverse_t(reinterpret_cast<double*>(a), n, upper)
                             : triangular_inverse_t(reinterpret_cast<float*>(a), n, upper);
}

}  // namespace nuvec::cpu::lapack
