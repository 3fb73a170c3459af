// nuvec's own factorisations of dense matrices, blocked on matmul's product (cpu::gemm, matmul.h):
// LU with partial pivoting, triangular solves with many right-hand sides, Cholesky. Matrices are
// row-major (rows `ld` elements apart, columns contiguous), float32 or float64, and are
// factorised / solved in place. Each is recursive: most of the arithmetic runs in a few large
// products, the rest in small per-ISA kernels (backend/cpu/simd/factor.cpp).
//
// Determinism: every split and block size depends on the shape alone, products give each element
// one fixed sequence whatever the thread count, and the small kernels work on columns that do not
// interact; so the bits depend on the shapes (and the instruction set) only, never on threads.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cpu {

// P A = L U in place for the m x n matrix A: unit-lower L below the diagonal, U on and above it.
// pivots[i] (0-based, min(m, n) entries) is the row swapped with row i at step i (LAPACK's ipiv
// minus one); the pivot is the first row of largest magnitude (LAPACK's rule). Returns LAPACK's
// info: 0, or 1 + the first i with U[i, i] == 0 (the factorisation is completed all the same).
int64_t lu_factor(Dtype d, char* a, int64_t m, int64_t n, int64_t lda, int32_t* pivots);

// Solves op(T) X = B for the n x n triangular T (its `lower` or upper triangle is read; op(T) is T
// or, with `transpose`, T^T; a unit diagonal is not read): X replaces B (n x nrhs).
void triangular_solve(Dtype d, const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit_diagonal,
                      char* b, int64_t nrhs, int64_t ldb);

// A = L L^T (lower) or U^T U (upper) in place in that triangle of the n x n A; the other triangle
// is not touched. Returns LAPACK's info: 0, or the order of the first leading minor that is not
// positive definite (the factorisation stops there).
int64_t cholesky(Dtype d, char* a, int64_t n, int64_t lda, bool upper);

// A triangular block's solve on columns of B, built per instruction set: X = op(T)^-1 B for the
// nb x nb block whose element (i, k) of op(T) is t[i * rs + k * cs], forward (op(T) lower) or
// backward; B holds nb rows of `cols` values, ldb apart. Every column is solved by its own fixed
// sequence: x_i = (b_i - sum_k t_ik x_k, k in solve order) / t_ii.
template <class T> using TriangleKernel = void (*)(const T* t, int64_t rs, int64_t cs, int64_t nb, bool forward,
                                                   bool unit, T* b, int64_t ldb, int64_t cols);
struct FactorKernels {
  TriangleKernel<float> solve_f32 = nullptr;
  TriangleKernel<double> solve_f64 = nullptr;
};
const FactorKernels& factor_kernels();

// The largest triangular block the kernel takes.
constexpr int64_t kTriangleLeaf = 64;

// What the factorisations' files share (factor_solve.cpp).
namespace factor_detail {
// A triangle seen through op: element (i, k) of op(T) at p[i * rs + k * cs]; `forward` when op(T)
// is lower (solved first row first).
template <class T> struct TriangleView {
  const T* p;
  int64_t rs, cs;
  bool forward, unit;
};
// B = op(T)^-1 B in place for the n x n op(T) and B of n rows (ldb apart) by nrhs columns.
template <class T> void solve(const TriangleView<T>& t, int64_t n, T* b, int64_t ldb, int64_t nrhs);
}  // namespace factor_detail

#define NUVEC_DECLARE_FACTOR(ns)      \
  namespace ns {                      \
  void fill_factor(FactorKernels& t); \
  }
NUVEC_DECLARE_FACTOR(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_FACTOR(avx2)
NUVEC_DECLARE_FACTOR(avx512)
#endif
#undef NUVEC_DECLARE_FACTOR

}  // namespace nuvec::cpu
