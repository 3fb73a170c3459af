// Differentiation rules of the scans. A cumulative sum's cotangent is the cumulative sum of the
// cotangents the other way; products and logcumsumexp reduce to it; cummax/cummin route each
// output's cotangent to the element that set the running extreme (exclusive scans: the inclusive
// output one step earlier). Products never divide by zero:
// the first zero in scan order takes the product of the others (itself replaced by 1), and every
// later element sees that zero in each of its products.
#include "core/ops.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/scan.h"

namespace nuvec {
using namespace grad;

namespace {
Array cumsum_along(const Array& x, int axis, bool reverse, bool inclusive) {
  return scan(ScanOp::sum, x, axis, reverse, inclusive, std::nullopt, x.stream());
}

// For each output position, the index along `axis` of the element its running extreme came from.
Array extreme_source(const Array& x, const Array& out, int axis, bool reverse) {
  Stream s = x.stream();
  int64_t n = x.shape(axis);
  Shape shape(x.ndim(), 1);
  shape[axis] = n;
  Array pos = broadcast_to(reshape(arange(0, double(n), 1, Dtype::int64, s), shape, s), x.shape(), s);
  Array hit = binary(BinaryOp::equal, x, out, s);
  // The latest position (in scan order) where the running extreme was reached.
  if (!reverse)
    return scan(ScanOp::max, where(hit, pos, scalar_array(int64_t(-1), Dtype::int64), s), axis, false, true,
                std::nullopt, s);
  return scan(ScanOp::min, where(hit, pos, scalar_array(n, Dtype::int64), s), axis, true, true, std::nullopt, s);
}

// a moved one step along `axis` (later: out[i] = a[i - 1], else out[i] = a[i + 1]), zero-filled.
// An exclusive scan is the inclusive one moved one step in scan order.
Array shift(const Array& a, int axis, bool later) {
  int64_t n = a.shape(axis);
  if (n == 0) return a;
  Shape start(a.ndim(), 0), stop = a.shape(), step(a.ndim(), 1);
  (later ? stop[axis] : start[axis]) = later ? n - 1 : 1;
  std::vector<std::pair<int64_t, int64_t>> width(a.ndim(), {0, 0});
  width[axis] = later ? std::pair<int64_t, int64_t>{1, 0} : std::pair<int64_t, int64_t>{0, 1};
  return pad(slice(a, start, stop, step, a.stream()), width, "constant", scalar_array(int64_t(0), a.dtype()),
             a.stream());
}

struct FirstZero {
  Array first;   // the first zero along the axis, in scan order
  Array x_one;   // x with that first zero replaced by 1
  Array x_safe;  // x with every zero replaced by 1: a divisor where x is not 0
};
FirstZero first_zero(const Array& x, int axis, bool reverse) {
  Stream s = x.stream();
  Array one = scalar_array(int64_t(1), x.dtype());
  Array zero = binary(BinaryOp::equal, x, scalar_array(int64_t(0), x.dtype()), s);
  Array seen = scan(ScanOp::sum, astype(zero, Dtype::int32, s), axis, reverse, true, std::nullopt, s);
  Array first =
      binary(BinaryOp::logical_and, zero, binary(BinaryOp::equal, seen, scalar_array(int64_t(1), Dtype::int32), s), s);
  return {first, where(first, one, x, s), where(zero, one, x, s)};
}
}  // namespace

std::vector<Array> Scan::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                             const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& out = outputs[0];
  Stream s = x.stream();
  Array g = astype(cotangents[0], out.dtype(), s);
  switch (op_) {
    case ScanOp::sum: return {cumsum_along(g, axis_, !reverse_, inclusive_)};
    case ScanOp::prod: {
      // Before the first zero, d out_i / d x_j = out_i / x_j; after it, every product holds that zero.
      FirstZero z = first_zero(astype(x, out.dtype(), s), axis_, reverse_);
      Array others = div(cumsum_along(mul(g, out), axis_, !reverse_, inclusive_), z.x_safe);
      Array without_first = scan(ScanOp::prod, z.x_one, axis_, reverse_, inclusive_, std::nullopt, s);
      Array at_first = cumsum_along(mul(g, without_first), axis_, !reverse_, inclusive_);
      return {add(others, where(z.first, at_first, zeros_like(at_first), s))};
    }
    case ScanOp::logaddexp:
      return {mul(unary(UnaryOp::exp, x, s),
                  cumsum_along(mul(g, unary(UnaryOp::exp, neg(out), s)), axis_, !reverse_, inclusive_))};
    case ScanOp::max:
    case ScanOp::min: {
      // An exclusive output i is the inclusive output one step earlier in scan order.
      Array inc = inclusive_ ? out : scan(op_, x, axis_, reverse_, true, std::nullopt, s);
      Array g_inc = inclusive_ ? g : shift(g, axis_, reverse_);
      Array src = extreme_source(x, inc, axis_, reverse_);
      return {put_along_axis(zeros_like(x), src, g_inc, axis_, s, ScatterOp::add)};
    }
  }
}

std::vector<Array> Scan::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                             const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& out = outputs[0];
  Stream s = x.stream();
  Array t = astype(tangents[0], out.dtype(), s);
  switch (op_) {
    case ScanOp::sum: return {cumsum_along(t, axis_, reverse_, inclusive_)};
    case ScanOp::prod: {
      // out is 0 wherever a zero is in the product, and then only the first zero's tangent counts.
      FirstZero z = first_zero(astype(x, out.dtype(), s), axis_, reverse_);
      Array no_zero = mul(out, cumsum_along(div(t, z.x_safe), axis_, reverse_, inclusive_));
      Array first_t = cumsum_along(where(z.first, t, zeros_like(t), s), axis_, reverse_, inclusive_);
      return {add(no_zero, mul(scan(ScanOp::prod, z.x_one, axis_, reverse_, inclusive_, std::nullopt, s), first_t))};
    }
    case ScanOp::logaddexp:
      return {mul(unary(UnaryOp::exp, neg(out), s),
                  cumsum_along(mul(t, unary(UnaryOp::exp, x, s)), axis_, reverse_, inclusive_))};
    case ScanOp::max:
    case ScanOp::min: {
      Array inc = inclusive_ ? out : scan(op_, x, axis_, reverse_, true, std::nullopt, s);
      Array t_inc = take_along_axis(t, extreme_source(x, inc, axis_, reverse_), axis_, s);
      return {inclusive_ ? t_inc : shift(t_inc, axis_, !reverse_)};
    }
  }
}

}  // namespace nuvec
