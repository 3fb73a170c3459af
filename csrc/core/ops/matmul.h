// Matrix products: matmul with NumPy's rules, and the contractions built on it.
#pragma once
#include <string>
#include <vector>

#include "core/ops/common.h"

namespace nuvec {

// NumPy's matmul: 1-D operands are promoted to a matrix and the added axis removed; batch
// axes broadcast. Float16, bfloat16, float32, float64 and complex64 (integers raise OpError).
Array matmul(const Array& a, const Array& b, Stream s);
// alpha * (a @ b) + beta * c, with c broadcast to the product's shape (1-D a or b as in matmul).
Array addmm(const Array& c, const Array& a, const Array& b, double alpha, double beta, Stream s);
// Sum product over the last axes (a plain product when either is 0-d).
Array inner(const Array& a, const Array& b, Stream s);
// The outer product of the flattened operands.
Array outer(const Array& a, const Array& b, Stream s);
// sum(conj(a) * b) along `axis`, the same axis of both; the other axes broadcast.
Array vecdot(const Array& a, const Array& b, int axis, Stream s);
// Contracts axes_a of a with axes_b of b; the result has a's free axes, then b's.
Array tensordot(const Array& a, const Array& b, std::vector<int> axes_a, std::vector<int> axes_b, Stream s);
// tensordot over the last `axes` axes of a and the first `axes` of b.
Array tensordot(const Array& a, const Array& b, int axes, Stream s);
// Contractions written as subscripts ("ij,jk->ik", "...ij,...jk", "ii->i") as MLX's: diagonals,
// size-1 broadcasting, ellipses; operands contracted in einsum_path's order
// (matmul_einsum.cpp).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands, Stream s);
// The contraction order einsum takes (positions into the operand list, each step's result appended
// at its end) and MLX's printable summary of its cost.
struct EinsumPath {
  std::vector<std::vector<int>> path;
  std::string info;
};
EinsumPath einsum_path(const std::string& subscripts, const std::vector<Array>& operands);

}  // namespace nuvec
