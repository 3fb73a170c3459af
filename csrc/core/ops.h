// Operations: each validates its arguments, works out the output's shape and dtype eagerly,
// and records a node. Invalid calls throw OpError naming the op.
#pragma once
#include <complex>
#include <optional>
#include <string>
#include <variant>

#include "core/array.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/indexing.h"

namespace nuvec {

// The stream an op records on: the thread's default stream unless one is given.
Stream resolve_stream(std::optional<Stream> s);

// A Python-style scalar before it meets an array: its dtype is decided by the array's (weak).
using Scalar = std::variant<bool, int64_t, double, std::complex<double>>;
// An array holding `v` in the dtype MLX's weak-scalar rule gives it next to `other`.
Array weak_scalar(const Scalar& v, Dtype other, const char* op);
// An array holding `v` in its default dtype (bool, int32/int64, float32, complex64), or `dtype`.
Array scalar_array(const Scalar& v, std::optional<Dtype> dtype = std::nullopt);

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
int normalize_axis(int axis, int ndim, const char* op);
void check_shape(const Shape& shape, const char* op);

// Element-wise.
Array unary(UnaryOp op, const Array& x, Stream s, OpParams p = {});
Array binary(BinaryOp op, const Array& a, const Array& b, Stream s, OpParams p = {});
std::pair<Array, Array> divmod(const Array& a, const Array& b, Stream s);
Array where(const Array& cond, const Array& x, const Array& y, Stream s);
Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi, Stream s);
Array round(const Array& x, int decimals, Stream s);
Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Stream s);
Array degrees(const Array& x, Stream s);
Array radians(const Array& x, Stream s);
Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s);
Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s);
Array array_equal(const Array& a, const Array& b, bool equal_nan, Stream s);
Array astype(const Array& x, Dtype dtype, Stream s);

// Creation.
// `op` names the caller in errors (zeros, ones, full, ...).
Array full(const Shape& shape, const Array& value, std::optional<Dtype> dtype, Stream s, const char* op = "full");
Array arange(double start, double stop, double step, Dtype dtype, Stream s);
Array linspace(double start, double stop, int64_t num, Dtype dtype, Stream s);
Array eye(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s);
Array tri(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s);
Array tril(const Array& x, int64_t k, Stream s);
Array triu(const Array& x, int64_t k, Stream s);

// Layout (views where strides allow).
Array reshape(const Array& x, Shape shape, Stream s);
Array transpose(const Array& x, std::vector<int> perm, Stream s);
Array broadcast_to(const Array& x, const Shape& shape, Stream s);
// Basic slicing: start/stop/step per axis, already clamped NumPy-style (x itself when it is the
// whole array).
Array slice(const Array& x, const Shape& start, const Shape& stop, const Shape& step, Stream s);
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
// pad_width: one (before, after) pair per axis; mode "constant" or "edge".
Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& pad_width, const std::string& mode,
          const Array& constant, Stream s);
Array roll(const Array& x, const Shape& shift, const std::optional<std::vector<int>>& axes, Stream s);
Array as_strided(const Array& x, const Shape& shape, const Strides& strides, int64_t offset, Stream s);
Array contiguous(const Array& x, Stream s);
std::vector<Array> meshgrid(const std::vector<Array>& xs, bool sparse, const std::string& indexing, Stream s);
Array diagonal(const Array& x, int64_t offset, int axis1, int axis2, Stream s);
Array diag(const Array& x, int64_t k, Stream s);
Array kron(const Array& a, const Array& b, Stream s);

// Indexing.
// Integer-array indexing of `axes` (indices broadcast together to I): shape I + other axes.
Array gather(const Array& x, const std::vector<Array>& indices, const std::vector<int>& axes, Stream s);
Array scatter(const Array& x, const std::vector<Array>& indices, const Array& updates, const std::vector<int>& axes,
              ScatterOp op, Stream s);
Array take(const Array& x, const Array& indices, std::optional<int> axis, Stream s);
Array take_along_axis(const Array& x, const Array& indices, std::optional<int> axis, Stream s);
// `op` combines the values with what is there (set by default; add accumulates repeats).
Array put_along_axis(const Array& x, const Array& indices, const Array& values, std::optional<int> axis, Stream s,
                     ScatterOp op = ScatterOp::set);
// Dynamic slices: `start` holds one start per entry of `axes`; `sizes` is the whole output shape.
Array slice_dynamic(const Array& x, const Array& start, const std::vector<int>& axes, const Shape& sizes, Stream s);
Array slice_update_dynamic(const Array& x, const Array& update, const Array& start, const std::vector<int>& axes,
                           Stream s);
// Data-dependent, in two steps so the caller evaluates in between (from Python, without the
// GIL): the flags to evaluate, then one int64 index array per axis of x from the evaluated flags.
Array nonzero_flags(const Array& x, Stream s);
std::vector<Array> nonzero(const Array& evaluated_flags);

}  // namespace nuvec
