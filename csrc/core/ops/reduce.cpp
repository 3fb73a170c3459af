// Reduction ops: axes and dtype rules, then one Reduce node; mean, var, std and the composed
// forms of softmax and logsumexp are built from it.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/ops.h"
#include "core/ops/reduce.h"

#include "core/primitives/reduce.h"

namespace nuvec {
namespace {

// Sorted, distinct, in-range axes (every axis when none are given).
std::vector<int> reduce_axes(const Array& x, const Axes& axes, const char* op) {
  std::vector<int> r;
  if (!axes) {
    for (int i = 0; i < x.ndim(); ++i) r.push_back(i);
    return r;
  }
  for (int a : *axes) r.push_back(normalize_axis(a, x.ndim(), op));
  std::sort(r.begin(), r.end());
  if (std::adjacent_find(r.begin(), r.end()) != r.end()) throw OpError(op, "duplicate axes in the reduction");
  return r;
}

Shape reduced_shape(const Shape& shape, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int i = 0; i < int(shape.size()); ++i) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), i);
    if (!reduced)
      out.push_back(shape[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Shape& shape, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= shape[a];
  return n;
}

Array reduce(ReduceOp op, const Array& x, const std::vector<int>& axes, bool keepdims, Dtype out, Stream s) {
  if (axes.empty()) return astype(x, out, s);
  if ((op == ReduceOp::max || op == ReduceOp::min) && reduced_count(x.shape(), axes) == 0)
    throw OpError(op_name(op), "cannot reduce over zero elements (an axis of size 0)");
  return Array::lazy(reduced_shape(x.shape(), axes, keepdims), out, std::make_shared<Reduce>(op, axes), {x}, s);
}

Array reduce_op(ReduceOp op, const Array& x, const Axes& axes, bool keepdims, Dtype out, Stream s) {
  return reduce(op, x, reduce_axes(x, axes, op_name(op)), keepdims, out, s);
}

// The dtype statistics are computed in: integers and half types in float32.
Dtype stats_compute(Dtype d) { return is_inexact(d) && !is_half(d) ? d : Dtype::float32; }
// What mean, var, logsumexp and softmax return: MLX keeps inexact dtypes and makes the rest float32.
Dtype stats_result(Dtype d) { return is_inexact(d) ? d : Dtype::float32; }

// x / (the element count of `of` over `axes`, less ddof): a constant, or under compile a Count
// node, so that a shapeless replay divides by the new count.
Array divide_by_count(const Array& x, const Array& of, const std::vector<int>& axes, int64_t ddof, Stream s) {
  if (of.traced() & replay_only_trace_bits())
    return binary(BinaryOp::divide, x,
                  Array::lazy({}, x.dtype(), std::make_shared<Count>(axes, ddof, x.dtype()), {of}, s), s);
  int64_t n = reduced_count(of.shape(), axes) - ddof;
  return binary(BinaryOp::divide, x, scalar_array(double(std::max<int64_t>(n, 0)), x.dtype()), s);
}

// The mean in the compute dtype (half types accumulate and divide in float32).
Array mean_of(const Array& x, const std::vector<int>& axes, bool keepdims, Stream s) {
  Dtype c = stats_compute(x.dtype());
  Array src = is_integer(x.dtype()) || x.dtype() == Dtype::bool_ ? astype(x, c, s) : x;
  return divide_by_count(reduce(ReduceOp::sum, src, axes, keepdims, c, s), x, axes, 0, s);
}

Array variance(const Array& x, const std::vector<int>& axes, bool keepdims, int ddof, Stream s) {
  Array xc = astype(x, stats_compute(x.dtype()), s);
  Array d = binary(BinaryOp::subtract, xc, mean_of(xc, axes, true, s), s);
  Array sq = unary(UnaryOp::square, is_complex(d.dtype()) ? unary(UnaryOp::abs, d, s) : d, s);
  return divide_by_count(reduce(ReduceOp::sum, sq, axes, keepdims, sq.dtype(), s), x, axes, ddof, s);
}

// The fused kernels take reduced axes that are the trailing ones (merged into one last axis),
// of the dtypes computed in float32; float64 is composed in double precision.
bool fusable(const Array& x, const std::vector<int>& axes) {
  return !axes.empty() && axes.front() == x.ndim() - int(axes.size()) && x.dtype() != Dtype::float64;
}

// x as (kept..., product of the trailing reduced axes), for the fused kernels.
Array merge_trailing(const Array& x, const std::vector<int>& axes, Stream s) {
  Shape shape(x.shape().begin(), x.shape().begin() + axes.front());
  shape.push_back(reduced_count(x.shape(), axes));
  return reshape(x, shape, s);
}

void check_floating(const Array& x, const char* op) {
  if (is_complex(x.dtype())) throw OpError(op, "not supported for complex arrays");
}

}  // namespace

Array sum(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::sum, x, axes, keepdims, sum_dtype(x.dtype()), s);
}
Array prod(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::prod, x, axes, keepdims, sum_dtype(x.dtype()), s);
}
Array max(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::max, x, axes, keepdims, x.dtype(), s);
}
Array min(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::min, x, axes, keepdims, x.dtype(), s);
}
std::pair<Array, Array> minmax(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return {min(x, axes, keepdims, s), max(x, axes, keepdims, s)};
}
Array all(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::all, x, axes, keepdims, Dtype::bool_, s);
}
Array any(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  return reduce_op(ReduceOp::any, x, axes, keepdims, Dtype::bool_, s);
}
Array all(const Array& x, Stream s) { return all(x, std::nullopt, false, s); }

Array mean(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  std::vector<int> ax = reduce_axes(x, axes, "mean");
  return astype(mean_of(x, ax, keepdims, s), stats_result(x.dtype()), s);
}

Array var(const Array& x, const Axes& axes, bool keepdims, int ddof, Stream s) {
  std::vector<int> ax = reduce_axes(x, axes, "var");
  Dtype out = is_complex(x.dtype()) ? Dtype::float32 : stats_result(x.dtype());
  return astype(variance(x, ax, keepdims, ddof, s), out, s);
}

Array std(const Array& x, const Axes& axes, bool keepdims, int ddof, Stream s) {
  std::vector<int> ax = reduce_axes(x, axes, "std");
  Dtype out = is_complex(x.dtype()) ? Dtype::float32 : stats_result(x.dtype());
  return astype(unary(UnaryOp::sqrt, variance(x, ax, keepdims, ddof, s), s), out, s);
}

Array logsumexp(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  check_floating(x, "logsumexp");
  std::vector<int> ax = reduce_axes(x, axes, "logsumexp");
  if (ax.empty()) return astype(x, stats_result(x.dtype()), s);
  if (reduced_count(x.shape(), ax) == 0)
    throw OpError("logsumexp", "cannot reduce over zero elements (an axis of size 0)");
  Shape out_shape = reduced_shape(x.shape(), ax, keepdims);
  Array xf = astype(x, stats_result(x.dtype()), s);
  if (fusable(xf, ax)) {
    Array rows = merge_trailing(xf, ax, s);
    Shape row_shape(rows.shape().begin(), rows.shape().end() - 1);
    return reshape(Array::lazy(row_shape, xf.dtype(), std::make_shared<LogSumExp>(), {rows}, s), out_shape, s);
  }
  // Subtracting the max keeps exp in range; an infinite or NaN max is replaced by 0, which gives
  // the right infinity (or NaN) through log(sum(exp(x))).
  Array xc = astype(x, stats_compute(x.dtype()), s);
  Array m = reduce(ReduceOp::max, xc, ax, true, xc.dtype(), s);
  Array zero = scalar_array(0.0, xc.dtype());
  Array ms = where(unary(UnaryOp::isfinite, m, s), m, zero, s);
  Array e = unary(UnaryOp::exp, binary(BinaryOp::subtract, xc, ms, s), s);
  Array r = binary(BinaryOp::add, unary(UnaryOp::log, reduce(ReduceOp::sum, e, ax, true, e.dtype(), s), s), ms, s);
  return astype(reshape(r, out_shape, s), stats_result(x.dtype()), s);
}

Array softmax(const Array& x, const Axes& axes, bool, Stream s) {
  check_floating(x, "softmax");
  std::vector<int> ax = reduce_axes(x, axes, "softmax");
  Array xf = astype(x, stats_result(x.dtype()), s);
  if (ax.empty()) return unary(UnaryOp::exp, binary(BinaryOp::subtract, xf, xf, s), s);
  if (xf.size() == 0) return xf;
  if (fusable(xf, ax)) {
    Array rows = merge_trailing(xf, ax, s);
    return reshape(Array::lazy(rows.shape(), xf.dtype(), std::make_shared<Softmax>(), {rows}, s), x.shape(), s);
  }
  Array xc = astype(x, stats_compute(x.dtype()), s);
  Array e =
      unary(UnaryOp::exp, binary(BinaryOp::subtract, xc, reduce(ReduceOp::max, xc, ax, true, xc.dtype(), s), s), s);
  Array r = binary(BinaryOp::divide, e, reduce(ReduceOp::sum, e, ax, true, e.dtype(), s), s);
  return astype(r, xf.dtype(), s);
}

namespace {
Array arg_reduce(bool is_max, const Array& x, std::optional<int> axis, bool keepdims, Stream s) {
  const char* op = is_max ? "argmax" : "argmin";
  if (!axis) {
    Array flat = reshape(x, {x.size()}, s);
    Array r = arg_reduce(is_max, flat, 0, false, s);
    return keepdims ? reshape(r, Shape(x.ndim(), 1), s) : r;
  }
  int a = normalize_axis(*axis, x.ndim(), op);
  if (x.size() == 0) throw OpError(op, "cannot reduce an empty array");
  return Array::lazy(reduced_shape(x.shape(), {a}, keepdims), Dtype::uint32, std::make_shared<ArgReduce>(is_max, a),
                     {x}, s);
}
}  // namespace

Array argmax(const Array& x, std::optional<int> axis, bool keepdims, Stream s) {
  return arg_reduce(true, x, axis, keepdims, s);
}
Array argmin(const Array& x, std::optional<int> axis, bool keepdims, Stream s) {
  return arg_reduce(false, x, axis, keepdims, s);
}

Array trace(const Array& x, int64_t offset, int axis1, int axis2, std::optional<Dtype> dtype, Stream s) {
  if (x.ndim() < 2)
    throw OpError("trace", "the array must have at least two dimensions, not " + std::to_string(x.ndim()));
  if (normalize_axis(axis1, x.ndim(), "trace") == normalize_axis(axis2, x.ndim(), "trace"))
    throw OpError("trace", "axis1 and axis2 cannot be the same axis");
  Array d = diagonal(x, offset, axis1, axis2, s);
  if (dtype) d = astype(d, *dtype, s);
  return sum(d, std::vector<int>{-1}, false, s);
}

Array count_nonzero(const Array& x, const Axes& axes, bool keepdims, Stream s) {
  Array zero = weak_scalar(int64_t(0), x.dtype(), "count_nonzero");
  return sum(binary(BinaryOp::not_equal, x, zero, s), axes, keepdims, s);
}

}  // namespace nuvec
