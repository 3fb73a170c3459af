// Differentiation rules of the reduction family.
#include "core/primitives/grad_util.h"
#include "core/primitives/reduce.h"

namespace nuvec {
using namespace grad;

namespace {
// `a` (shaped like the reduction's output) with the reduced axes back as size 1, broadcast to x.
Array spread(const Array& a, const Array& x, const std::vector<int>& axes) {
  Shape keep = x.shape();
  for (int ax : axes) keep[ax] = 1;
  return broadcast_to(reshape(a, keep, x.stream()), x.shape(), x.stream());
}

// d out / d x of a reduction, shaped like x.
std::optional<Array> reduce_partial(ReduceOp op, const Array& x, const Array& out, const std::vector<int>& axes) {
  Stream s = x.stream();
  switch (op) {
    case ReduceOp::sum: return full(x.shape(), scalar_array(int64_t(1), out.dtype()), std::nullopt, s);
    case ReduceOp::prod: return div(spread(out, x, axes), astype(x, out.dtype(), s));
    case ReduceOp::max:
    case ReduceOp::min: {
      // Ties share the gradient equally.
      Array hit = astype(binary(BinaryOp::equal, x, spread(out, x, axes), s), out.dtype(), s);
      return div(hit, spread(sum(hit, axes, true, s), x, axes));
    }
    default: return std::nullopt;  // all / any
  }
}
}  // namespace

std::vector<Array> Reduce::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  auto d = reduce_partial(op_, x, outputs[0], axes_);
  if (!d) return {zeros_like(x)};
  return {astype(mul(spread(cotangents[0], x, axes_), *d), x.dtype(), x.stream())};
}
std::vector<Array> Reduce::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& out = outputs[0];
  auto d = reduce_partial(op_, x, out, axes_);
  if (!d) return {zeros_like(out)};
  Array t = sum(mul(astype(tangents[0], out.dtype(), x.stream()), *d), axes_, true, x.stream());
  return {reshape(t, out.shape(), x.stream())};
}

std::vector<Array> ArgReduce::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                  const std::vector<int>&, const std::vector<Array>&) {
  return {zeros_like(primals[0])};
}
std::vector<Array> ArgReduce::jvp(const std::vector<Array>&, const std::vector<Array>&, const std::vector<int>&,
                                  const std::vector<Array>& outputs) {
  return {zeros_like(outputs[0])};
}

std::vector<Array> Softmax::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& y = outputs[0];
  Stream s = y.stream();
  Array g = astype(cotangents[0], y.dtype(), s);
  Array dot = sum(mul(g, y), std::vector<int>{-1}, true, s);
  return {astype(mul(y, sub(g, dot)), primals[0].dtype(), s)};
}
std::vector<Array> Softmax::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& y = outputs[0];
  Stream s = y.stream();
  Array t = astype(tangents[0], y.dtype(), s);
  return {mul(y, sub(t, sum(mul(t, y), std::vector<int>{-1}, true, s)))};
}

std::vector<Array> LogSumExp::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  Stream s = x.stream();
  Array g = expand_dims(astype(cotangents[0], x.dtype(), s), {-1}, s);
  Array p = unary(UnaryOp::exp, sub(x, expand_dims(outputs[0], {-1}, s)), s);
  return {mul(g, p)};
}
std::vector<Array> LogSumExp::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  Stream s = x.stream();
  Array p = unary(UnaryOp::exp, sub(x, expand_dims(outputs[0], {-1}, s)), s);
  return {sum(mul(astype(tangents[0], x.dtype(), s), p), std::vector<int>{-1}, false, s)};
}

}  // namespace nuvec
