// Helpers every op uses: streams, broadcasting, axes, shapes, scalars.
#include "core/ops/common.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/ops.h"

namespace nuvec {

Stream resolve_stream(std::optional<Stream> s) { return s ? *s : default_stream(default_device()); }

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

namespace {
template <class T> bool fits(int64_t v) {
  return v >= int64_t(std::numeric_limits<T>::min()) &&
         (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max()));
}

bool int_fits(int64_t v, Dtype d) {
  switch (d) {
    case Dtype::uint8: return fits<uint8_t>(v);
    case Dtype::uint16: return fits<uint16_t>(v);
    case Dtype::uint32: return fits<uint32_t>(v);
    case Dtype::uint64: return v >= 0;
    case Dtype::int8: return fits<int8_t>(v);
    case Dtype::int16: return fits<int16_t>(v);
    case Dtype::int32: return fits<int32_t>(v);
    default: return true;
  }
}
}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw OpError(op, "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(int axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim)
    throw OpError(
        op, "axis " + std::to_string(axis) + " is out of bounds for an array of dimension " + std::to_string(ndim),
        true);
  return axis < 0 ? axis + ndim : axis;
}

void check_shape(const Shape& shape, const char* op) {
  // Sizes are bounded so byte counts fit int64 even for the widest dtype.
  constexpr int64_t kMaxElements = int64_t(1) << 56;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw OpError(op, "negative dimensions are not allowed, got shape " + shape_str(shape));
    if (d != 0 && n > kMaxElements / d) throw OpError(op, "shape " + shape_str(shape) + " is too large");
    n *= d;
  }
}

namespace {
template <class T> void store_as(void* dst, T v, Dtype d);

template <class T> Array constant(T v, Dtype d) {
  Array a = Array::allocate({}, d);
  store_as<T>(a.data_bytes(), v, d);
  return a;
}

template <class U, class T> U cast_to(T v) {
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    if constexpr (std::is_same_v<U, std::complex<float>>)
      return U(v);
    else if constexpr (std::is_same_v<U, bool>)
      return v != std::complex<double>(0);
    else
      return U(v.real());
  } else {
    return U(v);
  }
}

uint16_t float_to_bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

template <class T> void store_as(void* dst, T v, Dtype d) {
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof(x)); };
  switch (d) {
    case Dtype::bool_: put(cast_to<bool>(v)); break;
    case Dtype::uint8: put(cast_to<uint8_t>(v)); break;
    case Dtype::uint16: put(cast_to<uint16_t>(v)); break;
    case Dtype::uint32: put(cast_to<uint32_t>(v)); break;
    case Dtype::uint64: put(cast_to<uint64_t>(v)); break;
    case Dtype::int8: put(cast_to<int8_t>(v)); break;
    case Dtype::int16: put(cast_to<int16_t>(v)); break;
    case Dtype::int32: put(cast_to<int32_t>(v)); break;
    case Dtype::int64: put(cast_to<int64_t>(v)); break;
    case Dtype::float16: put(_Float16(cast_to<float>(v))); break;
    case Dtype::float32: put(cast_to<float>(v)); break;
    case Dtype::float64: put(cast_to<double>(v)); break;
    case Dtype::bfloat16: put(float_to_bfloat16(cast_to<float>(v))); break;
    case Dtype::complex64: put(cast_to<std::complex<float>>(v)); break;
  }
}
}  // namespace

Array scalar_array(const Scalar& v, std::optional<Dtype> dtype) {
  return std::visit(
      [&](auto x) -> Array {
        using T = decltype(x);
        Dtype d;
        if (dtype)
          d = *dtype;
        else if constexpr (std::is_same_v<T, bool>)
          d = Dtype::bool_;
        else if constexpr (std::is_same_v<T, int64_t>)
          d = fits<int32_t>(x) ? Dtype::int32 : Dtype::int64;
        else if constexpr (std::is_same_v<T, double>)
          d = Dtype::float32;
        else
          d = Dtype::complex64;
        if constexpr (std::is_same_v<T, bool>)
          return constant<int64_t>(x, d);
        else
          return constant<T>(x, d);
      },
      v);
}

Array weak_scalar(const Scalar& v, Dtype other, const char* op) {
  Dtype d = other;
  if (std::holds_alternative<bool>(v)) {
    d = other;
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    if (other == Dtype::bool_) {
      d = fits<int32_t>(*i) ? Dtype::int32 : Dtype::int64;
    } else if (is_integer(other) && !int_fits(*i, other)) {
      throw OpError(op, "Python integer " + std::to_string(*i) + " is out of bounds for " + name_of(other));
    }
  } else if (std::holds_alternative<double>(v)) {
    if (!is_inexact(other)) d = Dtype::float32;
  } else {
    d = Dtype::complex64;
  }
  return scalar_array(v, d);
}

std::pair<Array, int> along_axis(const Array& a, std::optional<int> axis, const char* op, Stream s) {
  if (!axis) return {reshape(a, {a.size()}, s), 0};
  return {a, normalize_axis(*axis, a.ndim(), op)};
}

}  // namespace nuvec
