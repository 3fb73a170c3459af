// Differentiation rules of the reduction family.
#include <algorithm>

#include "core/backend.h"
#include "core/ops.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/reduce.h"

namespace nuvec {
using namespace grad;

namespace {
// `a` (shaped like the reduction's output) with the reduced axes back as size 1, broadcast to x.
Array spread(const Array& a, const Array& x, const std::vector<int>& axes) {
  Shape keep = x.shape();
  for (int ax : axes) keep[ax] = 1;
  return broadcast_like(reshape(a, keep, x.stream()), x, x.stream());
}

// For each element, the product of the other elements it was reduced with: exclusive products
// from both sides along the reduced axes (flattened into one), exact where elements are zero.
Array product_of_others(const Array& x, const std::vector<int>& axes) {
  Stream s = x.stream();
  std::vector<int> perm;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  Shape kept;
  for (int d : perm) kept.push_back(x.shape(d));
  perm.insert(perm.end(), axes.begin(), axes.end());
  Shape flat = kept;
  flat.push_back(-1);
  Array r = reshape(transpose(x, perm, s), flat, s);
  Array before = scan(ScanOp::prod, r, -1, false, false, std::nullopt, s);
  Array after = scan(ScanOp::prod, r, -1, true, false, std::nullopt, s);
  Shape moved;
  for (int d : perm) moved.push_back(x.shape(d));
  std::vector<int> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = int(i);
  return transpose(reshape(mul(before, after), moved, s), inverse, s);
}

// d out / d x of a reduction, shaped like x.
std::optional<Array> reduce_partial(ReduceOp op, const Array& x, const Array& out, const std::vector<int>& axes) {
  Stream s = x.stream();
  switch (op) {
    case ReduceOp::sum: return filled_like(x, scalar_array(int64_t(1), out.dtype()), s);
    case ReduceOp::prod: return product_of_others(astype(x, out.dtype(), s), axes);
    case ReduceOp::max:
    case ReduceOp::min: {
      // Ties share the gradient equally.
      Array hit = astype(binary(BinaryOp::equal, x, spread(out, x, axes), s), out.dtype(), s);
      return div(hit, spread(sum(hit, axes, true, s), x, axes));
    }
    case ReduceOp::all:
    case ReduceOp::any: return std::nullopt;  // boolean results: no derivative
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
  // all / any: zeros in the tangent's dtype, as MLX (not the bool of the output)
  if (!d) return {filled_like(out, scalar_array(int64_t(0), tangents[0].dtype()), out.stream())};
  Array t = sum(mul(astype(tangents[0], out.dtype(), x.stream()), *d), axes_, true, x.stream());
  return {reshape(t, out.shape(), x.stream())};
}

double Count::value(const Shape& shape) const {
  int64_t n = 1;
  for (int a : axes_) n *= shape[size_t(a)];
  return double(std::max<int64_t>(n - ddof_, 0));
}

namespace {
// On every device: the count is a constant of the input's shape (its values are never read).
void count_kernel(const Count& c, const std::vector<Array>& in, std::vector<Array>& out) {
  Array v = scalar_array(c.value(in[0].shape()), out[0].dtype());
  out[0].set_data(v.buffer(), v.strides(), v.offset());
}
const bool count_registered = add_device_free_kernel<Count, count_kernel>();
}  // namespace

std::vector<Array> Count::vjp(const std::vector<Array>& primals, const std::vector<Array>&, const std::vector<int>&,
                              const std::vector<Array>&) {
  return {zeros_like(primals[0])};
}
std::vector<Array> Count::jvp(const std::vector<Array>&, const std::vector<Array>&, const std::vector<int>&,
                              const std::vector<Array>& outputs) {
  return {zeros_like(outputs[0])};
}

std::vector<Array> ArgReduce::vjp(const std::vector<Array>& primals, const std::vector<Array>&, const std::vector<int>&,
                                  const std::vector<Array>&) {
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
std::vector<Array> Softmax::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                const std::vector<Array>& outputs) {
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
