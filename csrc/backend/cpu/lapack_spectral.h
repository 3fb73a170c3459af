// The LAPACK routines of the spectral family (QR, SVD, symmetric and general eigenproblems), from
// the scipy-openblas32 library that nuvec links (its symbols carry a scipy_ prefix; integers are
// 32-bit). Fortran character arguments take hidden trailing lengths. `Lapack<T>` gives one name
// per routine for float, double and complex<float>; the thread policy lives in blas_threads.h.
#pragma once
#include <complex>
#include <cstddef>

extern "C" {
using nuvec_c64 = std::complex<float>;
#define NUVEC_GEQRF(p, T) void scipy_##p##geqrf_(int*, int*, T*, int*, T*, T*, int*, int*);
#define NUVEC_ORGQR(p, T) void scipy_##p##orgqr_(int*, int*, int*, T*, int*, T*, T*, int*, int*);
#define NUVEC_GESDD(p, T) \
  void scipy_##p##gesdd_(const char*, int*, int*, T*, int*, T*, T*, int*, T*, int*, T*, int*, int*, int*, size_t);
#define NUVEC_SYEVD(p, T) \
  void scipy_##p##syevd_(const char*, const char*, int*, T*, int*, T*, T*, int*, int*, int*, int*, size_t, size_t);
#define NUVEC_GEEV(p, T)                                                                                              \
  void scipy_##p##geev_(const char*, const char*, int*, T*, int*, T*, T*, T*, int*, T*, int*, T*, int*, int*, size_t, \
                        size_t);
NUVEC_GEQRF(s, float)
NUVEC_GEQRF(d, double)
NUVEC_ORGQR(s, float)
NUVEC_ORGQR(d, double)
NUVEC_GESDD(s, float)
NUVEC_GESDD(d, double)
NUVEC_SYEVD(s, float)
NUVEC_SYEVD(d, double)
NUVEC_GEEV(s, float)
NUVEC_GEEV(d, double)
#undef NUVEC_GEQRF
#undef NUVEC_ORGQR
#undef NUVEC_GESDD
#undef NUVEC_SYEVD
#undef NUVEC_GEEV
void scipy_cgesdd_(const char*, int*, int*, nuvec_c64*, int*, float*, nuvec_c64*, int*, nuvec_c64*, int*, nuvec_c64*,
                   int*, float*, int*, int*, size_t);
void scipy_cheevd_(const char*, const char*, int*, nuvec_c64*, int*, float*, nuvec_c64*, int*, float*, int*, int*, int*,
                   int*, size_t, size_t);
void scipy_cgeev_(const char*, const char*, int*, nuvec_c64*, int*, nuvec_c64*, nuvec_c64*, int*, nuvec_c64*, int*,
                  nuvec_c64*, int*, float*, int*, size_t, size_t);
}

namespace nuvec::cpu {

template <class T> struct Lapack;

// The real routines of one precision: p is LAPACK's letter (s, d).
#define NUVEC_REAL_LAPACK(p, T)                                                                                      \
  template <> struct Lapack<T> {                                                                                     \
    static void geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork, int& info) {                          \
      scipy_##p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);                                                  \
    }                                                                                                                \
    static void orgqr(int m, int n, int k, T* a, int lda, T* tau, T* work, int lwork, int& info) {                   \
      scipy_##p##orgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);                                              \
    }                                                                                                                \
    static void gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, T* work,         \
                      int lwork, T*, int* iwork, int& info) {                                                        \
      scipy_##p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);               \
    }                                                                                                                \
    static void syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork, T*, int, int* iwork,     \
                      int liwork, int& info) {                                                                       \
      scipy_##p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);                    \
    }                                                                                                                \
    static void geev_left(int n, T* a, T* wr, T* wi, T* vl, T* work, int lwork, int& info) {                         \
      int one = 1, ldvl = vl ? n : 1;                                                                                \
      scipy_##p##geev_(vl ? "V" : "N", "N", &n, a, &n, wr, wi, vl, &ldvl, nullptr, &one, work, &lwork, &info, 1, 1); \
    }                                                                                                                \
  };
NUVEC_REAL_LAPACK(s, float)
NUVEC_REAL_LAPACK(d, double)
#undef NUVEC_REAL_LAPACK

template <> struct Lapack<std::complex<float>> {
  using T = std::complex<float>;
  static void gesdd(char jobz, int m, int n, T* a, int lda, float* s, T* u, int ldu, T* vt, int ldvt, T* work,
                    int lwork, float* rwork, int* iwork, int& info) {
    scipy_cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info, 1);
  }
  static void syevd(char jobz, char uplo, int n, T* a, int lda, float* w, T* work, int lwork, float* rwork, int lrwork,
                    int* iwork, int liwork, int& info) {
    scipy_cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info, 1, 1);
  }
  static void geev_left(int n, T* a, T* w, float* rwork, T* vl, T* work, int lwork, int& info) {
    int one = 1, ldvl = vl ? n : 1;
    scipy_cgeev_(vl ? "V" : "N", "N", &n, a, &n, w, vl, &ldvl, nullptr, &one, work, &lwork, rwork, &info, 1, 1);
  }
};

}  // namespace nuvec::cpu
