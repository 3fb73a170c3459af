// vmap rules of the layout family: the batch axis goes in front and the view is taken of each
// example's axes behind it, so the result stays a view wherever the unbatched one was.
#include <numeric>

#include "core/primitives/shape.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Slice::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  Array x = to_front(inputs[0], axes[0]);
  Shape start = with_batch(start_, 0), step = with_batch(step_, 1);
  return {{Array::lazy(with_batch(outputs[0].shape(), x.shape(0)), x.dtype(),
                       std::make_shared<Slice>(std::move(start), std::move(step)), {x}, x.stream())},
          {0}};
}

Result SliceUpdate::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                         const std::vector<Array>& outputs) {
  // Both operands batched in front (an unbatched one repeated), the window spanning the batch.
  int64_t n = axes[0] >= 0 ? inputs[0].shape(axes[0]) : inputs[1].shape(axes[1]);
  Array x = front_or_repeated(inputs[0], axes[0], n), u = front_or_repeated(inputs[1], axes[1], n);
  Shape start = with_batch(start_, 0), step = with_batch(step_, 1);
  return {{Array::lazy(x.shape(), x.dtype(), std::make_shared<SliceUpdate>(std::move(start), std::move(step)), {x, u},
                       x.stream())},
          {0}};
}

Result DynamicSliceUpdate::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  const int64_t n = batch_size(inputs, axes);
  Array x = front_or_repeated(inputs[0], axes[0], n), u = front_or_repeated(inputs[1], axes[1], n);
  std::vector<int> shifted(axes_);
  for (int& a : shifted) ++a;
  if (axes[2] < 0)  // one start for every example: one window spanning the batch
    return {{slice_update_dynamic(x, u, inputs[2], shifted, s)}, {0}};
  // A start per example: each example's window as a scatter.
  std::vector<int> every(size_t(x.ndim()));
  std::iota(every.begin(), every.end(), 0);
  return {{scatter(x, window_indices(x, to_front(inputs[2], axes[2]), shifted, u.shape(), true, s), u, every,
                   ScatterOp::set, s)},
          {0}};
}

Result Transpose::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  int b = axes[0];
  // One transpose: the batch axis first, then each example's axes in perm's order.
  std::vector<int> perm{b};
  for (int p : perm_) perm.push_back(shifted(p, b));
  return {{transpose(x, perm, x.stream())}, {0}};
}

Result Broadcast::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Array x = front_aligned(inputs[0], axes[0], out.ndim());
  return {{broadcast_to(x, with_batch(out.shape(), x.shape(0)), x.stream())}, {0}};
}

Result BroadcastLike::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                           const std::vector<Array>& outputs) {
  // Inside vmap shapes are fixed: a broadcast to the batched shape (like's batch only sets n).
  const Array& out = outputs[0];
  Array x = axes[0] >= 0 ? front_aligned(inputs[0], axes[0], out.ndim()) : expand_dims(inputs[0], {0}, out.stream());
  return {{broadcast_to(x, with_batch(out.shape(), batch_size(inputs, axes)), x.stream())}, {0}};
}

Result Reshape::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                     const std::vector<Array>& outputs) {
  Array x = to_front(inputs[0], axes[0]);
  return {{reshape(x, with_batch(outputs[0].shape(), x.shape(0)), x.stream())}, {0}};
}

Result ViewDtype::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  // In front, the batch axis never becomes the last axis, whose bytes a view regroups.
  Array x = to_front(inputs[0], axes[0]);
  return {{view(x, outputs[0].dtype(), x.stream())}, {0}};
}

Result AsStrided::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  // as_strided reads row-major data, in which each example's follows the previous one's.
  Array x = to_front(inputs[0], axes[0]);
  int64_t n = x.shape(0), each = n ? x.size() / n : 0;
  return {{as_strided(x, with_batch(outputs[0].shape(), n), with_batch(strides_, each), offset_, x.stream())}, {0}};
}

Result Diagonal::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  Array x = to_front(inputs[0], axes[0]);
  return {{diagonal(x, offset_, axis1_ + 1, axis2_ + 1, x.stream())}, {0}};
}

Result Contiguous::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  return {{contiguous(inputs[0], inputs[0].stream())}, {axes[0]}};
}

}  // namespace nuvec
