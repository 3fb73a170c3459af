// Creation ops.
#include "core/ops/creation.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitives/creation.h"

namespace nuvec {

Array full(const Shape& shape, const Array& value, std::optional<Dtype> dtype, Stream s, const char* op) {
  check_shape(shape, op);
  Shape out_shape = broadcast_shapes(value.shape(), shape, op);
  if (out_shape != shape) throw OpError(op, "the value cannot be broadcast to the requested shape");
  Dtype d = dtype.value_or(value.dtype());
  return Array::lazy(shape, d, std::make_shared<Unary>(UnaryOp::copy, value.dtype(), d, OpParams{}, op), {value}, s);
}

Array arange(double start, double stop, double step, Dtype dtype, Stream s) {
  if (step == 0) throw OpError("arange", "step cannot be 0");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw OpError("arange", "start, stop and step must be finite");
  if (dtype == Dtype::bool_) throw OpError("arange", "bool is not supported");
  double n = std::ceil((stop - start) / step);
  if (n > double(int64_t(1) << 48)) throw OpError("arange", "too many elements");
  int64_t size = n > 0 ? int64_t(n) : 0;
  if (is_integer(dtype)) {
    // NumPy's and MLX's convention: the increment is dtype(start + step) - dtype(start).
    double first = std::trunc(start);
    step = std::trunc(start + step) - first;
    start = first;
  }
  return Array::lazy({size}, dtype, std::make_shared<Arange>(start, step), {}, s);
}

Array linspace(double start, double stop, int64_t num, bool endpoint, Dtype dtype, Stream s) {
  if (num < 0) throw OpError("linspace", "num must be non-negative, got " + std::to_string(num));
  // As MLX: start * (1 - t) + stop * t with t = i / (num - 1) (i / num without the endpoint), in
  // float64 for float64 and in float32 for every other dtype, then cast.
  Dtype c = dtype == Dtype::float64 ? Dtype::float64 : Dtype::float32;
  Array first = scalar_array(start, c);
  if (num <= 1) return astype(full({num}, first, std::nullopt, s, "linspace"), dtype, s);
  Array i = Array::lazy({num}, c, std::make_shared<Arange>(0, 1), {}, s);
  Array t = binary(BinaryOp::divide, i, scalar_array(double(endpoint ? num - 1 : num), c), s);
  Array rest = binary(BinaryOp::subtract, scalar_array(1.0, c), t, s);
  Array out = binary(BinaryOp::add, binary(BinaryOp::multiply, first, rest, s),
                     binary(BinaryOp::multiply, scalar_array(stop, c), t, s), s);
  return astype(out, dtype, s);
}

namespace {
// (row + k) compared with column over an n x m grid: the masks under tri and eye.
Array diagonal_mask(int64_t n, int64_t m, int64_t k, BinaryOp cmp, Dtype dtype, const char* op, Stream s) {
  check_shape({n, m}, op);
  Array rows = arange(0, double(n), 1, Dtype::int64, s);
  Array cols = arange(0, double(m), 1, Dtype::int64, s);
  Array mask = binary(cmp, reshape(binary(BinaryOp::add, rows, scalar_array(k, Dtype::int64), s), {n, 1}, s),
                      reshape(cols, {1, m}, s), s);
  return astype(mask, dtype, s);
}
}  // namespace

Array tri(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s) {
  return diagonal_mask(n, m, k, BinaryOp::greater_equal, dtype, "tri", s);
}

Array eye(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s) {
  return diagonal_mask(n, m, k, BinaryOp::equal, dtype, "eye", s);
}

namespace {
Array triangle(const Array& x, int64_t k, bool lower, const char* op, Stream s) {
  if (x.ndim() < 2) throw OpError(op, "the array must have at least 2 dimensions");
  int64_t n = x.shape(-2), m = x.shape(-1);
  Array mask = tri(n, m, lower ? k : k - 1, Dtype::bool_, s);
  if (!lower) mask = unary(UnaryOp::logical_not, mask, s);
  return where(mask, x, scalar_array(int64_t(0), x.dtype()), s);
}
}  // namespace

Array tril(const Array& x, int64_t k, Stream s) { return triangle(x, k, true, "tril", s); }
Array triu(const Array& x, int64_t k, Stream s) { return triangle(x, k, false, "triu", s); }

Array window(Window w, int64_t M, Stream s) {
  int64_t n = std::max<int64_t>(M, 0);
  auto lit = [](double v) { return scalar_array(v, Dtype::float32); };
  if (n <= 1) return full({n}, lit(1.0), std::nullopt, s, "window");
  Array k = arange(0, double(n), 1, Dtype::float32, s);
  if (w == Window::bartlett) {  // 1 - |2k / (n - 1) - 1|
    Array r = binary(BinaryOp::subtract, binary(BinaryOp::multiply, k, lit(2.0 / double(n - 1)), s), lit(1.0), s);
    return binary(BinaryOp::subtract, lit(1.0), unary(UnaryOp::abs, r, s), s);
  }
  // The cosine windows: sum_j (-1)^j c_j cos(j t), t = 2 pi k / (n - 1).
  std::vector<double> c;
  switch (w) {
    case Window::bartlett: break;
    case Window::blackman: c = {0.42, 0.5, 0.08}; break;
    case Window::hamming: c = {0.54, 0.46}; break;
    case Window::hanning: c = {0.5, 0.5}; break;
  }
  Array t = binary(BinaryOp::multiply, k, lit(2.0 * M_PI / double(n - 1)), s);
  Array r = lit(c[0]);
  for (size_t j = 1; j < c.size(); ++j) {
    Array term = unary(UnaryOp::cos, binary(BinaryOp::multiply, t, lit(double(j)), s), s);
    r = binary(BinaryOp::add, r, binary(BinaryOp::multiply, term, lit(j % 2 ? -c[j] : c[j]), s), s);
  }
  return r;
}

}  // namespace nuvec
