// Matrix products: matmul records one node; the others are views and element-wise ops around it.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/ops/matmul.h"

#include "core/ops.h"
#include "core/ops/reduce.h"
#include "core/primitives/matmul.h"

namespace nuvec {
namespace {

// The dtype a product of `a` and `b` computes and returns; integers and bool are refused as MLX does.
Dtype product_dtype(Dtype a, Dtype b, const char* op) {
  Dtype d = promote(a, b);
  if (!is_inexact(d))
    throw OpError(op, std::string("only floating point and complex arrays are supported, not ") + name_of(a) + " and " +
                          name_of(b));
  return d;
}

Array as_dtype(const Array& x, Dtype d, Stream s) { return x.dtype() == d ? x : astype(x, d, s); }

Shape slice_shape(const Shape& s, size_t begin, size_t end) { return Shape(s.begin() + begin, s.begin() + end); }

}  // namespace

Array matmul(const Array& a, const Array& b, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw OpError("matmul", "0-d arrays are not supported (got shapes " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()) + "); use multiply for scalars");
  Dtype d = product_dtype(a.dtype(), b.dtype(), "matmul");
  Shape sa = a.shape(), sb = b.shape();
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k)
    throw OpError("matmul", "inner dimensions differ: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                                " (" + std::to_string(k) + " != " + std::to_string(sb[sb.size() - 2]) + ")");
  Shape batch = broadcast_shapes(slice_shape(sa, 0, sa.size() - 2), slice_shape(sb, 0, sb.size() - 2), "matmul");
  Shape full_a = batch, full_b = batch, out = batch;
  full_a.insert(full_a.end(), {m, k});
  full_b.insert(full_b.end(), {k, n});
  out.insert(out.end(), {m, n});
  check_shape(out, "matmul");
  Array x = broadcast_to(reshape(as_dtype(a, d, s), sa, s), full_a, s);
  Array y = broadcast_to(reshape(as_dtype(b, d, s), sb, s), full_b, s);
  Array r = Array::lazy(out, d, std::make_shared<Matmul>(), {x, y}, s);
  if (!a_vec && !b_vec) return r;
  Shape final_shape = batch;
  if (!a_vec) final_shape.push_back(m);
  if (!b_vec) final_shape.push_back(n);
  return reshape(r, final_shape, s);
}

Array addmm(const Array& c, const Array& a, const Array& b, double alpha, double beta, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw OpError("addmm", "0-d arrays are not supported (got shapes " + shape_str(a.shape()) + " and " +
                               shape_str(b.shape()) + ")");
  Dtype d = product_dtype(promote(a.dtype(), b.dtype()), c.dtype(), "addmm");
  Array ab = matmul(as_dtype(a, d, s), as_dtype(b, d, s), s);
  if (broadcast_shapes(c.shape(), ab.shape(), "addmm") != ab.shape())
    throw OpError("addmm", "c of shape " + shape_str(c.shape()) + " does not broadcast to the product's shape " +
                               shape_str(ab.shape()));
  Array cc = as_dtype(c, d, s);
  if (alpha != 1.0) ab = binary(BinaryOp::multiply, ab, weak_scalar(alpha, d, "addmm"), s);
  if (beta == 0.0) return ab;  // as BLAS: beta = 0 ignores c, NaNs included
  if (beta != 1.0) cc = binary(BinaryOp::multiply, cc, weak_scalar(beta, d, "addmm"), s);
  return binary(BinaryOp::add, ab, cc, s);
}

Array inner(const Array& a, const Array& b, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0) return binary(BinaryOp::multiply, a, b, s);
  if (a.shape(-1) != b.shape(-1))
    throw OpError("inner",
                  "the last dimensions differ: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  product_dtype(a.dtype(), b.dtype(), "inner");
  return tensordot(a, b, {-1}, {-1}, s);
}

Array outer(const Array& a, const Array& b, Stream s) {
  return binary(BinaryOp::multiply, reshape(a, {-1, 1}, s), reshape(b, {1, -1}, s), s);
}

Array tensordot(const Array& a, const Array& b, std::vector<int> axes_a, std::vector<int> axes_b, Stream s) {
  if (axes_a.size() != axes_b.size()) throw OpError("tensordot", "axes_a and axes_b must have the same length");
  Dtype d = product_dtype(a.dtype(), b.dtype(), "tensordot");
  std::vector<bool> used_a(a.ndim(), false), used_b(b.ndim(), false);
  int64_t csize = 1;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    int x = normalize_axis(axes_a[i], a.ndim(), "tensordot"), y = normalize_axis(axes_b[i], b.ndim(), "tensordot");
    if (used_a[x] || used_b[y]) throw OpError("tensordot", "repeated axis");
    if (a.shape(x) != b.shape(y))
      throw OpError("tensordot",
                    "contracted axes differ in size: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
    used_a[x] = used_b[y] = true;
    axes_a[i] = x, axes_b[i] = y;
    csize *= a.shape(x);
  }
  std::vector<int> perm_a, perm_b;
  Shape free_a, free_b;
  for (int i = 0; i < a.ndim(); ++i)
    if (!used_a[i]) perm_a.push_back(i), free_a.push_back(a.shape(i));
  perm_a.insert(perm_a.end(), axes_a.begin(), axes_a.end());
  perm_b = axes_b;
  for (int i = 0; i < b.ndim(); ++i)
    if (!used_b[i]) perm_b.push_back(i), free_b.push_back(b.shape(i));
  Array x = reshape(transpose(as_dtype(a, d, s), perm_a, s), {shape_size(free_a), csize}, s);
  Array y = reshape(transpose(as_dtype(b, d, s), perm_b, s), {csize, shape_size(free_b)}, s);
  Shape out = free_a;
  out.insert(out.end(), free_b.begin(), free_b.end());
  return reshape(matmul(x, y, s), out, s);
}

Array tensordot(const Array& a, const Array& b, int axes, Stream s) {
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw OpError("tensordot", "axes must be between 0 and the operands' dimensions, not " + std::to_string(axes));
  std::vector<int> xa(axes), xb(axes);
  std::iota(xa.begin(), xa.end(), a.ndim() - axes);
  std::iota(xb.begin(), xb.end(), 0);
  return tensordot(a, b, xa, xb, s);
}

Array vecdot(const Array& a, const Array& b, int axis, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0) throw OpError("vecdot", "the inputs must be at least 1-D");
  int ax = normalize_axis(axis, a.ndim(), "vecdot");
  if ((axis < 0 ? axis + b.ndim() : axis) != ax)
    throw OpError("vecdot", "axis " + std::to_string(axis) + " is not the same axis of a and b");
  if (a.shape(ax) != b.shape(ax)) throw OpError("vecdot", "a and b must have the same size along axis");
  Array x = is_complex(a.dtype()) ? unary(UnaryOp::conjugate, a, s) : a;
  return sum(binary(BinaryOp::multiply, x, b, s), std::vector<int>{ax}, false, s);
}

}  // namespace nuvec
