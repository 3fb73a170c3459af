// nuvec.linalg's LU / triangular / Cholesky ops: MLX's checks and messages, broadcasting of the
// batch axes, and the functions composed of the primitives (lu, det, slogdet, cholesky_inv).
#include "core/ops/linalg.h"

#include <string>

#include "core/ops.h"
#include "core/primitives/linalg.h"

namespace nuvec::linalg {

namespace {

void check_float(const Array& a, const char* op) {
  if (a.dtype() != Dtype::float32 && a.dtype() != Dtype::float64)
    throw OpError(op, std::string("Arrays must have type float32 or float64. Received array with type ") +
                          name_of(a.dtype()) + ".");
}

// At least 2 dimensions and, when `square` (the message) is given, square matrices.
void check_matrix(const Array& a, const char* op, const char* square = nullptr) {
  if (a.ndim() < 2)
    throw OpError(op,
                  "Arrays must have >= 2 dimensions. Received array with " + std::to_string(a.ndim()) + " dimensions.");
  if (square && a.shape(-1) != a.shape(-2)) throw OpError(op, square);
}

// MLX's checks of a float32 / float64 matrix argument, in MLX's order.
void check_float_matrix(const Array& a, const char* op, const char* square = nullptr) {
  check_float(a, op);
  check_matrix(a, op, square);
}

Shape batch_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

Shape with_matrix(Shape batch, int64_t m, int64_t n) {
  batch.insert(batch.end(), {m, n});
  return batch;
}

// a x = b for a (..., N, N) and b (N,) or (..., N, K), as MLX's solve and solve_triangular see
// them: the batch axes broadcast, a vector b gives a vector; `f` solves the broadcast matrices.
template <class F> Array solve_like(const Array& a, const Array& b, const char* op, F f, Stream s) {
  if (a.ndim() < 2)
    throw OpError(
        op, "First input must have >= 2 dimensions. Received array with " + std::to_string(a.ndim()) + " dimensions.");
  if (b.ndim() < 1)
    throw OpError(
        op, "Second input must have >= 1 dimensions. Received array with " + std::to_string(b.ndim()) + " dimensions.");
  if (a.shape(-1) != a.shape(-2))
    throw OpError(op, "First input must be a square matrix. Received array with shape " + shape_str(a.shape()) + ".");
  bool vector = b.ndim() == 1;
  if (a.shape(-1) != b.shape(vector ? -1 : -2))
    throw OpError(op, "Last dimension of first input with shape " + shape_str(a.shape()) +
                          " must match second to last dimension of second input with shape " + shape_str(b.shape()) +
                          ".");
  Dtype d = promote(a.dtype(), b.dtype());
  if (d != Dtype::float32 && d != Dtype::float64)
    throw OpError(op, std::string("Input arrays must promote to float32 or float64. Received arrays with type ") +
                          name_of(a.dtype()) + " and " + name_of(b.dtype()) + ".");
  Array bm = vector ? expand_dims(b, {-1}, s) : b;
  Shape batch = broadcast_shapes(batch_of(a), batch_of(bm), op);
  int64_t n = a.shape(-1);
  // One matrix a against a batch of b: solved once (see fold_columns), never copied per b.
  Array aa = a.ndim() == 2 ? astype(a, d, s) : broadcast_to(astype(a, d, s), with_matrix(batch, n, n), s);
  Array x = f(aa, broadcast_to(astype(bm, d, s), with_matrix(batch, n, bm.shape(-1)), s));
  return vector ? squeeze(x, std::vector<int>{-1}, s) : x;
}

Array lower_or_upper(const Array& x, bool upper, int64_t k, Stream s) { return upper ? triu(x, k, s) : tril(x, k, s); }

}  // namespace

std::vector<Array> lu_factor_all(const Array& a, Stream s) {
  const char* op = "linalg.lu_factor";
  check_float_matrix(a, op);
  Shape batch = batch_of(a);
  Shape piv = batch, perm = batch;
  piv.push_back(std::min(a.shape(-2), a.shape(-1)));
  perm.push_back(a.shape(-2));
  return Array::lazy_multi({a.shape(), piv, perm}, {a.dtype(), Dtype::uint32, Dtype::uint32},
                           std::make_shared<LUFactor>(), {a}, s);
}

std::pair<Array, Array> lu_factor(const Array& a, Stream s) {
  std::vector<Array> out = lu_factor_all(a, s);
  return {out[0], out[1]};
}

std::vector<Array> lu(const Array& a, Stream s) {
  const char* op = "linalg.lu";
  check_float_matrix(a, op);
  std::vector<Array> f = lu_factor_all(a, s);
  int64_t m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  Shape start(size_t(a.ndim()), 0), step(size_t(a.ndim()), 1), stop_l = a.shape(), stop_u = a.shape();
  stop_l.back() = k;
  stop_u[size_t(a.ndim() - 2)] = k;
  Array l = binary(BinaryOp::add, tril(slice(f[0], start, stop_l, step, s), -1, s), eye(m, k, 0, a.dtype(), s), s);
  Array u = triu(slice(f[0], start, stop_u, step, s), 0, s);
  return {f[2], l, u};
}

namespace {

// A node of a solve primitive `p` on a and b. When a is one matrix and b a batch (..., N, K), the
// batch becomes columns of one N x (... * K) right-hand side: one factorisation, no copies of a.
Array fold_columns(const std::shared_ptr<Primitive>& p, const Array& a, const Array& b, Stream s) {
  if (a.ndim() != 2 || b.ndim() == 2) return Array::lazy(b.shape(), b.dtype(), p, {a, b}, s);
  Array cols = moveaxis(b, -2, 0, s);  // (N, ..., K)
  Shape folded{b.shape(-2), b.size() / std::max<int64_t>(b.shape(-2), 1)};
  if (b.shape(-2) == 0) folded[1] = 0;
  Array x = Array::lazy(folded, b.dtype(), p, {a, reshape(cols, folded, s)}, s);
  return moveaxis(reshape(x, cols.shape(), s), 0, -2, s);
}

}  // namespace

Array solve_matrix(const Array& a, const Array& b, bool transpose, Stream s) {
  return fold_columns(std::make_shared<Solve>(transpose), a, b, s);
}

Array triangular_solve(const Array& t, const Array& b, bool upper, bool transpose, bool unit, Stream s) {
  return fold_columns(std::make_shared<TriangularSolve>(upper, transpose, unit), t, b, s);
}

Array inverse(const Array& a, bool triangular, bool upper, Stream s) {
  return Array::lazy(a.shape(), a.dtype(), std::make_shared<Inverse>(triangular, upper), {a}, s);
}

Array solve(const Array& a, const Array& b, Stream s) {
  return solve_like(
      a, b, "linalg.solve", [&](const Array& x, const Array& y) { return solve_matrix(x, y, false, s); }, s);
}

Array solve_triangular(const Array& a, const Array& b, bool upper, Stream s) {
  check_float(a, "linalg.solve_triangular");
  return solve_like(
      a, b, "linalg.solve_triangular",
      [&](const Array& x, const Array& y) { return triangular_solve(x, y, upper, false, false, s); }, s);
}

Array inv(const Array& a, Stream s) {
  const char* op = "linalg.inv";
  check_float_matrix(a, op, "Inverses are only defined for square matrices.");
  return inverse(a, false, false, s);
}

Array tri_inv(const Array& a, bool upper, Stream s) {
  const char* op = "linalg.tri_inv";
  check_float_matrix(a, op, "Inverses are only defined for square matrices.");
  return inverse(a, true, upper, s);
}

Array cholesky(const Array& a, bool upper, Stream s) {
  const char* op = "linalg.cholesky";
  check_float_matrix(a, op, "Cholesky decomposition is only defined for square matrices.");
  return Array::lazy(a.shape(), a.dtype(), std::make_shared<Cholesky>(upper), {a}, s);
}

Array cholesky_inv(const Array& a, bool upper, Stream s) {
  const char* op = "linalg.cholesky_inv";
  check_float_matrix(a, op, "Cholesky inverse is only defined for square matrices.");
  // (L L^T)^-1 = L^-T L^-1; (U^T U)^-1 = U^-1 U^-T.
  Array x = inverse(a, true, upper, s);
  return upper ? matmul(x, matrix_transpose(x, s), s) : matmul(matrix_transpose(x, s), x, s);
}

namespace {

// a's LU factors in the dtype the determinant is computed in, with the permutation's sign.
std::pair<Array, Array> lu_and_sign(const Array& a, const char* op, Stream s) {
  if (is_complex(a.dtype())) throw OpError(op, "Complex inputs are not supported.");
  check_matrix(a, op, "Only defined for square matrices.");
  Dtype d = a.dtype() == Dtype::float64 ? Dtype::float64 : Dtype::float32;
  std::vector<Array> f = lu_factor_all(astype(a, d, s), s);
  int64_t n = a.shape(-1);
  // Each pivot that is not its own row is one swap: the sign is (-1)^swaps.
  Array swaps = sum(binary(BinaryOp::not_equal, f[1], arange(0, double(n), 1, Dtype::uint32, s), s),
                    std::vector<int>{-1}, false, s);
  Array odd = astype(binary(BinaryOp::bitwise_and, astype(swaps, Dtype::int32, s), scalar_array(int64_t(1)), s), d, s);
  Array sign =
      binary(BinaryOp::subtract, scalar_array(1.0, d), binary(BinaryOp::multiply, scalar_array(2.0, d), odd, s), s);
  return {diagonal(f[0], 0, -2, -1, s), sign};
}

Dtype det_dtype(const Array& a) { return is_floating(a.dtype()) ? a.dtype() : Dtype::float32; }

}  // namespace

Array det(const Array& a, Stream s) {
  auto [diag, sign] = lu_and_sign(a, "linalg.det", s);
  return astype(binary(BinaryOp::multiply, sign, prod(diag, std::vector<int>{-1}, false, s), s), det_dtype(a), s);
}

std::pair<Array, Array> slogdet(const Array& a, Stream s) {
  auto [diag, sign] = lu_and_sign(a, "linalg.slogdet", s);
  Array signs =
      binary(BinaryOp::multiply, sign, prod(unary(UnaryOp::sign, diag, s), std::vector<int>{-1}, false, s), s);
  Array logabs = sum(unary(UnaryOp::log, unary(UnaryOp::abs, diag, s), s), std::vector<int>{-1}, false, s);
  return {astype(signs, det_dtype(a), s), astype(logabs, det_dtype(a), s)};
}

}  // namespace nuvec::linalg
