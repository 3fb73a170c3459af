// Triangular solves with many right-hand sides (factor.h): recursive halving of the triangle, the
// off-diagonal block applied by one matmul product per level, blocks of at most kTriangleLeaf
// rows solved by the per-ISA kernel on pieces of columns in parallel.
#include <algorithm>
#include <vector>

#include "backend/cpu/factor.h"
#include "backend/cpu/items.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul.h"
#include "core/errors.h"

namespace nuvec::cpu {

const FactorKernels& factor_kernels() {
  return kernel_table<FactorKernels>([] { return NUVEC_FOR_ISA(fill_factor); });
}

namespace factor_detail {

namespace {

template <class T> constexpr Dtype dtype_of() { return sizeof(T) == 4 ? Dtype::float32 : Dtype::float64; }

// Columns per piece of a block's solve: a multiple of every build's chunk, enough to amortise
// packing the block.
constexpr int64_t kPieceCols = 256;

template <class T> void solve_block(const TriangleView<T>& t, int64_t nb, T* b, int64_t ldb, int64_t nrhs) {
  TriangleKernel<T> kern;
  if constexpr (sizeof(T) == 4)
    kern = factor_kernels().solve_f32;
  else
    kern = factor_kernels().solve_f64;
  // Columns are independent: any split into pieces gives the same bits.
  auto pieces = [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      int64_t c0 = p * kPieceCols;
      kern(t.p, t.rs, t.cs, nb, t.forward, t.unit, b + c0, ldb, std::min(kPieceCols, nrhs - c0));
    }
  };
  int64_t n = ceil_div(nrhs, kPieceCols);
  if (nb * nb * nrhs / 2 < kInlineBelow)
    pieces(0, n);
  else
    parallel_for(n, 1, pieces);
}

template <class T>
void solve_rec(const TriangleView<T>& t, int64_t n, T* b, int64_t ldb, int64_t nrhs, std::vector<T>& neg) {
  if (n <= kTriangleLeaf) return solve_block(t, n, b, ldb, nrhs);
  int64_t n1 = n / 2, n2 = n - n1;
  auto sub = [&](int64_t i0) { return TriangleView<T>{t.p + i0 * (t.rs + t.cs), t.rs, t.cs, t.forward, t.unit}; };
  // Rows solved first (`first`, `f` of them) and then those they update (`last`, `l` of them).
  int64_t first = t.forward ? 0 : n1, f = t.forward ? n1 : n2;
  int64_t last = t.forward ? n1 : 0, l = t.forward ? n2 : n1;
  solve_rec(sub(first), f, b + first * ldb, ldb, nrhs, neg);
  // B_last += (-op(T)[last, first]) X_first: products only add, so the block is copied negated,
  // in the triangle's storage order (rows of op(T) contiguous, or its columns when transposed).
  neg.resize(size_t(l * f));
  const T* src = t.p + last * t.rs + first * t.cs;
  bool by_rows = t.cs == 1;
  int64_t outer = by_rows ? l : f, inner = by_rows ? f : l, step = by_rows ? t.rs : t.cs;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t q = 0; q < inner; ++q) neg[size_t(o * inner + q)] = -src[o * step + q];
  GemmOperand a{reinterpret_cast<const char*>(neg.data()), by_rows ? f : 1, by_rows ? 1 : l};
  gemm(dtype_of<T>(), a, {reinterpret_cast<const char*>(b + first * ldb), ldb, 1}, l, nrhs, f,
       reinterpret_cast<char*>(b + last * ldb), ldb, true);
  solve_rec(sub(last), l, b + last * ldb, ldb, nrhs, neg);
}

}  // namespace

template <class T> void solve(const TriangleView<T>& t, int64_t n, T* b, int64_t ldb, int64_t nrhs) {
  if (n == 0 || nrhs == 0) return;
  std::vector<T> neg;
  solve_rec(t, n, b, ldb, nrhs, neg);
}
template void solve<float>(const TriangleView<float>&, int64_t, float*, int64_t, int64_t);
template void solve<double>(const TriangleView<double>&, int64_t, double*, int64_t, int64_t);

}  // namespace factor_detail

namespace {
template <class T> void solve_typed(const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit,
                                    char* b, int64_t nrhs, int64_t ldb) {
  factor_detail::TriangleView<T> v{reinterpret_cast<const T*>(t), transpose ? 1 : ldt, transpose ? ldt : 1,
                                   lower != transpose, unit};
  factor_detail::solve(v, n, reinterpret_cast<T*>(b), ldb, nrhs);
}
}  // namespace

void triangular_solve(Dtype d, const char* t, int64_t n, int64_t ldt, bool lower, bool transpose, bool unit_diagonal,
                      char* b, int64_t nrhs, int64_t ldb) {
  if (d == Dtype::float32) return solve_typed<float>(t, n, ldt, lower, transpose, unit_diagonal, b, nrhs, ldb);
  if (d == Dtype::float64) return solve_typed<double>(t, n, ldt, lower, transpose, unit_diagonal, b, nrhs, ldb);
  throw KernelError(EvalErrorKind::other, "triangular_solve: float32 and float64 only");
}

}  // namespace nuvec::cpu
