// The CPU kernels of nuvec.linalg's LU / triangular / Cholesky primitives: each matrix of the
// batch is worked on in place in its row-major output buffer, one matrix per task of nuvec's pool,
// by nuvec's blocked factorisations (factor.h) up to the sizes where they measured faster, by
// LAPACK (lapack.h: OpenBLAS held at one thread, a large matrix cut into blocks on the pool) above.
// The choice depends on the shape alone, and neither depends on the thread count, so the bits
// depend on the matrix alone.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/blas_threads.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/factor.h"
#include "backend/cpu/lapack.h"
#include "backend/cpu/sort.h"
#include "core/errors.h"
#include "core/primitives/linalg.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

// The largest orders run by nuvec's blocked kernels (docs/linalg.md has the measurements: below
// these, LAPACK's call overhead dominates; above, its single-threaded kernels are faster than the
// blocked ones on two threads).
constexpr int64_t kBlockedLU = 128, kBlockedTriangular = 128, kBlockedCholesky = 32;

int64_t factor_lu(Dtype d, char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots) {
  return std::max(m, n) <= kBlockedLU ? lu_factor(d, a, m, n, lda, pivots) : lapack::lu_factor(d, a, m, n, lda, pivots);
}

void solve_triangle(Dtype d, const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit, char* b,
                    int64_t nrhs, int64_t ldb) {
  if (n <= kBlockedTriangular)
    triangular_solve(d, t, n, ldt, lower, transpose, unit, b, nrhs, ldb);
  else
    lapack::triangular_solve(d, t, n, ldt, lower, transpose, unit, b, nrhs, ldb);
}

// A matrix that is not positive definite is left as LAPACK leaves it (as MLX): the blocked kernel
// stops a step earlier, so that case runs again on LAPACK from a copy.
void factor_cholesky(Dtype d, char* a, int64_t n, bool upper) {
  if (n > kBlockedCholesky) {
    lapack::cholesky(d, a, n, n, upper);
    return;
  }
  std::vector<char> copy(a, a + n * n * int64_t(size_of(d)));
  if (cholesky(d, a, n, n, upper) != 0) {
    std::copy(copy.begin(), copy.end(), a);
    lapack::cholesky(d, a, n, n, upper);
  }
}

// Runs fn(i) for each of `count` matrices whose work is about `flops` each, on the pool.
template <class F> void for_each_matrix(int64_t count, int64_t flops, F fn) {
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(flops, 1));
  parallel_for(count, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

int64_t matrices(const Array& a) {
  int64_t c = 1;
  for (int d = 0; d + 2 < a.ndim(); ++d) c *= a.shape(d);
  return c;
}

// `in` copied into out's fresh row-contiguous buffer.
void copy_to_output(const Array& in, Array& out) {
  out.allocate_contiguous();
  copy_into(in, out);
}

// Zeroes the strictly upper (or lower) triangle of the n x n row-major matrix at `a`.
void zero_triangle(char* a, int64_t n, size_t item, bool upper) {
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = upper ? i + 1 : 0, e = upper ? n : i;
    std::fill(a + (i * n + b) * int64_t(item), a + (i * n + e) * int64_t(item), char(0));
  }
}

bool zero_on_diagonal(Dtype d, const char* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const char* p = a + (i * n + i) * int64_t(size_of(d));
    if (d == Dtype::float64 ? *reinterpret_cast<const double*>(p) == 0 : *reinterpret_cast<const float*>(p) == 0)
      return true;
  }
  return false;
}

// Applies the row swaps of `pivots` (forwards, or backwards to undo them) to the rows of b.
void swap_rows(char* b, int64_t rows, size_t row_bytes, const int32_t* pivots, bool backwards) {
  for (int64_t k = 0; k < rows; ++k) {
    int64_t i = backwards ? rows - 1 - k : k;
    if (pivots[i] != i)
      std::swap_ranges(b + i * int64_t(row_bytes), b + (i + 1) * int64_t(row_bytes),
                       b + pivots[i] * int64_t(row_bytes));
  }
}

// x = a^-1 b (a^-T b when `transpose`) in place of the n x k b, from a's factors P a = L U.
void solve_factored(Dtype d, const char* lu, int64_t n, const int32_t* piv, bool transpose, char* b, int64_t k) {
  size_t row = size_t(k) * size_of(d);
  if (!transpose) {
    swap_rows(b, n, row, piv, false);
    solve_triangle(d, lu, n, n, true, false, true, b, k, k);
    solve_triangle(d, lu, n, n, false, false, false, b, k, k);
  } else {
    solve_triangle(d, lu, n, n, false, true, false, b, k, k);
    solve_triangle(d, lu, n, n, true, true, true, b, k, k);
    swap_rows(b, n, row, piv, true);
  }
}

// Orders up to which an inverse is computed by the plain loops below (no kernel calls at all).
constexpr int64_t kTinyInverse = 8;

// x = a^-1 for n <= kTinyInverse: LU with partial pivoting (LAPACK's choice of pivot), then the
// solves against the identity. False when a pivot is zero (singular).
template <class T> bool tiny_inverse(const T* a, int64_t n, T* x) {
  T lu[kTinyInverse][kTinyInverse];
  int64_t piv[kTinyInverse];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) lu[i][j] = a[i * n + j];
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(lu[i][k]) > std::abs(lu[p][k])) p = i;
    if (lu[p][k] == T(0)) return false;
    piv[k] = p;
    for (int64_t j = 0; j < n; ++j) std::swap(lu[k][j], lu[p][j]);
    for (int64_t i = k + 1; i < n; ++i) {
      lu[i][k] /= lu[k][k];
      for (int64_t j = k + 1; j < n; ++j) lu[i][j] -= lu[i][k] * lu[k][j];
    }
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) x[i * n + j] = T(i == j);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j) std::swap(x[k * n + j], x[piv[k] * n + j]);
  for (int64_t i = 0; i < n; ++i)  // L (unit diagonal)
    for (int64_t k = 0; k < i; ++k)
      for (int64_t j = 0; j < n; ++j) x[i * n + j] -= lu[i][k] * x[k * n + j];
  for (int64_t i = n - 1; i >= 0; --i) {  // U
    for (int64_t k = i + 1; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) x[i * n + j] -= lu[i][k] * x[k * n + j];
    for (int64_t j = 0; j < n; ++j) x[i * n + j] /= lu[i][i];
  }
  return true;
}

// The n x n identity at a.
void set_identity(Dtype d, char* a, int64_t n) {
  std::fill(a, a + n * n * int64_t(size_of(d)), char(0));
  for (int64_t i = 0; i < n; ++i) {
    char* p = a + (i * n + i) * int64_t(size_of(d));
    if (d == Dtype::float64)
      *reinterpret_cast<double*>(p) = 1;
    else
      *reinterpret_cast<float*>(p) = 1;
  }
}

void raise_if(const std::atomic<bool>& failed, const char* what) {
  if (failed.load()) throw KernelError(EvalErrorKind::other, what);
}

void eval_lu(const LUFactor&, const std::vector<Array>& in, std::vector<Array>& out) {
  blas_threads::Threads one_blas_thread(1);
  copy_to_output(in[0], out[0]);
  out[1].allocate_contiguous();
  out[2].allocate_contiguous();
  Dtype d = out[0].dtype();
  int64_t m = out[0].shape(-2), n = out[0].shape(-1), k = std::min(m, n);
  for_each_matrix(matrices(out[0]), m * n * k, [&](int64_t i) {
    std::vector<int32_t> piv(static_cast<size_t>(k));
    factor_lu(d, out[0].data_bytes() + i * m * n * int64_t(size_of(d)), m, n, n, piv.data());
    // rows: a[rows] = L U; perm = its inverse, so a = (L U)[perm].
    std::vector<uint32_t> rows(static_cast<size_t>(m));
    std::iota(rows.begin(), rows.end(), 0u);
    uint32_t* pv = out[1].data<uint32_t>() + i * k;
    for (int64_t j = 0; j < k; ++j) {
      pv[j] = uint32_t(piv[size_t(j)]);
      std::swap(rows[size_t(j)], rows[size_t(piv[size_t(j)])]);
    }
    uint32_t* perm = out[2].data<uint32_t>() + i * m;
    for (int64_t j = 0; j < m; ++j) perm[rows[size_t(j)]] = uint32_t(j);
  });
}

void eval_solve(const Solve& p, const std::vector<Array>& in, std::vector<Array>& out) {
  blas_threads::Threads one_blas_thread(1);
  copy_to_output(in[1], out[0]);
  Array a = row_contiguous(in[0]);
  Dtype d = out[0].dtype();
  size_t item = size_of(d);
  int64_t n = a.shape(-1), k = out[0].shape(-1);
  std::atomic<bool> failed{false};
  for_each_matrix(matrices(a), n * n * (n + k), [&](int64_t i) {
    std::vector<char> lu(a.data_bytes() + i * n * n * int64_t(item), a.data_bytes() + (i + 1) * n * n * int64_t(item));
    std::vector<int32_t> piv(static_cast<size_t>(n));
    char* b = out[0].data_bytes() + i * n * k * int64_t(item);
    if (n <= kBlockedLU) {
      if (factor_lu(d, lu.data(), n, n, n, piv.data()) != 0) return failed.store(true);
      solve_factored(d, lu.data(), n, piv.data(), p.transpose(), b, k);
      return;
    }
    if (lapack::lu_factor_transposed(d, lu.data(), n, piv.data()) != 0) return failed.store(true);
    // a^T = P L U (the swaps P), held as R = the buffer read row-major: U^T = tril(R), L^T =
    // triu(R) with a unit diagonal. a x = b: x = P L^-T U^-T b; a^T x = b: x = U^-1 L^-1 P^T b.
    if (!p.transpose()) {
      solve_triangle(d, lu.data(), n, n, true, false, false, b, k, k);
      solve_triangle(d, lu.data(), n, n, false, false, true, b, k, k);
      swap_rows(b, n, size_t(k) * item, piv.data(), true);
    } else {
      swap_rows(b, n, size_t(k) * item, piv.data(), false);
      solve_triangle(d, lu.data(), n, n, false, true, true, b, k, k);
      solve_triangle(d, lu.data(), n, n, true, true, false, b, k, k);
    }
  });
  raise_if(failed, "the matrix is singular");
}

void eval_triangular_solve(const TriangularSolve& p, const std::vector<Array>& in, std::vector<Array>& out) {
  blas_threads::Threads one_blas_thread(1);
  copy_to_output(in[1], out[0]);
  Array t = row_contiguous(in[0]);
  Dtype d = out[0].dtype();
  size_t item = size_of(d);
  int64_t n = t.shape(-1), k = out[0].shape(-1);
  std::atomic<bool> failed{false};
  for_each_matrix(matrices(t), n * n * k, [&](int64_t i) {
    const char* ti = t.data_bytes() + i * n * n * int64_t(item);
    if (!p.unit() && zero_on_diagonal(d, ti, n)) return failed.store(true);
    solve_triangle(d, ti, n, n, !p.upper(), p.transpose(), p.unit(), out[0].data_bytes() + i * n * k * int64_t(item), k,
                   k);
  });
  raise_if(failed, "the triangular matrix is singular");
}

void eval_cholesky(const Cholesky& p, const std::vector<Array>& in, std::vector<Array>& out) {
  blas_threads::Threads one_blas_thread(1);
  copy_to_output(in[0], out[0]);
  Dtype d = out[0].dtype();
  int64_t n = out[0].shape(-1);
  for_each_matrix(matrices(out[0]), n * n * n, [&](int64_t i) {
    char* a = out[0].data_bytes() + i * n * n * int64_t(size_of(d));
    factor_cholesky(d, a, n, p.upper());
    zero_triangle(a, n, size_of(d), !p.upper());
  });
}

void eval_inverse(const Inverse& p, const std::vector<Array>& in, std::vector<Array>& out) {
  blas_threads::Threads one_blas_thread(1);
  Dtype d = out[0].dtype();
  size_t item = size_of(d);
  int64_t n = out[0].shape(-1);
  // Small matrices: a^-1 = the solve of a x = I on the blocked kernels (no LAPACK call overhead).
  bool small = n <= std::min(kBlockedLU, kBlockedTriangular);
  Array a = small ? row_contiguous(in[0]) : in[0];
  if (small)
    out[0].allocate_contiguous();
  else
    copy_to_output(in[0], out[0]);
  std::atomic<bool> failed{false};
  for_each_matrix(matrices(out[0]), n * n * n, [&](int64_t i) {
    char* x = out[0].data_bytes() + i * n * n * int64_t(item);
    if (small) {
      const char* ai = a.data_bytes() + i * n * n * int64_t(item);
      if (!p.triangular() && n <= kTinyInverse) {
        bool ok = d == Dtype::float64
                      ? tiny_inverse(reinterpret_cast<const double*>(ai), n, reinterpret_cast<double*>(x))
                      : tiny_inverse(reinterpret_cast<const float*>(ai), n, reinterpret_cast<float*>(x));
        if (!ok) failed.store(true);
        return;
      }
      set_identity(d, x, n);
      if (p.triangular()) {
        if (zero_on_diagonal(d, ai, n)) return failed.store(true);
        solve_triangle(d, ai, n, n, !p.upper(), false, false, x, n, n);
        return zero_triangle(x, n, item, !p.upper());  // the other triangle's -0s, as zeros
      }
      std::vector<char> lu(ai, ai + n * n * int64_t(item));
      std::vector<int32_t> piv(static_cast<size_t>(n));
      if (factor_lu(d, lu.data(), n, n, n, piv.data()) != 0) return failed.store(true);
      return solve_factored(d, lu.data(), n, piv.data(), false, x, n);
    }
    if (p.triangular()) {
      if (lapack::triangular_inverse(d, x, n, p.upper()) != 0) return failed.store(true);
      zero_triangle(x, n, item, !p.upper());
    } else {
      std::vector<int32_t> piv(static_cast<size_t>(n));
      if (lapack::inverse(d, x, n, piv.data()) != 0) failed.store(true);
    }
  });
  raise_if(failed, "the matrix is singular");
}

}  // namespace

void register_linalg_kernels(Backend& b) {
  b.add<LUFactor, eval_lu>();
  b.add<Solve, eval_solve>();
  b.add<TriangularSolve, eval_triangular_solve>();
  b.add<Cholesky, eval_cholesky>();
  b.add<Inverse, eval_inverse>();
}

}  // namespace nuvec::cpu
