// Differentiation rules of the scans. A cumulative sum's cotangent is the cumulative sum of the
// cotangents the other way; products and logcumsumexp reduce to it; cummax/cummin route each
// output's cotangent to the element that set the running extreme.
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
}  // namespace

std::vector<Array> Scan::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                             const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& out = outputs[0];
  Stream s = x.stream();
  Array g = astype(cotangents[0], out.dtype(), s);
  switch (op_) {
    case ScanOp::sum: return {cumsum_along(g, axis_, !reverse_, inclusive_)};
    case ScanOp::prod: return {div(cumsum_along(mul(g, out), axis_, !reverse_, inclusive_), x)};
    case ScanOp::logaddexp:
      return {mul(unary(UnaryOp::exp, x, s),
                  cumsum_along(mul(g, unary(UnaryOp::exp, neg(out), s)), axis_, !reverse_, inclusive_))};
    case ScanOp::max:
    case ScanOp::min: {
      if (!inclusive_) throw OpError(name(), "has no vjp rule for exclusive scans");
      Array src = extreme_source(x, out, axis_, reverse_);
      return {put_along_axis(zeros_like(x), src, g, axis_, s, ScatterOp::add)};
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
    case ScanOp::prod: return {mul(out, cumsum_along(div(t, x), axis_, reverse_, inclusive_))};
    case ScanOp::logaddexp:
      return {mul(unary(UnaryOp::exp, neg(out), s),
                  cumsum_along(mul(t, unary(UnaryOp::exp, x, s)), axis_, reverse_, inclusive_))};
    case ScanOp::max:
    case ScanOp::min: {
      if (!inclusive_) throw OpError(name(), "has no jvp rule for exclusive scans");
      return {take_along_axis(t, extreme_source(x, out, axis_, reverse_), axis_, s)};
    }
  }
}

}  // namespace nuvec
