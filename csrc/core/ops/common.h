// Helpers every op uses: the stream an op records on, scalars, broadcasting, axes and shapes.
#pragma once
#include <complex>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/array.h"

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
std::string shape_str(const Shape& s);  // "(2, 3)", "(4,)": Python's tuple notation

// The array and the axis an op along `axis` works on: the flattened array's axis 0 for nullopt,
// else the normalized axis (an axis error naming `op` when out of range).
std::pair<Array, int> along_axis(const Array& a, std::optional<int> axis, const char* op, Stream s);

}  // namespace nuvec
