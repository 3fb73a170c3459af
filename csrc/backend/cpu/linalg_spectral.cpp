// The CPU kernel of the decompositions (core/primitives/linalg_spectral.h): LAPACK per matrix.
// A row-major matrix is, to LAPACK, its transpose in column-major order: the SVD and the
// eigen-solvers work on that transpose (and swap or transpose their outputs back); QR copies
// into a column-major buffer. Many matrices split over nuvec's pool, each piece with its own
// work buffers; every matrix is factorised alone, so no result depends on the split. OpenBLAS
// runs at a thread count fixed by the routine and the order (blas_threads_for; two-thread jobs on
// nuvec's helper threads, blas_threads.h), so no result depends on NUVEC_NUM_THREADS either.
#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/blas_threads.h"
#include "backend/cpu/lapack_spectral.h"
#include "backend/cpu/sort.h"
#include "core/errors.h"
#include "core/primitives/linalg_spectral.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

using c64 = std::complex<float>;
template <class T> struct Real { using type = T; };
template <> struct Real<c64> { using type = float; };
template <class T> using real_t = typename Real<T>::type;
template <class T> constexpr bool is_cplx = std::is_same_v<T, c64>;

template <class T> T conj_of(T x) {
  if constexpr (is_cplx<T>)
    return std::conj(x);
  else
    return x;
}

void check(int info, const char* routine) {
  if (info != 0)
    throw KernelError(EvalErrorKind::other, std::string(routine) + " failed with error code " + std::to_string(info));
}

// A work-size query's answer (LAPACK returns it in the first work element).
template <class T> int work_size(T w) {
  if constexpr (is_cplx<T>)
    return std::max(1, int(w.real()));
  else
    return std::max(1, int(w));
}

template <class T> void identity(T* out, int64_t n) {
  std::fill(out, out + n * n, T(0));
  for (int64_t i = 0; i < n; ++i) out[i * n + i] = T(1);
}

// QR of `count` M x N matrices (real only: MLX's qr takes float32 and float64).
template <class T> void run_qr(const T* a, T* q, T* r, int64_t count, int m, int n) {
  int k = std::min(m, n), lda = std::max(1, m);
  if (k == 0) return;  // Q (M, 0) and R (0, N) hold nothing
  std::vector<T> buf(size_t(m) * n);
  std::vector<T> tau(static_cast<size_t>(k));
  T w1, w2;
  int info = 0;
  Lapack<T>::geqrf(m, n, nullptr, lda, nullptr, &w1, -1, info);
  Lapack<T>::orgqr(m, k, k, nullptr, lda, nullptr, &w2, -1, info);
  std::vector<T> work(size_t(std::max(work_size(w1), work_size(w2))));
  int lwork = int(work.size());
  for (int64_t b = 0; b < count; ++b, a += int64_t(m) * n, q += int64_t(m) * k, r += int64_t(k) * n) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) buf[size_t(j) * m + i] = a[int64_t(i) * n + j];
    Lapack<T>::geqrf(m, n, buf.data(), lda, tau.data(), work.data(), lwork, info);
    check(info, "geqrf");
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < n; ++j) r[int64_t(i) * n + j] = j >= i ? buf[size_t(j) * m + i] : T(0);
    Lapack<T>::orgqr(m, k, k, buf.data(), lda, tau.data(), work.data(), lwork, info);
    check(info, "orgqr");
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) q[int64_t(i) * k + j] = buf[size_t(j) * m + i];
  }
}

// SVD of `count` M x N matrices. LAPACK factors A^T = U' S V'^T (A^T is what it sees): then
// A = V' S U'^T, so its U' written column-major is our Vt row-major, and its V'^T our U.
template <class T> void run_svd(const T* a, T* u, real_t<T>* s, T* vt, int64_t count, int m, int n) {
  using R = real_t<T>;
  int k = std::min(m, n), mx = std::max(m, n);
  bool vectors = u != nullptr;
  if (k == 0) {
    for (int64_t b = 0; vectors && b < count; ++b) identity(u + b * m * m, m), identity(vt + b * n * n, n);
    return;
  }
  char jobz = vectors ? 'A' : 'N';
  int ldu = vectors ? n : 1, ldvt = vectors ? m : 1;
  std::vector<T> buf(size_t(m) * n);
  std::vector<int> iwork(size_t(8) * k);
  std::vector<R> rwork(is_cplx<T> ? size_t(std::max({7 * k, 5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k})) : 0);
  T wq;
  int info = 0;
  Lapack<T>::gesdd(jobz, n, m, nullptr, n, nullptr, nullptr, ldu, nullptr, ldvt, &wq, -1, rwork.data(), iwork.data(),
                   info);
  std::vector<T> work(size_t(work_size(wq)));
  T *uo = nullptr, *vo = nullptr;
  for (int64_t b = 0; b < count; ++b) {
    std::copy(a + b * m * n, a + (b + 1) * m * n, buf.begin());
    if (vectors) uo = u + b * m * m, vo = vt + b * n * n;
    Lapack<T>::gesdd(jobz, n, m, buf.data(), n, s + b * k, vo, ldu, uo, ldvt, work.data(), int(work.size()),
                     rwork.data(), iwork.data(), info);
    check(info, "gesdd");
  }
}

// Symmetric (Hermitian) eigen-decomposition. LAPACK sees A^T (for a Hermitian A, conj(A)), so the
// triangle named is the other one, and its eigenvectors are the conjugates of A's.
template <class T> void run_eigh(const T* a, real_t<T>* w, T* v, int64_t count, int n, bool upper) {
  using R = real_t<T>;
  if (n == 0) return;
  char jobz = v ? 'V' : 'N', uplo = upper ? 'L' : 'U';
  std::vector<T> buf(size_t(n) * n);
  T wq;
  R rq = 0;
  int iq = 0, info = 0;
  Lapack<T>::syevd(jobz, uplo, n, nullptr, n, nullptr, &wq, -1, &rq, -1, &iq, -1, info);
  std::vector<T> work(size_t(work_size(wq)));
  std::vector<R> rwork(is_cplx<T> ? size_t(std::max(1, int(rq))) : 0);
  std::vector<int> iwork(size_t(std::max(1, iq)));
  for (int64_t b = 0; b < count; ++b) {
    std::copy(a + b * n * n, a + (b + 1) * n * n, buf.begin());
    Lapack<T>::syevd(jobz, uplo, n, buf.data(), n, w + b * n, work.data(), int(work.size()), rwork.data(),
                     int(rwork.size()), iwork.data(), int(iwork.size()), info);
    check(info, "syevd");
    if (!v) continue;
    // Column i of V is LAPACK's column i (row i of buf): a transpose, in tiles that stay in cache
    // (a column-by-column one misses on every store of a large matrix).
    T* vb = v + b * n * n;
    constexpr int kTile = 32;
    for (int i0 = 0; i0 < n; i0 += kTile)
      for (int j0 = 0; j0 < n; j0 += kTile)
        for (int i = i0; i < std::min(n, i0 + kTile); ++i)
          for (int j = j0; j < std::min(n, j0 + kTile); ++j) vb[int64_t(j) * n + i] = conj_of(buf[size_t(i) * n + j]);
  }
}

// General eigen-decomposition, as MLX computes it: LAPACK's left eigenvectors u of A^T (what it
// sees), whose conjugates are A's right eigenvectors, in LAPACK's eigenvalue order. A real
// matrix's complex pair (j, j+1) has u_j = VL(:,j) + i VL(:,j+1) and u_{j+1} its conjugate.
template <class T> void run_eig(const T* a, c64* w, c64* v, int64_t count, int n) {
  using R = real_t<T>;
  if (n == 0) return;
  std::vector<T> buf(size_t(n) * n);
  std::vector<T> vl(v ? size_t(n) * n : 0);
  std::vector<T> vals(is_cplx<T> ? size_t(n) : size_t(2) * n);
  std::vector<R> rwork(is_cplx<T> ? size_t(2) * n : 0);
  T wq;
  int info = 0;
  auto call = [&](T* m, T* vecs, T* work, int lwork) {
    if constexpr (is_cplx<T>)
      Lapack<T>::geev_left(n, m, vals.data(), rwork.data(), vecs, work, lwork, info);
    else
      Lapack<T>::geev_left(n, m, vals.data(), vals.data() + n, vecs, work, lwork, info);
  };
  call(nullptr, v ? vl.data() : nullptr, &wq, -1);
  std::vector<T> work(size_t(work_size(wq)));
  for (int64_t b = 0; b < count; ++b) {
    std::copy(a + b * n * n, a + (b + 1) * n * n, buf.begin());
    call(buf.data(), v ? vl.data() : nullptr, work.data(), int(work.size()));
    check(info, "geev");
    c64* wb = w + b * n;
    for (int i = 0; i < n; ++i) {
      if constexpr (is_cplx<T>)
        wb[i] = vals[size_t(i)];
      else
        wb[i] = c64(float(vals[size_t(i)]), float(vals[size_t(n + i)]));
    }
    if (!v) continue;
    c64* vb = v + b * n * n;
    auto col = [&](int i, int j) { return vl[size_t(i) * n + j]; };
    for (int i = 0; i < n; ++i) {
      if constexpr (is_cplx<T>) {
        for (int j = 0; j < n; ++j) vb[int64_t(j) * n + i] = std::conj(col(i, j));
      } else if (wb[i].imag() != 0 && i + 1 < n) {
        for (int j = 0; j < n; ++j) {
          float re = float(col(i, j)), im = float(col(i + 1, j));
          vb[int64_t(j) * n + i] = c64(re, -im);
          vb[int64_t(j) * n + i + 1] = c64(re, im);
        }
        ++i;
      } else {
        for (int j = 0; j < n; ++j) vb[int64_t(j) * n + i] = c64(float(col(i, j)), 0.0f);
      }
    }
  }
}

// OpenBLAS's thread count for a decomposition of order n: 2 for syevd (eigh, eigvalsh) and gesdd
// (svd) from order blas_threads::kThreadedFrom, where their one-thread times missed or sat at the
// edge of 1.2x NumPy's two-thread ones (docs/linalg.md, "Threads"); 1 for the others, whose
// one-thread times beat NumPy's two-thread ones on a quiet machine, and every two-thread run loses
// badly on a busy one.
int blas_threads_for(Decomposition kind, int64_t n) {
  bool threaded = kind == Decomposition::eigh || kind == Decomposition::eigvalsh || kind == Decomposition::svd ||
                  kind == Decomposition::svd_values;
  return threaded && n >= blas_threads::kThreadedFrom ? blas_threads::kThreads : 1;
}

template <class T> void run(const Decompose& p, const Array& x, std::vector<Array>& out) {
  int m = int(x.shape(-2)), n = int(x.shape(-1)), k = std::min(m, n);
  int64_t count = 1;
  for (int d = 0; d < x.ndim() - 2; ++d) count *= x.shape(d);
  const T* a = x.data<T>();
  using R = real_t<T>;
  // Pieces of at least ~2^15 multiply-adds, so that a batch of small matrices fans out.
  int64_t flops = std::max<int64_t>(1, int64_t(m) * n * std::max(k, 1));
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / flops);
  Decomposition kind = p.kind();
  blas_threads::Threads blas(blas_threads_for(kind, std::max(m, n)));
  parallel_for(count, grain, [&](int64_t b, int64_t e) {
    int64_t c = e - b;
    switch (kind) {
      case Decomposition::qr:
        if constexpr (!is_cplx<T>)
          run_qr<T>(a + b * m * n, out[0].data<T>() + b * m * k, out[1].data<T>() + b * k * n, c, m, n);
        break;
      case Decomposition::svd:
        run_svd<T>(a + b * m * n, out[0].data<T>() + b * m * m, out[1].data<R>() + b * k, out[2].data<T>() + b * n * n,
                   c, m, n);
        break;
      case Decomposition::svd_values:
        run_svd<T>(a + b * m * n, nullptr, out[0].data<R>() + b * k, nullptr, c, m, n);
        break;
      case Decomposition::eigh:
      case Decomposition::eigvalsh: {
        T* v = kind == Decomposition::eigh ? out[1].data<T>() + b * n * n : nullptr;
        run_eigh<T>(a + b * n * n, out[0].data<R>() + b * n, v, c, n, p.upper());
        break;
      }
      case Decomposition::eig:
      case Decomposition::eigvals: {
        c64* v = kind == Decomposition::eig ? out[1].data<c64>() + b * n * n : nullptr;
        run_eig<T>(a + b * n * n, out[0].data<c64>() + b * n, v, c, n);
        break;
      }
    }
  });
}

void eval_decompose(const Decompose& p, const std::vector<Array>& in, std::vector<Array>& out) {
  for (Array& o : out) o.allocate_contiguous();
  Array x = row_contiguous(in[0]);
  switch (x.dtype()) {
    case Dtype::float32: run<float>(p, x, out); break;
    case Dtype::float64: run<double>(p, x, out); break;
    case Dtype::complex64: run<c64>(p, x, out); break;
    default: throw KernelError(EvalErrorKind::other, "decompositions take float32, float64 or complex64");
  }
}

}  // namespace

void register_linalg_spectral_kernels(Backend& b) { b.add<Decompose, eval_decompose>(); }

}  // namespace nuvec::cpu
