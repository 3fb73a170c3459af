// nuvec.linalg's LU / triangular / Cholesky family, as MLX's mx.linalg: batched over leading
// axes, float32 and float64. Errors are MLX's, raised as OpError.
#pragma once
#include <utility>
#include <vector>

#include "core/array.h"

namespace nuvec::linalg {

// (LU, pivots) of MLX's lu_factor; lu_factor_all adds the row permutation (see LUFactor).
std::pair<Array, Array> lu_factor(const Array& a, Stream s);
std::vector<Array> lu_factor_all(const Array& a, Stream s);
// (P, L, U) with a = (L @ U)[P] row-wise, as MLX's lu.
std::vector<Array> lu(const Array& a, Stream s);
Array solve(const Array& a, const Array& b, Stream s);
Array solve_triangular(const Array& a, const Array& b, bool upper, Stream s);
Array inv(const Array& a, Stream s);
Array tri_inv(const Array& a, bool upper, Stream s);
Array cholesky(const Array& a, bool upper, Stream s);
Array cholesky_inv(const Array& a, bool upper, Stream s);
Array det(const Array& a, Stream s);
std::pair<Array, Array> slogdet(const Array& a, Stream s);  // (sign, log|det|)

// The primitives' own nodes, for the rules: a and b of one batch shape and dtype, b a matrix.
Array solve_matrix(const Array& a, const Array& b, bool transpose, Stream s);
Array triangular_solve(const Array& t, const Array& b, bool upper, bool transpose, bool unit, Stream s);
Array inverse(const Array& a, bool triangular, bool upper, Stream s);

}  // namespace nuvec::linalg
