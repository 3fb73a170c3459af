// cross_entropy's op and its rules: the gradient is (softmax(logits) - onehot(target)) times the
// cotangent, in float32 ops; vmap moves both batch axes to the front.
#include "core/primitives/fast_loss.h"

#include <string>

#include "core/ops.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

Array cross_entropy(const Array& logits, const Array& targets, Stream s) {
  const char* op = "cross_entropy";
  if (!is_floating(logits.dtype()))
    throw OpError(op, std::string("Received unsupported logits type ") + name_of(logits.dtype()) + ".");
  if (!is_integer(targets.dtype()))
    throw OpError(op, std::string("targets must be integer class indices but got ") + name_of(targets.dtype()) + ".");
  Shape rows(logits.shape().begin(), logits.shape().end() - (logits.ndim() ? 1 : 0));
  if (logits.ndim() == 0 || targets.shape() != rows)
    throw OpError(op, "targets shape " + shape_str(targets.shape()) + " does not match logits shape " +
                          shape_str(logits.shape()) + " with the last axis removed.");
  Array x = logits.dtype() == Dtype::float64 ? astype(logits, Dtype::float32, s) : logits;
  return Array::lazy(rows, Dtype::float32, std::make_shared<CrossEntropy>(), {x, astype(targets, Dtype::int32, s)}, s);
}

std::vector<Array> CrossEntropy::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                     const std::vector<int>& argnums, const std::vector<Array>&) {
  Stream s = cotangents[0].stream();
  const Array& x = primals[0];
  std::vector<Array> out;
  for (int a : argnums) {
    if (a != 0) throw OpError("cross_entropy", "the targets are not differentiable");
    Array p = softmax(astype(x, Dtype::float32, s), std::vector<int>{-1}, true, s);
    Array classes = arange(0, double(x.shape(-1)), 1, Dtype::int32, s);
    Array hot = astype(binary(BinaryOp::equal, expand_dims(primals[1], {-1}, s), classes, s), Dtype::float32, s);
    Array g = grad::mul(grad::sub(p, hot), expand_dims(cotangents[0], {-1}, s));
    out.push_back(astype(g, x.dtype(), s));
  }
  return out;
}

// d loss = sum(softmax * dx) - dx[target].
std::vector<Array> CrossEntropy::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                     const std::vector<int>& argnums, const std::vector<Array>&) {
  for (int a : argnums)
    if (a != 0) throw OpError("cross_entropy", "the targets are not differentiable");
  Stream s = tangents[0].stream();
  Array x = astype(primals[0], Dtype::float32, s), t = astype(tangents[0], Dtype::float32, s);
  Array p = softmax(x, std::vector<int>{-1}, true, s);
  Array picked = squeeze(take_along_axis(t, expand_dims(primals[1], {-1}, s), -1, s), std::vector<int>{-1}, s);
  return {grad::sub(sum(grad::mul(p, t), std::vector<int>{-1}, false, s), picked)};
}

batching::Result CrossEntropy::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                    const std::vector<Array>& outputs) {
  using namespace batching;
  int64_t n = batch_size(inputs, axes);
  Array x = front_or_repeated(inputs[0], axes[0], n), t = front_or_repeated(inputs[1], axes[1], n);
  return {{cross_entropy(x, t, outputs[0].stream())}, {0}};
}

}  // namespace nuvec
