// Differentiation and vmap rules of rope. The rotation is linear in x and orthogonal, so the
// jvp rotates the tangent and the vjp rotates the cotangent back (the negated angles).
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

}  // namespace

std::vector<Array> Rope::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                             const std::vector<int>& argnums, const std::vector<Array>&) {
  only_x(argnums);
  return {rotate(p_, cotangents[0], primals, true)};
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
    if (axes[1] < 0) o = expand_dims(o, {0}, s);  // (1,) or (1, B)
    else o = to_front(o, axes[1]);                // (n,) or (n, B)
    if (o.ndim() == 1) o = expand_dims(o, {1}, s);
    in.push_back(reshape(broadcast_to(o, {n, b}, s), {n * b}, s));
  }
  if (p_.has_freqs) in.push_back(inputs.back());
  Shape shape = in[0].shape();  // before `in` moves into the node
  Array y = Array::lazy(std::move(shape), outputs[0].dtype(), std::make_shared<Rope>(p_), std::move(in), s);
  return {{reshape(y, with_batch(outputs[0].shape(), n), s)}, {0}};
}

}  // namespace nuvec
