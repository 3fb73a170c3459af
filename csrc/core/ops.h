// Operations: each validates its arguments, works out the output's shape and dtype eagerly,
// and records a node. Invalid calls throw OpError naming the op.
#pragma once
#include <complex>
#include <optional>
#include <variant>

#include "core/array.h"
#include "core/primitives/elementwise.h"

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
Array unary(UnaryOp op, const Array& x, Stream s, EwParams p = {});
Array binary(BinaryOp op, const Array& a, const Array& b, Stream s, EwParams p = {});
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
// Basic slicing: start/stop/step per axis, already clamped NumPy-style by normalize_slice.
Array slice(const Array& x, const Shape& start, const Shape& stop, const Shape& step, Stream s);
Array view(const Array& x, Dtype dtype, Stream s);

}  // namespace nuvec
