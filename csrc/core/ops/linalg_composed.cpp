#include "core/ops/linalg_composed.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/ops.h"
#include "core/ops/linalg_spectral.h"

namespace nuvec::linalg {

namespace {

constexpr const char* kNorm = "linalg.norm";

Array un(UnaryOp op, const Array& x, Stream s) { return unary(op, x, s); }
Array bin(BinaryOp op, const Array& a, const Array& b, Stream s) { return binary(op, a, b, s); }
Array lit(double v, Dtype d) { return scalar_array(v, d); }
Axes one(int axis) { return std::vector<int>{axis}; }

// The rows x cols top-left block of x's matrices.
Array corner(const Array& x, int64_t rows, int64_t cols, Stream s) {
  Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1);
  stop[x.ndim() - 2] = rows, stop[x.ndim() - 1] = cols;
  return slice(x, start, stop, step, s);
}

Array squared_magnitude(const Array& a, Stream s) {
  if (!is_complex(a.dtype())) return un(UnaryOp::square, a, s);
  Array m = un(UnaryOp::abs, a, s);
  return bin(BinaryOp::multiply, m, m, s);
}

Array l2(const Array& a, const std::vector<int>& axes, bool keepdims, Stream s) {
  return un(UnaryOp::sqrt, sum(squared_magnitude(a, s), axes, keepdims, s), s);
}

using Reduce = Array (*)(const Array&, const Axes&, bool, Stream);

Array vector_norm(const Array& a, double ord, int axis, bool keepdims, Stream s) {
  Dtype dt = at_least_float(a.dtype());
  if (ord == 0) {
    Array nz = bin(BinaryOp::not_equal, a, scalar_array(int64_t(0), a.dtype()), s);
    return astype(sum(nz, one(axis), keepdims, s), dt, s);
  }
  Array mag = un(UnaryOp::abs, a, s);
  if (ord == 1) return astype(sum(mag, one(axis), keepdims, s), dt, s);
  if (ord == 2) return l2(a, {axis}, keepdims, s);
  if (std::isinf(ord)) return astype((ord > 0 ? Reduce(max) : Reduce(min))(mag, one(axis), keepdims, s), dt, s);
  Array p = bin(BinaryOp::power, mag, lit(ord, dt), s);
  return bin(BinaryOp::power, sum(p, one(axis), keepdims, s), lit(1.0 / ord, dt), s);
}

// The matrix axes moved last (rows, then columns), as MLX's singular-value norms take them, and
// the two axes sorted (where keepdims puts them back).
std::pair<Array, std::vector<int>> matrix_last(const Array& a, int row, int col, Stream s) {
  Array m = row > col ? moveaxis(moveaxis(a, row, -1, s), col, -1, s) : moveaxis(moveaxis(a, col, -1, s), row, -2, s);
  return {m, {std::min(row, col), std::max(row, col)}};
}

// max (ord > 0) or min of the singular values (sum for "nuc") of the matrices of axes (row, col).
Array singular_norm(const Array& a, int row, int col, Reduce red, bool keepdims, Stream s) {
  auto [m, both] = matrix_last(a, row, col, s);
  Array r = red(decompose(m, Decomposition::svd_values, false, s)[0], one(-1), false, s);
  return keepdims ? expand_dims(r, both, s) : r;
}

Array matrix_norm(const Array& a, const std::variant<double, std::string>& ord, std::vector<int> axes, bool keepdims,
                  Stream s) {
  Dtype dt = at_least_float(a.dtype());
  int row = axes[0] < 0 ? axes[0] + a.ndim() : axes[0], col = axes[1] < 0 ? axes[1] + a.ndim() : axes[1];
  if (auto* name = std::get_if<std::string>(&ord)) {
    if (*name == "f" || *name == "fro") return l2(a, axes, keepdims, s);
    if (*name == "nuc") return singular_norm(a, row, col, sum, keepdims, s);
    throw OpError(kNorm, "invalid ord value '" + *name + "' for matrix norm");
  }
  double p = std::get<double>(ord);
  Array mag = un(UnaryOp::abs, a, s);
  Reduce red = p > 0 ? Reduce(max) : Reduce(min);
  if (p == 1 || p == -1) {
    col -= !keepdims && col > row && col > 0;
    return astype(red(sum(mag, one(row), keepdims, s), one(col), keepdims, s), dt, s);
  }
  if (std::isinf(p)) {
    row -= !keepdims && row > col && row > 0;
    return astype(red(sum(mag, one(col), keepdims, s), one(row), keepdims, s), dt, s);
  }
  if (p == 2 || p == -2) return astype(singular_norm(a, row, col, red, keepdims, s), dt, s);
  char text[64];
  std::snprintf(text, sizeof text, "invalid ord %g for matrix norm", p);
  throw OpError(kNorm, text);
}

}  // namespace

Array pinv(const Array& a, Stream s) {
  const char* op = "linalg.pinv";
  Dtype dt = a.dtype();
  if (dt != Dtype::float32 && dt != Dtype::float64)
    throw OpError(op, std::string("arrays must have type float32 or float64; received ") + name_of(dt));
  if (a.ndim() < 2)
    throw OpError(op, "arrays must have >= 2 dimensions; received " + std::to_string(a.ndim()) + " dimensions");
  int64_t m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
  if (k == 0) {  // nothing to invert (nuvec's max refuses an empty axis; MLX's gives zeros here)
    Shape out(a.shape().begin(), a.shape().end() - 2);
    out.insert(out.end(), {n, m});
    return full(out, scalar_array(int64_t(0), dt), dt, s, "zeros");
  }
  std::vector<Array> usv = decompose(a, Decomposition::svd, false, s);
  Array u = swapaxes(corner(usv[0], m, k, s), -1, -2, s);
  Array v = swapaxes(corner(usv[2], k, n, s), -1, -2, s);
  Array sv = expand_dims(usv[1], {-2}, s);
  double eps = dt == Dtype::float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  Array cutoff = bin(BinaryOp::multiply, lit(10.0 * double(std::max(m, n)) * eps, dt), max(sv, one(-1), true, s), s);
  Array rs = where(bin(BinaryOp::greater, sv, cutoff, s), un(UnaryOp::reciprocal, sv, s), lit(0.0, dt), s);
  return matmul(bin(BinaryOp::multiply, v, rs, s), u, s);
}

Array norm(const Array& a, const NormOrder& ord, const std::optional<std::vector<int>>& axes_arg, bool keepdims,
           Stream s) {
  std::vector<int> axes = axes_arg.value_or(std::vector<int>{});
  if (!axes_arg)
    for (int i = 0; i < a.ndim(); ++i) axes.push_back(i);
  if (!ord) {
    if (axes_arg && axes.size() > 2) throw OpError(kNorm, "received too many axes for norm");
    return l2(a, axes, keepdims, s);
  }
  if (auto* name = std::get_if<std::string>(&*ord)) {
    if (axes.size() != 2)
      throw OpError(kNorm, "norm '" + *name + "' only supported for matrices, but received " +
                               std::to_string(axes.size()) + " axis/axes");
    return matrix_norm(a, *ord, axes, keepdims, s);
  }
  if (axes.size() == 1) return vector_norm(a, std::get<double>(*ord), axes[0], keepdims, s);
  if (axes.size() == 2) return matrix_norm(a, *ord, axes, keepdims, s);
  throw OpError(kNorm, "received too many axes for norm");
}

Array cross(const Array& a, const Array& b, int axis, Stream s) {
  const char* op = "linalg.cross";
  for (const Array* x : {&a, &b}) {
    if (axis >= x->ndim() || axis + x->ndim() < 0)
      throw OpError(op,
                    "axis " + std::to_string(axis) + " is out of bounds for array with " + std::to_string(x->ndim()) +
                        " dimensions",
                    true);
    if (x->shape(axis) != 2 && x->shape(axis) != 3) throw OpError(op, "the specified axis must have size 2 or 3");
  }
  const bool a2 = a.shape(axis) == 2, b2 = b.shape(axis) == 2;
  Dtype dt = promote(a.dtype(), b.dtype());
  auto as3 = [&](const Array& x) {
    Shape sh = x.shape();
    sh[axis < 0 ? axis + x.ndim() : axis] = 3;
    return sh;
  };
  Shape out = broadcast_shapes(as3(a), as3(b), op);
  const int ax = axis < 0 ? axis + int(out.size()) : axis;
  auto parts_of = [&](const Array& x, bool two) {
    out[ax] = two ? 2 : 3;
    return split_sections(broadcast_to(astype(x, dt, s), out, s), two ? 2 : 3, ax, s);
  };
  std::vector<Array> x = parts_of(a, a2), y = parts_of(b, b2);
  auto mul = [&](const Array& p, const Array& q) { return bin(BinaryOp::multiply, p, q, s); };
  auto sub = [&](const Array& p, const Array& q) { return bin(BinaryOp::subtract, p, q, s); };
  auto neg = [&](const Array& p) { return un(UnaryOp::negative, p, s); };
  std::vector<Array> parts;
  if (a2 && b2) {
    Array z = filled_like(x[0], scalar_array(int64_t(0), x[0].dtype()), s, "zeros_like");
    parts = {z, z};
  } else if (b2) {
    parts = {neg(mul(x[2], y[1])), mul(x[2], y[0])};
  } else if (a2) {
    parts = {mul(x[1], y[2]), neg(mul(x[0], y[2]))};
  } else {
    parts = {sub(mul(x[1], y[2]), mul(x[2], y[1])), sub(mul(x[2], y[0]), mul(x[0], y[2]))};
  }
  parts.push_back(sub(mul(x[0], y[1]), mul(x[1], y[0])));
  return concatenate(parts, ax, s);
}

}  // namespace nuvec::linalg
