// The LAPACK side of nuvec.linalg's LU / triangular / Cholesky kernels (declared in lapack.h).
// LAPACK is column-major: a row-major matrix is, to it, the transpose. Triangular solves, Cholesky
// and inverses are rewritten on that transpose (no copy); LU needs the matrix itself, so it
// factors a transposed copy.
#include <algorithm>
#include <vector>

#include "backend/cpu/lapack.h"

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
};
template <> struct Routines<double> {
  static constexpr auto getrf = scipy_dgetrf_;
  static constexpr auto getri = scipy_dgetri_;
  static constexpr auto potrf = scipy_dpotrf_;
  static constexpr auto trtri = scipy_dtrtri_;
  static constexpr auto trsm = scipy_dtrsm_;
};

template <class T> int64_t lu_factor_t(T* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  std::vector<T> col(size_t(m * n));  // column-major copy, leading dimension m
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) col[size_t(j * m + i)] = a[i * lda + j];
  lapack_int M = lapack_int(m), N = lapack_int(n), ld = li(m), info = 0;
  Routines<T>::getrf(&M, &N, col.data(), &ld, pivots, &info);
  for (int64_t i = 0; i < std::min(m, n); ++i) pivots[i] -= 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) a[i * lda + j] = col[size_t(j * m + i)];
  return info;
}

template <class T>
void triangular_solve_t(const T* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit, T* b, int64_t nrhs,
                        int64_t ldb) {
  // Row-major B (n x nrhs) is column-major B^T: solve X^T op(T)^T = B^T, with column-major
  // T^T (upper when T is lower): op(T)^T is T^T itself, or its transpose.
  lapack_int M = lapack_int(nrhs), N = lapack_int(n), lt = li(ldt), lb = li(ldb);
  T one = 1;
  Routines<T>::trsm("R", lower ? "U" : "L", transpose ? "T" : "N", unit ? "U" : "N", &M, &N, &one, t, &lt, b, &lb, 1,
                    1, 1, 1);
}

template <class T> int64_t cholesky_t(T* a, int64_t n, int64_t lda, bool upper) {
  // Row-major A's lower triangle is column-major A^T's upper: A = L L^T is A^T = U^T U, U = L^T.
  lapack_int N = lapack_int(n), ld = li(lda), info = 0;
  Routines<T>::potrf(upper ? "L" : "U", &N, a, &ld, &info, 1);
  return info;
}

template <class T> int64_t inverse_t(T* a, int64_t n, int32_t* pivots) {
  // Column-major, `a` is A^T; its inverse is (A^-1)^T, which is A^-1 read row-major.
  lapack_int N = lapack_int(n), ld = li(n), info = 0;
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

void fix_threads() { scipy_openblas_set_num_threads(1); }

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
