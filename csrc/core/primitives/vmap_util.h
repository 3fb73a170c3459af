// Small helpers the vmap rules share. A batched array carries one extra axis (its batch axis);
// most rules move it to the front and apply the operation with shifted axes.
#pragma once
#include <utility>
#include <vector>

#include "core/ops.h"

namespace nuvec::batching {

using Result = std::pair<std::vector<Array>, std::vector<int>>;

// The batch size: the size of the batch axis of any batched input.
inline int64_t batch_size(const std::vector<Array>& inputs, const std::vector<int>& axes) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (axes[i] >= 0) return inputs[i].shape(axes[i]);
  throw OpError("vmap", "a rule was applied with no batched input");
}

// `shape` with a batch axis of size n inserted at `axis`.
inline Shape with_batch(Shape shape, int64_t n, int axis = 0) {
  shape.insert(shape.begin() + axis, n);
  return shape;
}

inline Array to_front(const Array& x, int axis) { return axis > 0 ? moveaxis(x, axis, 0, x.stream()) : x; }

// x with its batch axis in front, then size-1 axes so that one example has `rank` axes: it
// broadcasts against other examples' arrays of that rank as the unbatched array did.
inline Array front_aligned(const Array& x, int axis, int rank) {
  Array f = to_front(x, axis);
  if (f.ndim() - 1 == rank) return f;
  Shape shape(rank + 1, 1);
  shape[0] = f.shape(0);
  for (int d = 1; d < f.ndim(); ++d) shape[rank + 1 - (f.ndim() - d)] = f.shape(d);
  return reshape(f, shape, x.stream());
}

// x (unbatched) repeated n times along a new front axis (a broadcast view).
inline Array repeated(const Array& x, int64_t n) {
  return broadcast_to(expand_dims(x, {0}, x.stream()), with_batch(x.shape(), n), x.stream());
}

// x with its batch axis in front, made batched (repeated) if it was not.
inline Array front_or_repeated(const Array& x, int axis, int64_t n) {
  return axis < 0 ? repeated(x, n) : to_front(x, axis);
}

// A new node of primitive p on `inputs`, with `like`'s dtype and stream.
inline Array remake(Primitive& p, Shape shape, const Array& like, std::vector<Array> inputs) {
  return Array::lazy(std::move(shape), like.dtype(), p.shared_from_this(), std::move(inputs), like.stream());
}

// The axis `axis` of one example, in an array batched at `batch`.
inline int shifted(int axis, int batch) { return axis + (axis >= batch ? 1 : 0); }

}  // namespace nuvec::batching
