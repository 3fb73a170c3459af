// Shape ops: views where strides allow (shape_views.cpp), and the ops composed from them (shape.cpp).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/common.h"

namespace nuvec {

Array reshape(const Array& x, Shape shape, Stream s);
Array transpose(const Array& x, std::vector<int> perm, Stream s);
Array broadcast_to(const Array& x, const Shape& shape, Stream s);
// x broadcast to like's shape: under compile, a node that depends on like (see BroadcastLike),
// else broadcast_to.
Array broadcast_like(const Array& x, const Array& like, Stream s);
// `value` filled to a's shape: under compile a node that depends on a (a shapeless replay follows
// a's shape), else full(a.shape(), value).
Array filled_like(const Array& a, const Array& value, Stream s, const char* op = "full");
// Basic slicing: start/stop/step per axis, already clamped NumPy-style (x itself when it is the
// whole array).
Array slice(const Array& x, const Shape& start, const Shape& stop, const Shape& step, Stream s);
// x with x[start:stop:step] set to `update` (broadcast to the window, cast to x's dtype), as MLX's
// slice_update; steps must be positive.
Array slice_update(const Array& x, const Array& update, const Shape& start, const Shape& stop, const Shape& step,
                   Stream s);
Array view(const Array& x, Dtype dtype, Stream s);
Array flatten(const Array& x, int start_axis, int end_axis, Stream s);
Array unflatten(const Array& x, int axis, const Shape& shape, Stream s);
Array squeeze(const Array& x, const std::optional<std::vector<int>>& axes, Stream s);
Array expand_dims(const Array& x, const std::vector<int>& axes, Stream s);
Array swapaxes(const Array& x, int axis1, int axis2, Stream s);
Array moveaxis(const Array& x, int source, int destination, Stream s);
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs, Stream s);
Array atleast_nd(const Array& x, int n, Stream s);  // atleast_1d / 2d / 3d
Array concatenate(const std::vector<Array>& xs, std::optional<int> axis, Stream s);
Array stack(const std::vector<Array>& xs, int axis, Stream s);
std::vector<Array> split(const Array& x, const Shape& indices, int axis, Stream s);
std::vector<Array> split_sections(const Array& x, int64_t sections, int axis, Stream s);
Array tile(const Array& x, const Shape& reps, Stream s);
Array repeat(const Array& x, int64_t repeats, std::optional<int> axis, Stream s);
// pad_width: one (before, after) pair per axis; mode "constant", "edge", "reflect" or "symmetric".
Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& pad_width, const std::string& mode,
          const Array& constant, Stream s);
Array roll(const Array& x, const Shape& shift, const std::optional<std::vector<int>>& axes, Stream s);
Array as_strided(const Array& x, const Shape& shape, const Strides& strides, int64_t offset, Stream s);
Array contiguous(const Array& x, Stream s);
std::vector<Array> meshgrid(const std::vector<Array>& xs, bool sparse, const std::string& indexing, Stream s);
Array diagonal(const Array& x, int64_t offset, int axis1, int axis2, Stream s);
Array diag(const Array& x, int64_t k, Stream s);
Array kron(const Array& a, const Array& b, Stream s);
// Reverses the order along `axes` (every axis when nullopt); a view.
Array flip(const Array& x, const std::optional<std::vector<int>>& axes, Stream s);
Array matrix_transpose(const Array& x, Stream s);
std::vector<Array> unstack(const Array& x, int axis, Stream s);

}  // namespace nuvec
