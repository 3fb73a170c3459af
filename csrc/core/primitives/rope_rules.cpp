// Differentiation and vmap rules of rope. The rotation is linear in x and orthogonal, so the
// jvp rotates the tangent and the vjp rotates the cotangent back (the negated angles); freqs
// get the angles' derivative (their jvp is not provided).
#include "core/ops.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/rope.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

namespace {

Array rotate(const RopeParams& p, const Array& x, const std::vector<Array>& primals, bool invert) {
  RopeParams q = p;
  q.inverse = p.inverse != invert;
  std::vector<Array> in(primals.begin(), primals.end());
  in[0] = astype(x, primals[0].dtype(), x.stream());
  return Array::lazy(x.shape(), primals[0].dtype(), std::make_shared<Rope>(q), std::move(in), x.stream());
}

void only_x(const std::vector<int>& argnums) {
  for (int a : argnums)
    if (a != 0) throw OpError("rope", "only the input is differentiable (not the offset or freqs)");
}

// The rotated pairs of a (..., D): (first, second) of each pair, (..., dims / 2) each.
std::pair<Array, Array> pairs(const RopeParams& p, const Array& a) {
  Stream s = a.stream();
  Shape start(size_t(a.ndim()), 0), stop = a.shape(), step(size_t(a.ndim()), 1);
  int64_t half = p.dims / 2;
  Shape start2 = start, stop1 = stop;
  if (p.traditional) {
    step.back() = 2, stop1.back() = p.dims, start2.back() = 1;
  } else {
    stop1.back() = half, start2.back() = half;
  }
  Shape stop2 = stop;
  stop2.back() = p.dims;
  return {slice(a, start, stop1, step, s), slice(a, start2, stop2, step, s)};
}

// d loss / d freqs[i]: with theta = pos * scale / f_i, dy1/dtheta = -y2 and dy2/dtheta = y1, so
// sum over rows of (g2*y1 - g1*y2) * pos, times -scale / f_i^2 (negated for the inverse).
Array freqs_grad(const RopeParams& p, const std::vector<Array>& primals, const Array& g, const Array& y) {
  Stream s = g.stream();
  auto [y1, y2] = pairs(p, astype(y, Dtype::float32, s));
  auto [g1, g2] = pairs(p, astype(g, Dtype::float32, s));
  Array dtheta = grad::sub(grad::mul(g2, y1), grad::mul(g1, y2));
  int nd = y.ndim();
  int64_t t = y.shape(-2);
  Shape col(size_t(nd), 1);
  col[size_t(nd - 2)] = t;
  Array pos = reshape(arange(0, double(t), 1, Dtype::float32, s), col, s);
  if (p.has_offsets) {
    const Array& o = primals[1];
    Shape lead(size_t(nd), 1);
    if (o.ndim() == 1) lead[0] = o.shape(0);
    pos = grad::add(pos, reshape(astype(o, Dtype::float32, s), lead, s));
  } else {
    pos = grad::add(pos, scalar_array(double(p.offset), Dtype::float32));
  }
  std::vector<int> axes;
  for (int i = 0; i + 1 < nd; ++i) axes.push_back(i);
  Array per_freq = sum(grad::mul(dtheta, pos), axes, false, s);
  const Array& f = primals.back();
  double k = -double(p.scale) * (p.inverse ? -1.0 : 1.0);
  return grad::mul(grad::div(per_freq, grad::mul(f, f)), scalar_array(k, Dtype::float32));
}

}  // namespace

std::vector<Array> Rope::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                             const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> out;
  for (int a : argnums) {
    if (a == 0)
      out.push_back(rotate(p_, cotangents[0], primals, true));
    else if (p_.has_freqs && size_t(a) == primals.size() - 1)
      out.push_back(freqs_grad(p_, primals, cotangents[0], outputs[0]));
    else
      throw OpError("rope", "the offset is not differentiable");
  }
  return out;
}

std::vector<Array> Rope::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                             const std::vector<int>& argnums, const std::vector<Array>&) {
  only_x(argnums);
  return {rotate(p_, tangents[0], primals, false)};
}

// x (n, B, ..., T, D) folds to (n * B, ..., T, D), with the offsets spread to (n, B) and flattened:
// one example's batch row b is row (k, b) of the folded call.
batching::Result Rope::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                            const std::vector<Array>& outputs) {
  using namespace batching;
  Stream s = outputs[0].stream();
  if (p_.has_freqs && axes.back() >= 0) throw OpError("vmap", "rope: freqs cannot be batched");
  int64_t n = batch_size(inputs, axes);
  Array x = front_or_repeated(inputs[0], axes[0], n);
  Shape folded(x.shape().begin() + 1, x.shape().end());
  int64_t b = folded[0];
  folded[0] *= n;
  std::vector<Array> in{reshape(x, folded, s)};
  if (p_.has_offsets) {
    Array o = inputs[1];
    if (axes[1] < 0)
      o = expand_dims(o, {0}, s);  // (1,) or (1, B)
    else
      o = to_front(o, axes[1]);  // (n,) or (n, B)
    if (o.ndim() == 1) o = expand_dims(o, {1}, s);
    in.push_back(reshape(broadcast_to(o, {n, b}, s), {n * b}, s));
  }
  if (p_.has_freqs) in.push_back(inputs.back());
  Shape shape = in[0].shape();  // before `in` moves into the node
  Array y = Array::lazy(std::move(shape), outputs[0].dtype(), std::make_shared<Rope>(p_), std::move(in), s);
  return {{reshape(y, with_batch(outputs[0].shape(), n), s)}, {0}};
}

}  // namespace nuvec
