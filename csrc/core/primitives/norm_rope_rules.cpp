// Differentiation and vmap rules of norm_rope, through its parts: y = rope(rms_norm(x, w)) and
// the cache with y's rows written at offset_b + t. The cotangent of y gains the cache
// cotangent's rows there (which the new cache's own cotangent then loses), goes back through
// the rotation (its transpose) and RMS norm's rule; the jvp pushes tangents the same way.
#include "core/ops.h"
#include "core/primitives/fast_norms.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/rope.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

namespace {

// The cache row of each of y's elements: offset_b + t, broadcast to y's shape (int32).
Array cache_rows(const RopeParams& p, const std::vector<Array>& primals, size_t ci, const Shape& y_shape) {
  Stream s = primals[0].stream();
  int64_t t = y_shape[y_shape.size() - 2];
  Shape col(y_shape.size(), 1);
  col[col.size() - 2] = t;
  Array rows = reshape(arange(0, double(t), 1, Dtype::int32, s), col, s);
  if (p.has_offsets) {
    Array o = primals[ci + 1];
    Shape lead(y_shape.size(), 1);
    if (o.ndim() == 1) lead[0] = o.shape(0);
    rows = binary(BinaryOp::add, rows, reshape(o, lead, s), s);
  } else {
    rows = binary(BinaryOp::add, rows, scalar_array(p.offset, Dtype::int32), s);
  }
  return broadcast_to(rows, y_shape, s);
}

// rope(x) (or its transpose) with the primitive's offsets and freqs.
Array rotate(const RopeParams& p, const Array& x, const std::vector<Array>& primals, size_t ci, bool invert) {
  RopeParams q = p;
  q.inverse = p.inverse != invert;
  std::vector<Array> in{x};
  in.insert(in.end(), primals.begin() + long(ci) + 1, primals.end());
  Shape shape = x.shape();
  Dtype dt = x.dtype();
  return Array::lazy(std::move(shape), dt, std::make_shared<Rope>(q), std::move(in), x.stream());
}

void check_argnums(const std::vector<int>& argnums, size_t ci) {
  for (int a : argnums)
    if (size_t(a) > ci) throw OpError("norm_rope", "the offset and freqs are not differentiable");
}

}  // namespace

std::vector<Array> NormRope::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  size_t ci = cache_index();
  check_argnums(argnums, ci);
  Stream s = outputs[0].stream();
  Array rows = cache_rows(p_, primals, ci, outputs[0].shape());
  Array gy = grad::add(astype(cotangents[0], Dtype::float32, s),
                       astype(take_along_axis(cotangents[1], rows, -2, s), Dtype::float32, s));
  Array gn = rotate(p_, gy, primals, ci, true);
  std::vector<Array> norm_in{primals[0]};
  if (weighted_) norm_in.push_back(primals[1]);
  std::vector<int> norm_args;
  for (int a : argnums)
    if (size_t(a) < ci) norm_args.push_back(a);
  RowNorm norm(NormKind::rms, weighted_, false, eps_);
  std::vector<Array> g = norm.vjp(norm_in, {gn}, norm_args, {});
  std::vector<Array> out;
  size_t k = 0;
  for (int a : argnums) {
    if (size_t(a) < ci) {
      out.push_back(g[k++]);
      continue;
    }
    Array zeros = grad::zeros_like(outputs[0]);  // the overwritten rows pass nothing back
    out.push_back(put_along_axis(cotangents[1], rows, astype(zeros, cotangents[1].dtype(), s), -2, s));
  }
  return out;
}

std::vector<Array> NormRope::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  size_t ci = cache_index();
  check_argnums(argnums, ci);
  Stream s = outputs[0].stream();
  std::vector<Array> norm_in{primals[0]};
  if (weighted_) norm_in.push_back(primals[1]);
  std::vector<int> norm_args;
  std::vector<Array> norm_tangents;
  std::optional<Array> tc;
  for (size_t k = 0; k < argnums.size(); ++k) {
    if (size_t(argnums[k]) < ci)
      norm_args.push_back(argnums[k]), norm_tangents.push_back(tangents[k]);
    else
      tc = tangents[k];
  }
  Array ty = grad::zeros_like(outputs[0]);
  if (!norm_args.empty()) {
    RowNorm norm(NormKind::rms, weighted_, false, eps_);
    Array tn = norm.jvp(norm_in, norm_tangents, norm_args, {outputs[0]})[0];
    ty = rotate(p_, tn, primals, ci, false);
  }
  Array base = tc ? astype(*tc, outputs[1].dtype(), s) : grad::zeros_like(outputs[1]);
  Array rows = cache_rows(p_, primals, ci, outputs[0].shape());
  return {ty, put_along_axis(base, rows, ty, -2, s)};
}

// x and the cache (n, B, ...) fold to (n * B, ...), the offsets to (n * B,), as rope's rule.
batching::Result NormRope::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                const std::vector<Array>& outputs) {
  using namespace batching;
  Stream s = outputs[0].stream();
  size_t ci = cache_index();
  if ((weighted_ && axes[1] >= 0) || (p_.has_freqs && axes.back() >= 0))
    throw OpError("vmap", "norm_rope: the weight and freqs cannot be batched");
  int64_t n = batch_size(inputs, axes);
  auto fold = [&](size_t i) {
    Array a = front_or_repeated(inputs[i], axes[i], n);
    Shape f(a.shape().begin() + 1, a.shape().end());
    f[0] *= n;
    return reshape(a, f, s);
  };
  std::vector<Array> in(inputs.begin(), inputs.end());
  in[0] = fold(0);
  in[ci] = fold(ci);
  int64_t b = outputs[0].shape(0);
  if (p_.has_offsets) {
    Array o = inputs[ci + 1];
    o = axes[ci + 1] < 0 ? expand_dims(o, {0}, s) : to_front(o, axes[ci + 1]);
    if (o.ndim() == 1) o = expand_dims(o, {1}, s);
    in[ci + 1] = reshape(broadcast_to(o, {n, b}, s), {n * b}, s);
  }
  Shape ys = in[0].shape(), cs = in[ci].shape();
  std::vector<Array> r = Array::lazy_multi({ys, cs}, {outputs[0].dtype(), outputs[1].dtype()},
                                           std::make_shared<NormRope>(p_, eps_, weighted_), std::move(in), s);
  return {{reshape(r[0], with_batch(outputs[0].shape(), n), s), reshape(r[1], with_batch(outputs[1].shape(), n), s)},
          {0, 0}};
}

}  // namespace nuvec
