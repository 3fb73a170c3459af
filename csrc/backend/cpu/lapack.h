// OpenBLAS's LAPACK and BLAS routines that nuvec.linalg's LU / triangular / Cholesky family calls
// (from the scipy-openblas32 package: every symbol carries a `scipy_` prefix, Fortran calling
// convention: arguments by pointer, a hidden length after the arguments for each char), and the
// thread policy nuvec runs them under.
//
// Thread policy: OpenBLAS is held at one thread here (blas_threads.h): a large matrix's LU,
// Cholesky, inverse and triangular solves run on nuvec's pool instead, as right-looking blocked
// factorisations whose panels LAPACK factors and whose updates are cut into column blocks of a
// width fixed by the shape, and solves cut by right-hand sides the same way. Bits then depend on
// shapes alone.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

extern "C" {
using lapack_int = int32_t;  // scipy-openblas32: 32-bit LAPACK integers
#define NUVEC_LAPACK_DECLARE(p, T)                                                                                     \
  void scipy_##p##getrf_(const lapack_int* m, const lapack_int* n, T* a, const lapack_int* lda, lapack_int* ipiv,      \
                         lapack_int* info);                                                                            \
  void scipy_##p##getri_(const lapack_int* n, T* a, const lapack_int* lda, const lapack_int* ipiv, T* work,            \
                         const lapack_int* lwork, lapack_int* info);                                                   \
  void scipy_##p##potrf_(const char* uplo, const lapack_int* n, T* a, const lapack_int* lda, lapack_int* info,         \
                         size_t uplo_len);                                                                             \
  void scipy_##p##trtri_(const char* uplo, const char* diag, const lapack_int* n, T* a, const lapack_int* lda,         \
                         lapack_int* info, size_t uplo_len, size_t diag_len);                                          \
  void scipy_##p##trsm_(const char* side, const char* uplo, const char* transa, const char* diag, const lapack_int* m, \
                        const lapack_int* n, const T* alpha, const T* a, const lapack_int* lda, T* b,                  \
                        const lapack_int* ldb, size_t side_len, size_t uplo_len, size_t transa_len, size_t diag_len);  \
  void scipy_##p##gemm_(const char* transa, const char* transb, const lapack_int* m, const lapack_int* n,              \
                        const lapack_int* k, const T* alpha, const T* a, const lapack_int* lda, const T* b,            \
                        const lapack_int* ldb, const T* beta, T* c, const lapack_int* ldc, size_t transa_len,          \
                        size_t transb_len);                                                                            \
  void scipy_##p##syrk_(const char* uplo, const char* trans, const lapack_int* n, const lapack_int* k, const T* alpha, \
                        const T* a, const lapack_int* lda, const T* beta, T* c, const lapack_int* ldc,                 \
                        size_t uplo_len, size_t trans_len);                                                            \
  void scipy_##p##laswp_(const lapack_int* n, T* a, const lapack_int* lda, const lapack_int* k1, const lapack_int* k2, \
                         const lapack_int* ipiv, const lapack_int* incx);
NUVEC_LAPACK_DECLARE(s, float)
NUVEC_LAPACK_DECLARE(d, double)
#undef NUVEC_LAPACK_DECLARE
}

namespace nuvec::cpu::lapack {

// The three factorisations nuvec's own blocked kernels (backend/cpu/factor.h) also provide, with
// their interface: row-major matrices (leading dimension in elements), worked on in place.
// LU with partial pivoting of the m x n matrix `a`: L (unit diagonal, below) and U in `a`,
// pivots[i] (0-based) the row swapped with row i; returns LAPACK's info (> 0: U(info-1, info-1) is 0).
int64_t lu_factor(Dtype d, char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots);
// op(T) X = B for triangular n x n T (the other triangle unread) and n x nrhs B; X replaces B.
void triangular_solve(Dtype d, const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit_diagonal,
                      char* b, int64_t nrhs, int64_t ldb);
// A = L L^T (or U^T U when `upper`) from A's lower (upper) triangle, into that triangle; the
// other is left as it was. Returns LAPACK's info (> 0: the leading minor of that order is not
// positive definite; the factorisation stops there, as LAPACK leaves it).
int64_t cholesky(Dtype d, char* a, int64_t n, int64_t lda, bool upper);

// LU with partial pivoting of a^T for the n x n row-major a, in place with no copy (LAPACK reads
// the row-major buffer as a^T): a^T = P L U, L and U packed column-major (read row-major, the
// buffer holds U^T on and below the diagonal and L^T above it); pivots as lu_factor's. Enough for
// solves (a = U^T L^T P^T) without the two transposes lu_factor costs.
int64_t lu_factor_transposed(Dtype d, char* a, int64_t n, int32_t* pivots);
// The inverse of the n x n row-major matrix `a` in place (contiguous, lda = n); returns LAPACK's
// info (> 0: singular).
int64_t inverse(Dtype d, char* a, int64_t n, int32_t* pivots);
// The inverse of a triangular matrix in place (the other triangle unread and left as it was).
int64_t triangular_inverse(Dtype d, char* a, int64_t n, bool upper);

}  // namespace nuvec::cpu::lapack
