// Random ops: the bit stream of a key, and the samplers composed from it as MLX composes them
// (so the values match MLX's bit for bit, and grad and vmap go through the ops used).
#include <cfloat>
#include <cmath>
#include <string>

#include "core/ops/random.h"

#include "core/ops.h"
#include "core/ops/reduce.h"
#include "core/primitives/random.h"

namespace nuvec::random {
namespace {

void check_key(const Array& key, const char* op) {
  if (key.dtype() != Dtype::uint32) throw OpError(op, std::string("a key must be uint32, got ") + name_of(key.dtype()));
  if (key.shape() != Shape{2}) throw OpError(op, "a key must have shape (2,)");
}

void check_float(Dtype dtype, const char* op, const char* what) {
  if (!is_floating(dtype))
    throw OpError(
        op, std::string("can only generate ") + what + " with a real floating point dtype, not " + name_of(dtype));
}

// Whether shape `a` broadcasts to exactly `shape`.
bool broadcasts_to(const Shape& a, const Shape& shape) {
  if (a.size() > shape.size()) return false;
  size_t lead = shape.size() - a.size();
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != 1 && a[i] != shape[lead + i]) return false;
  return true;
}

// As Python prints a tuple: (), (2,), (2, 3).
std::string shape_text(const Shape& shape) {
  std::string t;
  for (int64_t d : shape) t += (t.empty() ? "" : ", ") + std::to_string(d);
  return "(" + t + (shape.size() == 1 ? ",)" : ")");
}

// float32 samples of a kind fused onto the generator (uniform, erfinv of a uniform, normal).
Array fused_float(const Array& key, const Shape& shape, RandomKind kind, Stream s) {
  const char* op = kind == RandomKind::uniform ? "uniform" : "normal";
  check_key(key, op);
  check_shape(shape, op);
  return Array::lazy(shape, Dtype::float32, std::make_shared<RandomBits>(kind, 4), {key}, s);
}

// nextafter(1, 0) in `dtype`: the top of uniform's [0, 1).
double below_one(Dtype dtype) {
  int digits = dtype == Dtype::float16 ? 11 : dtype == Dtype::bfloat16 ? 8 : dtype == Dtype::float64 ? 53 : 24;
  return 1 - std::ldexp(1.0, -digits);
}

// erfinv of a uniform on (-1, 1), in float32 and then cast (MLX's order).
Array erfinv_unit(const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  Array e = fused_float(key, shape, RandomKind::erfinv, s);
  return dtype == Dtype::float32 ? e : astype(e, dtype, s);
}

}  // namespace

Array key(uint64_t seed) {
  Array k = Array::allocate({2}, Dtype::uint32);
  k.data<uint32_t>()[0] = uint32_t(seed >> 32);
  k.data<uint32_t>()[1] = uint32_t(seed);
  return k;
}

Array split(const Array& key, int64_t num, Stream s) {
  if (num < 0) throw OpError("split", "num must be non-negative");
  return bits({num, 2}, 4, key, s);
}

Array bits(const Shape& shape, int width, const Array& key, Stream s) {
  check_key(key, "bits");
  check_shape(shape, "bits");
  Dtype d;
  switch (width) {
    case 1: d = Dtype::uint8; break;
    case 2: d = Dtype::uint16; break;
    case 4: d = Dtype::uint32; break;
    default: throw OpError("bits", "width must be 1, 2 or 4 bytes, got " + std::to_string(width));
  }
  return Array::lazy(shape, d, std::make_shared<RandomBits>(RandomKind::bits, width), {key}, s);
}

// MLX's bits / (2^32 - 1) in float32, cast, clamped below 1.
Array uniform(const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  check_float(dtype, "uniform", "uniform numbers");
  Array u = fused_float(key, shape, RandomKind::uniform, s);
  if (dtype == Dtype::float32) return u;
  return binary(BinaryOp::minimum, astype(u, dtype, s), scalar_array(below_one(dtype), dtype), s);
}

Array uniform(const Array& low, const Array& high, const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  check_float(dtype, "uniform", "uniform numbers");
  Array lo = astype(low, dtype, s);
  Array span = binary(BinaryOp::subtract, astype(high, dtype, s), lo, s);
  if (!broadcasts_to(span.shape(), shape))
    throw OpError("uniform", "cannot generate values of shape " + shape_text(shape) + ": low and high broadcast to " +
                                 shape_text(span.shape()));
  return binary(BinaryOp::add, binary(BinaryOp::multiply, span, uniform(shape, dtype, key, s), s), lo, s);
}

// sqrt(2) * erfinv(u) with u uniform on (-1, 1), then * scale + loc.
Array normal(const Shape& shape, Dtype dtype, const std::optional<Array>& loc, const std::optional<Array>& scale,
             const Array& key, Stream s) {
  check_float(dtype, "normal", "normal numbers");
  if (dtype == Dtype::float32 && !loc && !scale) return fused_float(key, shape, RandomKind::normal, s);
  Array factor = scalar_array(std::sqrt(2.0), dtype);
  if (scale) factor = binary(BinaryOp::multiply, factor, astype(*scale, dtype, s), s);
  Array out = binary(BinaryOp::multiply, factor, erfinv_unit(shape, dtype, key, s), s);
  return loc ? binary(BinaryOp::add, astype(*loc, dtype, s), out, s) : out;
}

Array randint(const Array& low, const Array& high, const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  if (is_inexact(dtype))
    throw OpError("randint", std::string("randint makes integers or bools, not ") + name_of(dtype));
  Array u = uniform(low, high, shape, Dtype::float32, key, s);
  return astype(unary(UnaryOp::floor, binary(BinaryOp::maximum, u, low, s), s), dtype, s);
}

Array bernoulli(const Array& p, const std::optional<Shape>& shape, const Array& key, Stream s) {
  if (!is_floating(p.dtype()))
    throw OpError("bernoulli", std::string("the probability p must be a float, not ") + name_of(p.dtype()));
  Shape sh = shape.value_or(p.shape());
  Array out = binary(BinaryOp::less, uniform(sh, p.dtype(), key, s), p, s);
  if (out.shape() != sh)
    throw OpError("bernoulli",
                  "p of shape " + shape_text(p.shape()) + " does not broadcast to shape " + shape_text(sh));
  return out;
}

// Inverse CDF between erf(lower / sqrt 2) and erf(upper / sqrt 2), clipped (as JAX and MLX).
Array truncated_normal(const Array& lower, const Array& upper, const std::optional<Shape>& shape, Dtype dtype,
                       const Array& key, Stream s) {
  check_float(dtype, "truncated_normal", "truncated normal numbers");
  Array sqrt2 = scalar_array(std::sqrt(2.0), dtype);
  Array lo = astype(lower, dtype, s), hi = astype(upper, dtype, s);
  Array a = unary(UnaryOp::erf, binary(BinaryOp::divide, lo, sqrt2, s), s);
  Array b = unary(UnaryOp::erf, binary(BinaryOp::divide, hi, sqrt2, s), s);
  Shape sh = shape ? *shape : broadcast_shapes(lo.shape(), hi.shape(), "truncated_normal");
  Array out = binary(BinaryOp::multiply, sqrt2, unary(UnaryOp::erfinv, uniform(a, b, sh, dtype, key, s), s), s);
  return binary(BinaryOp::maximum, binary(BinaryOp::minimum, hi, out, s), lo, s);
}

// -log(-log(u)) with u uniform on [float32 tiny, 1).
Array gumbel(const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  check_float(dtype, "gumbel", "Gumbel numbers");
  Array u = uniform(scalar_array(double(FLT_MIN)), scalar_array(1.0), shape, dtype, key, s);
  return unary(UnaryOp::negative, unary(UnaryOp::log, unary(UnaryOp::negative, unary(UnaryOp::log, u, s), s), s), s);
}

// Gumbel-max: argmax of the logits plus Gumbel noise.
Array categorical(const Array& logits, int axis, const std::optional<Shape>& shape, std::optional<int64_t> num_samples,
                  const Array& key, Stream s) {
  if (shape && num_samples) throw OpError("categorical", "at most one of shape and num_samples can be given");
  int ndim = logits.ndim();
  if (axis < -ndim || axis >= ndim)
    throw OpError("categorical",
                  "axis " + std::to_string(axis) + " is out of bounds for " + std::to_string(ndim) + " dimensions",
                  true);
  axis = (axis + ndim) % ndim;
  Shape reduced = logits.shape();
  reduced.erase(reduced.begin() + axis);
  Array x = logits;
  Shape sh = reduced;
  if (num_samples) {
    x = expand_dims(logits, {-1}, s);
    sh.push_back(*num_samples);
  } else if (shape) {
    sh = *shape;
    if (!broadcasts_to(reduced, sh))
      throw OpError("categorical", "shape " + shape_text(sh) + " is not compatible with logits of shape " +
                                       shape_text(logits.shape()) + " reduced on axis " + std::to_string(axis));
  }
  int offset = axis + int(sh.size()) - x.ndim() + 1;
  Shape g_shape(sh.begin(), sh.begin() + offset);
  g_shape.push_back(logits.shape(axis));
  g_shape.insert(g_shape.end(), sh.begin() + offset, sh.end());
  Array scores = binary(BinaryOp::add, gumbel(g_shape, Dtype::float32, key, s), x, s);
  return argmax(scores, offset, false, s);
}

// Inverse CDF: sign(u) * log1p(-|u|) with u uniform on (-1, 1), then * scale + loc.
Array laplace(const Shape& shape, Dtype dtype, double loc, double scale, const Array& key, Stream s) {
  check_float(dtype, "laplace", "Laplace numbers");
  Array u =
      uniform(scalar_array(double(std::nextafter(-1.0f, 0.0f))), scalar_array(1.0), shape, Dtype::float32, key, s);
  Array out = binary(BinaryOp::multiply, unary(UnaryOp::sign, u, s),
                     unary(UnaryOp::log1p, unary(UnaryOp::negative, unary(UnaryOp::abs, u, s), s), s), s);
  out = astype(out, dtype, s);
  if (scale != 1.0) out = binary(BinaryOp::multiply, scalar_array(scale, dtype), out, s);
  if (loc != 0.0) out = binary(BinaryOp::add, scalar_array(loc, dtype), out, s);
  return out;
}

// A stable argsort of random bits.
Array permutation(int64_t n, const Array& key, Stream s) { return argsort(bits({n}, 4, key, s), -1, s); }

Array permutation(const Array& x, int axis, const Array& key, Stream s) {
  if (axis < -x.ndim() || axis >= x.ndim())
    throw OpError("permutation",
                  "axis " + std::to_string(axis) + " is out of bounds for " + std::to_string(x.ndim()) + " dimensions",
                  true);
  return take(x, permutation(x.shape(axis), key, s), axis, s);
}

}  // namespace nuvec::random
