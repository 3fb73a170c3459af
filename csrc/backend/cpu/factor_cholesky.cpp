// Cholesky (factor.h), recursive (LAPACK's potrf2): factor the leading half, solve for the block
// below it (factor_solve.cpp), update the trailing lower triangle by matmul products, factor it.
// The upper form U^T U is the lower one on the transposed view of the matrix (U = L^T), so one
// code reads the triangle through strides: element (i, j) of L at a[i * rs + j * cs].
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/factor.h"
#include "backend/cpu/items.h"
#include "backend/cpu/matmul.h"
#include "core/errors.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

// Diagonal blocks factorised unblocked, and diagonal blocks of the trailing update computed whole.
constexpr int64_t kLeaf = 64;
constexpr int64_t kUpdateLeaf = 128;

template <class T> struct Cholesky {
  T* a;
  int64_t rs, cs;
  Dtype d = sizeof(T) == 4 ? Dtype::float32 : Dtype::float64;

  T* at(int64_t i, int64_t j) const { return a + i * rs + j * cs; }

  // C (m x n at (i0, j0) of the view) += A B, A m x k and B k x n: a product into C's rows, or
  // into its transpose (C^T += B^T A^T) when the view is transposed.
  void multiply_add(int64_t i0, int64_t j0, int64_t m, int64_t n, int64_t k, GemmOperand x, GemmOperand y) const {
    char* c = reinterpret_cast<char*>(at(i0, j0));
    if (cs == 1) return gemm(d, x, y, m, n, k, c, rs, true);
    gemm(d, {y.data, y.col_stride, y.row_stride}, {x.data, x.col_stride, x.row_stride}, n, m, k, c, cs, true);
  }

  // The view's block of `rows` x `cols` at `v` and its transpose `w` (cols x rows, ldw apart):
  // w = v^T, or v = w^T when `back`. The view's rows are contiguous (cs == 1: a transposing copy
  // through registers, matmul's packing kernel) or its columns are (rs == 1: row copies).
  void transposed_copy(T* v, T* w, int64_t rows, int64_t cols, int64_t ldw, bool back) const {
    if (rs == 1) {
      for (int64_t j = 0; j < cols; ++j)
        std::copy_n(back ? w + j * ldw : v + j * cs, rows, back ? v + j * cs : w + j * ldw);
      return;
    }
    const MatmulKernels& g = matmul_kernels();
    PackTransposeKernel tr = sizeof(T) == 4 ? g.transpose32 : g.transpose64;
    int64_t item = int64_t(sizeof(T));
    if (back)
      tr(reinterpret_cast<const char*>(w), ldw * item, cols, rows, v, rs);
    else
      tr(reinterpret_cast<const char*>(v), rs * item, rows, cols, w, ldw);
  }

  // The unblocked factorisation of the nb x nb block at (r0, r0), right-looking on a column-major
  // copy (the scaling and rank-1 updates run along contiguous columns; element (i, j) still
  // subtracts l_i0 l_j0, l_i1 l_j1, ... in order). Returns LAPACK's info for the block.
  int64_t factor_leaf(int64_t r0, int64_t nb) {
    thread_local std::vector<T> buf;
    buf.resize(size_t(nb * nb));
    T* c = buf.data();  // column j at c + j * nb, rows j .. nb - 1
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j <= i; ++j) c[j * nb + i] = *at(r0 + i, r0 + j);
    int64_t info = 0;
    for (int64_t j = 0; j < nb; ++j) {
      T* cj = c + j * nb;
      T s = cj[j];
      if (!(s > T(0))) {  // NaN too; the value is left on the diagonal, as LAPACK's potf2 does
        info = j + 1;
        *at(r0 + j, r0 + j) = s;
        break;
      }
      T djj = std::sqrt(s);
      cj[j] = djj;
      for (int64_t i = j + 1; i < nb; ++i) cj[i] /= djj;
      for (int64_t k = j + 1; k < nb; ++k) {
        T* ck = c + k * nb;
        T u = cj[k];
        for (int64_t i = k; i < nb; ++i) ck[i] -= cj[i] * u;
      }
    }
    int64_t done = info ? info - 1 : nb;  // columns finished
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j <= i && j < done; ++j) *at(r0 + i, r0 + j) = c[j * nb + i];
    return info;
  }

  // The lower triangle of the s x s block at (c0, c0) += A B (A: s x k, B: k x s): the blocks
  // below the diagonal by products (recursively halved), the diagonal blocks of at most
  // kUpdateLeaf whole with the strict upper part kept (saved and restored), in parallel.
  void update_lower(int64_t c0, int64_t s, int64_t k, GemmOperand x, GemmOperand y) {
    std::vector<int64_t> leaves;  // first row of each diagonal block, in order
    off_diagonal(c0, s, k, x, y, 0, leaves);
    leaves.push_back(s);
    int64_t blocks = int64_t(leaves.size()) - 1;
    size_t item = size_of(d);
    auto diagonal = [&](int64_t b0, int64_t b1) {
      std::vector<T> upper;
      for (int64_t b = b0; b < b1; ++b) {
        int64_t r = leaves[size_t(b)], nb = leaves[size_t(b) + 1] - r;
        upper.clear();
        for (int64_t i = 0; i < nb; ++i)
          for (int64_t j = i + 1; j < nb; ++j) upper.push_back(*at(c0 + r + i, c0 + r + j));
        GemmOperand xs{x.data + r * x.row_stride * int64_t(item), x.row_stride, x.col_stride};
        GemmOperand ys{y.data + r * y.col_stride * int64_t(item), y.row_stride, y.col_stride};
        multiply_add(c0 + r, c0 + r, nb, nb, k, xs, ys);
        size_t q = 0;
        for (int64_t i = 0; i < nb; ++i)
          for (int64_t j = i + 1; j < nb; ++j) *at(c0 + r + i, c0 + r + j) = upper[q++];
      }
    };
    // Each block's product runs on one thread here (nested), with the same bits as on several.
    if (blocks == 1 || s * kUpdateLeaf * k < kInlineBelow)
      diagonal(0, blocks);
    else
      parallel_for(blocks, 1, diagonal);
  }

  // The blocks below the diagonal of the s x s block at (c0 + r, c0 + r); collects the diagonal
  // blocks' first rows.
  void off_diagonal(int64_t c0, int64_t s, int64_t k, GemmOperand x, GemmOperand y, int64_t r,
                    std::vector<int64_t>& leaves) {
    if (s <= kUpdateLeaf) {
      leaves.push_back(r);
      return;
    }
    int64_t h = s / 2;
    off_diagonal(c0, h, k, x, y, r, leaves);
    size_t item = size_of(d);
    GemmOperand xs{x.data + (r + h) * x.row_stride * int64_t(item), x.row_stride, x.col_stride};
    GemmOperand ys{y.data + r * y.col_stride * int64_t(item), y.row_stride, y.col_stride};
    multiply_add(c0 + r + h, c0 + r, s - h, h, k, xs, ys);
    off_diagonal(c0, s - h, k, x, y, r + h, leaves);
  }

  int64_t factor(int64_t r0, int64_t n) {
    if (n <= kLeaf) return factor_leaf(r0, n);
    int64_t n1 = n / 2, n2 = n - n1;
    if (int64_t info = factor(r0, n1)) return info;
    // W = L21^T = L11^-1 A21^T, a row-major n1 x n2 copy, written back transposed.
    std::vector<T> w(size_t(n1 * n2));
    transposed_copy(at(r0 + n1, r0), w.data(), n2, n1, n2, false);
    factor_detail::solve<T>({at(r0, r0), rs, cs, true, false}, n1, w.data(), n2, n2);
    transposed_copy(at(r0 + n1, r0), w.data(), n2, n1, n2, true);
    // A22 -= L21 L21^T, as A22 += L21 (-W) (products only add).
    for (T& v : w) v = -v;
    GemmOperand l21{reinterpret_cast<const char*>(at(r0 + n1, r0)), rs, cs};
    update_lower(r0 + n1, n2, n1, l21, {reinterpret_cast<const char*>(w.data()), n2, 1});
    int64_t info = factor(r0 + n1, n2);
    return info ? info + n1 : 0;
  }
};

template <class T> int64_t cholesky_typed(char* a, int64_t n, int64_t lda, bool upper) {
  if (n == 0) return 0;
  Cholesky<T> c{reinterpret_cast<T*>(a), upper ? 1 : lda, upper ? lda : 1};
  return c.factor(0, n);
}

}  // namespace

int64_t cholesky(Dtype d, char* a, int64_t n, int64_t lda, bool upper) {
  if (d == Dtype::float32) return cholesky_typed<float>(a, n, lda, upper);
  if (d == Dtype::float64) return cholesky_typed<double>(a, n, lda, upper);
  throw KernelError(EvalErrorKind::other, "cholesky: float32 and float64 only");
}

}  // namespace nuvec::cpu
