// Layout ops: views sharing the input's buffer wherever strides allow.
#include "core/ops/shape.h"

#include <algorithm>
#include <string>

#include "core/ops.h"
#include "core/primitives/shape.h"

namespace nuvec {

Array reshape(const Array& x, Shape shape, Stream s) {
  int infer = -1;
  auto requested = [&] {  // formatted on the error path only
    Shape r = shape;
    if (infer >= 0) r[infer] = -1;
    return shape_str(r);
  };
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw OpError("reshape", "only one dimension can be -1");
      infer = int(i);
    } else if (shape[i] < 0) {
      throw OpError("reshape", "negative dimensions are not allowed");
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.size() % known != 0)
      throw OpError("reshape",
                    "cannot reshape an array of size " + std::to_string(x.size()) + " into shape " + requested());
    shape[infer] = x.size() / known;
  }
  check_shape(shape, "reshape");
  if (shape_size(shape) != x.size())
    throw OpError("reshape",
                  "cannot reshape an array of size " + std::to_string(x.size()) + " into shape " + requested());
  if (shape == x.shape()) return x;
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<Reshape>(), {x}, s);
}

Array transpose(const Array& x, std::vector<int> perm, Stream s) {
  int nd = x.ndim();
  if (perm.empty())
    for (int i = nd - 1; i >= 0; --i) perm.push_back(i);
  if (int(perm.size()) != nd)
    throw OpError("transpose", "axes must have one entry per dimension (" + std::to_string(nd) + ")");
  std::vector<bool> seen(nd, false);
  Shape shape(nd);
  for (int i = 0; i < nd; ++i) {
    perm[i] = normalize_axis(perm[i], nd, "transpose");
    if (seen[perm[i]]) throw OpError("transpose", "repeated axis in axes");
    seen[perm[i]] = true;
    shape[i] = x.shape(perm[i]);
  }
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<Transpose>(std::move(perm)), {x}, s);
}

Array broadcast_to(const Array& x, const Shape& shape, Stream s) {
  check_shape(shape, "broadcast_to");
  if (x.shape() == shape) return x;
  Shape b = broadcast_shapes(x.shape(), shape, "broadcast_to");
  if (b != shape) throw OpError("broadcast_to", "the array cannot be broadcast to the requested shape");
  return Array::lazy(shape, x.dtype(), std::make_shared<Broadcast>(), {x}, s);
}

Array broadcast_like(const Array& x, const Array& like, Stream s) {
  if (!(like.traced() & replay_only_trace_bits())) return broadcast_to(x, like.shape(), s);
  Shape b = broadcast_shapes(x.shape(), like.shape(), "broadcast_to");
  if (b != like.shape()) throw OpError("broadcast_to", "the array cannot be broadcast to the requested shape");
  return Array::lazy(b, x.dtype(), std::make_shared<BroadcastLike>(), {x, like}, s);
}

Array filled_like(const Array& a, const Array& value, Stream s, const char* op) {
  if (a.traced() & replay_only_trace_bits()) return broadcast_like(value, a, s);
  return full(a.shape(), value, std::nullopt, s, op);
}

Array slice(const Array& x, const Shape& start, const Shape& stop, const Shape& step, Stream s) {
  int nd = x.ndim();
  if (int(start.size()) != nd || int(stop.size()) != nd || int(step.size()) != nd)
    throw OpError("slice", "start, stop and step need one entry per dimension");
  bool whole = true;  // the whole array: no node to record
  for (int i = 0; i < nd; ++i) whole &= start[i] == 0 && stop[i] == x.shape(i) && step[i] == 1;
  if (whole) return x;
  Shape shape(nd);
  for (int i = 0; i < nd; ++i) {
    if (step[i] == 0) throw OpError("slice", "slice step cannot be zero");
    int64_t n =
        step[i] > 0 ? (stop[i] - start[i] + step[i] - 1) / step[i] : (start[i] - stop[i] - step[i] - 1) / -step[i];
    shape[i] = std::max<int64_t>(n, 0);
  }
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<Slice>(start, step), {x}, s);
}

Array slice_update(const Array& x, const Array& update, const Shape& start, const Shape& stop, const Shape& step,
                   Stream s) {
  int nd = x.ndim();
  if (int(start.size()) != nd || int(stop.size()) != nd || int(step.size()) != nd)
    throw OpError("slice_update", "start, stop and step need one entry per dimension");
  Shape window(nd);
  for (int i = 0; i < nd; ++i) {
    if (step[i] <= 0) throw OpError("slice_update", "steps must be positive");
    if (start[i] < 0 || stop[i] > x.shape(i)) throw OpError("slice_update", "the window lies outside the array");
    window[i] = std::max<int64_t>((stop[i] - start[i] + step[i] - 1) / step[i], 0);
  }
  if (broadcast_shapes(window, update.shape(), "slice_update") != window)
    throw OpError("slice_update", "the update cannot be broadcast to the window's shape");
  Array u = astype(broadcast_to(update, window, s), x.dtype(), s);
  if (u.size() == 0) return x;
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<SliceUpdate>(start, step), {x, u}, s);
}

Array view(const Array& x, Dtype dtype, Stream s) {
  if (dtype == x.dtype()) return x;
  size_t from = x.itemsize(), to = size_of(dtype);
  Shape shape = x.shape();
  if (from != to) {
    if (shape.empty()) throw OpError("view", "a 0-d array cannot change its itemsize");
    int64_t bytes = shape.back() * int64_t(from);
    if (bytes % int64_t(to) != 0)
      throw OpError("view", "the last dimension's byte size must be divisible by the new itemsize");
    shape.back() = bytes / int64_t(to);
  }
  return Array::lazy(std::move(shape), dtype, std::make_shared<ViewDtype>(), {x}, s);
}

}  // namespace nuvec
