// Small helpers the differentiation rules share.
#pragma once
#include "core/ops.h"
#include "core/ops/reduce.h"

namespace nuvec::grad {

inline Array zeros_like(const Array& a) { return filled_like(a, scalar_array(int64_t(0), a.dtype()), a.stream()); }
inline Array lit(double v, const Array& like) { return weak_scalar(v, like.dtype(), "grad"); }
inline Array mul(const Array& a, const Array& b) { return binary(BinaryOp::multiply, a, b, a.stream()); }
inline Array add(const Array& a, const Array& b) { return binary(BinaryOp::add, a, b, a.stream()); }
inline Array sub(const Array& a, const Array& b) { return binary(BinaryOp::subtract, a, b, a.stream()); }
inline Array div(const Array& a, const Array& b) { return binary(BinaryOp::divide, a, b, a.stream()); }
inline Array neg(const Array& a) { return unary(UnaryOp::negative, a, a.stream()); }

// Sums g over the axes that broadcasting added or stretched, back to `shape`, in `dtype`.
inline Array unbroadcast(const Array& g, const Shape& shape, Dtype dtype) {
  Stream s = g.stream();
  std::vector<int> axes;
  int lead = g.ndim() - int(shape.size());
  for (int i = 0; i < g.ndim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape(i) != 1)) axes.push_back(i);
  Array r = axes.empty() ? g : sum(g, axes, true, s);
  if (r.shape() != shape) r = reshape(r, shape, s);
  return astype(r, dtype, s);
}

}  // namespace nuvec::grad
