// Indexing ops built on gather and scatter.
#include "core/ops/indexing.h"

#include <algorithm>
#include <string>

#include "core/ops.h"
#include "core/primitives/shape.h"

namespace nuvec {
namespace {

void check_indices(const Array& x, const std::vector<Array>& indices, const std::vector<int>& axes, const char* op) {
  if (indices.size() != axes.size()) throw OpError(op, "one index array is needed per axis");
  std::vector<bool> seen(x.ndim(), false);
  for (int a : axes) {
    if (a < 0 || a >= x.ndim()) throw OpError(op, "axis " + std::to_string(a) + " is out of bounds", true);
    if (seen[a]) throw OpError(op, "repeated axis");
    seen[a] = true;
  }
  for (const Array& i : indices)
    if (!is_integer(i.dtype())) throw OpError(op, std::string("indices must be integers, got ") + name_of(i.dtype()));
}

Shape index_shape(const std::vector<Array>& indices, const char* op) {
  Shape shape;
  for (const Array& i : indices) shape = broadcast_shapes(shape, i.shape(), op);
  return shape;
}

// Shape of the other axes of x, in order.
Shape rest_shape(const Array& x, const std::vector<int>& axes) {
  Shape rest;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) rest.push_back(x.shape(d));
  return rest;
}

// An index array that walks axis `axis` of a grid of rank `ndim` (for take_along_axis & co).
Array axis_range(int64_t n, int axis, int ndim, Stream s) {
  Shape shape(ndim, 1);
  shape[axis] = n;
  return reshape(arange(0, double(n), 1, Dtype::int64, s), shape, s);
}

// Moves the leading `count` axes of y to start at `pos`.
Array move_leading(const Array& y, int count, int pos, Stream s) {
  if (pos == 0 || count == 0) return y;
  std::vector<int> perm;
  for (int i = count; i < count + pos; ++i) perm.push_back(i);
  for (int i = 0; i < count; ++i) perm.push_back(i);
  for (int i = count + pos; i < y.ndim(); ++i) perm.push_back(i);
  return transpose(y, perm, s);
}

}  // namespace

Array gather(const Array& x, const std::vector<Array>& indices, const std::vector<int>& axes, Stream s) {
  check_indices(x, indices, axes, "gather");
  Shape shape = index_shape(indices, "gather");
  for (int a : axes)
    if (x.shape(a) == 0 && shape_size(shape) > 0) throw OpError("gather", "cannot index into an axis of size 0", true);
  Shape rest = rest_shape(x, axes);
  shape.insert(shape.end(), rest.begin(), rest.end());
  check_shape(shape, "gather");
  std::vector<Array> inputs{x};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<Gather>(axes), std::move(inputs), s);
}

Array scatter(const Array& x, const std::vector<Array>& indices, const Array& updates, const std::vector<int>& axes,
              ScatterOp op, Stream s) {
  check_indices(x, indices, axes, "scatter");
  Shape shape = index_shape(indices, "scatter");
  Shape rest = rest_shape(x, axes);
  shape.insert(shape.end(), rest.begin(), rest.end());
  Array u = broadcast_to(astype(updates, x.dtype(), s), shape, s);
  std::vector<Array> inputs{x, u};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<Scatter>(op, axes), std::move(inputs), s);
}

Array take(const Array& x, const Array& indices, std::optional<int> axis, Stream s) {
  if (!axis) return gather(reshape(x, {-1}, s), {indices}, {0}, s);
  int ax = normalize_axis(*axis, x.ndim(), "take");
  // gather puts the index dimensions first; NumPy puts them where the axis was.
  return move_leading(gather(x, {indices}, {ax}, s), indices.ndim(), ax, s);
}

namespace {
std::vector<Array> along_axis_indices(const Array& x, const Array& indices, int ax, const char* op, Stream s) {
  if (indices.ndim() != x.ndim())
    throw OpError(op, "indices must have as many dimensions as the array (" + std::to_string(x.ndim()) + ")");
  std::vector<Array> idx;
  for (int d = 0; d < x.ndim(); ++d) idx.push_back(d == ax ? indices : axis_range(x.shape(d), d, x.ndim(), s));
  return idx;
}
std::vector<int> all_axes(int ndim) {
  std::vector<int> axes(ndim);
  for (int d = 0; d < ndim; ++d) axes[d] = d;
  return axes;
}
}  // namespace

Array take_along_axis(const Array& x, const Array& indices, std::optional<int> axis, Stream s) {
  if (!axis) return take_along_axis(reshape(x, {-1}, s), reshape(indices, {-1}, s), 0, s);
  int ax = normalize_axis(*axis, x.ndim(), "take_along_axis");
  return gather(x, along_axis_indices(x, indices, ax, "take_along_axis", s), all_axes(x.ndim()), s);
}

Array put_along_axis(const Array& x, const Array& indices, const Array& values, std::optional<int> axis, Stream s,
                     ScatterOp op) {
  if (!axis)
    return reshape(put_along_axis(reshape(x, {-1}, s), reshape(indices, {-1}, s), reshape(values, {-1}, s), 0, s, op),
                   x.shape(), s);
  int ax = normalize_axis(*axis, x.ndim(), "put_along_axis");
  return scatter(x, along_axis_indices(x, indices, ax, "put_along_axis", s), values, all_axes(x.ndim()), op, s);
}

// Index arrays start[k] + arange(size_k), one per axis of x, spread as an outer product; with
// `batched`, x's axis 0 holds examples, each with its own starts (start: (x.shape(0), axes.size())).
std::vector<Array> window_indices(const Array& x, const Array& start, const std::vector<int>& axes, const Shape& sizes,
                                  bool batched, Stream s) {
  const int nd = x.ndim();
  const int64_t b = batched ? x.shape(0) : 1, na = int64_t(axes.size());
  Array starts = astype(reshape(start, {b, na}, s), Dtype::int64, s);
  Shape per_example(size_t(nd), 1);  // a start's shape beside the ranges
  if (batched) per_example[0] = b;
  std::vector<Array> idx;
  for (int d = 0; d < nd; ++d) {
    auto it = std::find(axes.begin(), axes.end(), d);
    Array r = axis_range(batched && d == 0 ? b : sizes[size_t(d)], d, nd, s);
    if (it != axes.end()) {
      const int64_t k = it - axes.begin();
      r = binary(BinaryOp::add, r, reshape(slice(starts, {0, k}, {b, k + 1}, {1, 1}, s), per_example, s), s);
    }
    idx.push_back(r);
  }
  return idx;
}

namespace {
// A dynamic slice's start: one integer per axis of `axes`.
void check_start(const Array& start, size_t axes, const char* op) {
  if (start.size() != int64_t(axes) || start.ndim() > 1)
    throw OpError(op, "start_indices must hold one entry per axis");
  if (!is_integer(start.dtype())) throw OpError(op, "start_indices must be integers");
}
std::vector<int> checked_axes(const Array& x, const std::vector<int>& axes, const char* op) {
  std::vector<int> out;
  for (int a : axes) out.push_back(normalize_axis(a, x.ndim(), op));
  return out;
}
}  // namespace

Array slice_dynamic(const Array& x, const Array& start, const std::vector<int>& axes, const Shape& sizes, Stream s) {
  std::vector<int> ax = checked_axes(x, axes, "slice");
  check_start(start, ax.size(), "slice");
  if (int(sizes.size()) != x.ndim())
    throw OpError("slice", "slice_size needs one entry per dimension of the array (" + std::to_string(x.ndim()) + ")");
  for (int d = 0; d < x.ndim(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape(d)) throw OpError("slice", "slice_size does not fit the array");
  return gather(x, window_indices(x, start, ax, sizes, false, s), all_axes(x.ndim()), s);
}

Array slice_update_dynamic(const Array& x, const Array& update, const Array& start, const std::vector<int>& axes,
                           Stream s) {
  std::vector<int> ax = checked_axes(x, axes, "slice_update");
  if (update.ndim() != x.ndim()) throw OpError("slice_update", "update must have as many dimensions as the array");
  for (int d = 0; d < x.ndim(); ++d)
    if (update.shape(d) > x.shape(d)) throw OpError("slice_update", "update does not fit the array");
  check_start(start, ax.size(), "slice_update");
  for (size_t k = 0; k < ax.size(); ++k)
    if (std::count(ax.begin(), ax.end(), ax[k]) > 1) throw OpError("slice_update", "repeated axis");
  // The GPU writes the window as a scatter (its start stays on the device); the CPU reads the
  // start and copies the window (a decode step's cache writes: one node each, not an index
  // array per axis and a scatter).
  if (s.device.type != DeviceType::cpu)
    return scatter(x, window_indices(x, start, ax, update.shape(), false, s), update, all_axes(x.ndim()),
                   ScatterOp::set, s);
  if (update.size() == 0) return x;
  Array at = start.dtype() == Dtype::int32 || start.dtype() == Dtype::int64 ? start : astype(start, Dtype::int64, s);
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<DynamicSliceUpdate>(std::move(ax)),
                     {x, astype(update, x.dtype(), s), at}, s);
}

Array nonzero_flags(const Array& x, Stream s) {
  if (x.traced())  // a value-dependent shape inside a transform: a ValueError, as masks
    throw OpError("nonzero",
                  "the number of nonzero elements of an array computed from a transform's input "
                  "(grad, vjp, jvp, vmap) depends on values");
  Array flags = astype(x, Dtype::bool_, s);
  if (x.ndim() == 0) flags = reshape(flags, {1}, s);
  return contiguous(flags, s);
}

std::vector<Array> nonzero(const Array& flags) {
  if (!flags.evaluated() || !flags.row_contiguous() || flags.dtype() != Dtype::bool_)
    throw OpError("nonzero", "expects the evaluated result of nonzero_flags");
  const bool* f = flags.data<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < flags.size(); ++i) count += f[i];
  int nd = flags.ndim();
  std::vector<Array> out;
  for (int d = 0; d < nd; ++d) out.push_back(Array::allocate({count}, Dtype::int64));
  Strides st = Array::row_strides(flags.shape());
  int64_t k = 0;
  for (int64_t i = 0; i < flags.size(); ++i) {
    if (!f[i]) continue;
    int64_t rest = i;
    for (int d = 0; d < nd; ++d) {
      out[d].data<int64_t>()[k] = rest / st[d];
      rest %= st[d];
    }
    ++k;
  }
  return out;
}

}  // namespace nuvec
