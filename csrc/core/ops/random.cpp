// Random ops: the bit stream of a key, and the samplers composed from it as MLX composes them
// (so the values match MLX's bit for bit, and grad and vmap go through the ops used).
#include <cmath>
#include <string>

#include "core/ops/random.h"

#include "core/ops.h"
#include "core/ops/linalg_spectral.h"
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

// MLX's complex normal: erfinv of uniforms on (-1, 1) as (real, imaginary) pairs, so each part
// has variance 1/2; then scale * z + loc with the arguments' own dtypes.
Array complex_normal(Shape shape, const std::optional<Array>& loc, const std::optional<Array>& scale, const Array& key,
                     Stream s) {
  shape.push_back(2);
  Array z = squeeze(view(fused_float(key, shape, RandomKind::erfinv, s), Dtype::complex64, s), {{-1}}, s);
  if (scale) z = binary(BinaryOp::multiply, *scale, z, s);
  return loc ? binary(BinaryOp::add, *loc, z, s) : z;
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
  if (dtype == Dtype::complex64) return complex_normal(shape, loc, scale, key, s);
  if (!is_floating(dtype))
    throw OpError("normal",
                  std::string("only floating point and complex64 dtypes are supported, not ") + name_of(dtype));
  if (dtype == Dtype::float32 && !loc && !scale) return fused_float(key, shape, RandomKind::normal, s);
  Array factor = scalar_array(std::sqrt(2.0), dtype);
  if (scale) factor = binary(BinaryOp::multiply, factor, astype(*scale, dtype, s), s);
  Array out = binary(BinaryOp::multiply, factor, erfinv_unit(shape, dtype, key, s), s);
  return loc ? binary(BinaryOp::add, astype(*loc, dtype, s), out, s) : out;
}

Array randint(const Array& low, const Array& high, const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  if (is_inexact(dtype))
    throw OpError("randint", std::string("randint makes integers or bools, not ") + name_of(dtype));
  // MLX 0.32's draw: floor of a float32 uniform on [low, high), cast, then clipped to
  // [low, high - 1] in the output dtype (bounds cast, so out-of-range bounds wrap first).
  Array x = astype(unary(UnaryOp::floor, uniform(low, high, shape, Dtype::float32, key, s), s), dtype, s);
  Array top = astype(binary(BinaryOp::subtract, high, scalar_array(1, high.dtype()), s), dtype, s);
  return binary(BinaryOp::maximum, binary(BinaryOp::minimum, x, top, s), astype(low, dtype, s), s);
}

Array bernoulli(const Array& p, const std::optional<Shape>& shape, const Array& key, Stream s) {
  if (!is_floating(p.dtype()))
    throw OpError("bernoulli", std::string("the probability p must be a float, not ") + name_of(p.dtype()));
  Shape sh = shape.value_or(p.shape());
  // MLX: bits < p * nextafter(2^32, inf) in float32, so p >= 1 is always and p <= 0 never true.
  Array top = scalar_array(double(std::nextafter(4294967296.0f, INFINITY)), Dtype::float32);
  Array out = binary(BinaryOp::less, bits(sh, 4, key, s), binary(BinaryOp::multiply, p, top, s), s);
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
  // MLX's own erf approximation: its bits are part of the samples'.
  Array a = unary(UnaryOp::mlx_erf, binary(BinaryOp::divide, lo, sqrt2, s), s);
  Array b = unary(UnaryOp::mlx_erf, binary(BinaryOp::divide, hi, sqrt2, s), s);
  Shape sh = shape ? *shape : broadcast_shapes(lo.shape(), hi.shape(), "truncated_normal");
  Array out = binary(BinaryOp::multiply, sqrt2, unary(UnaryOp::erfinv, uniform(a, b, sh, dtype, key, s), s), s);
  return binary(BinaryOp::maximum, binary(BinaryOp::minimum, hi, out, s), lo, s);
}

// -log(-log(u)) with u uniform on [0, 1).
Array gumbel(const Shape& shape, Dtype dtype, const Array& key, Stream s) {
  check_float(dtype, "gumbel", "Gumbel numbers");
  Array u = uniform(shape, dtype, key, s);
  return unary(UnaryOp::negative, unary(UnaryOp::log, unary(UnaryOp::negative, unary(UnaryOp::log, u, s), s), s), s);
}

namespace {

// Up to this many values, count_not_above compares each with every entry (one pass over them per
// value) instead of sorting them all four times: a decode step's one draw from 49152 tokens.
constexpr int64_t kCountByComparing = 64;

// Per value, how many entries of the ascending 1-D `sorted` are not above it (NaN last): a
// searchsorted on the right, from one stable sort of both (a value's rank there, less its rank
// among the values, counts the entries before it), or for few values the entries compared (a NaN
// value is above them all; a NaN entry above every number).
Array count_not_above(const Array& sorted, const Array& values, Stream s) {
  int64_t n = sorted.size(), m = values.size();
  Array flat = reshape(values, {m}, s);
  if (m <= kCountByComparing) {
    Array col = reshape(flat, {m, 1}, s);
    Array count = sum(binary(BinaryOp::less_equal, reshape(sorted, {1, n}, s), col, s), std::vector<int>{1}, false, s);
    Array all = scalar_array(double(n), Dtype::uint32);
    count = where(unary(UnaryOp::isnan, flat, s), all, astype(count, Dtype::uint32, s), s);
    return reshape(count, values.shape(), s);
  }
  auto rank = [&](const Array& a) { return argsort(argsort(a, 0, s), 0, s); };
  Array mine = slice(rank(concatenate({sorted, flat}, 0, s)), {n}, {n + m}, {1}, s);
  return reshape(binary(BinaryOp::subtract, mine, rank(flat), s), values.shape(), s);
}

// MLX's draw for one distribution (1-D logits, or any with one row) and a non-empty sample
// shape: the inverse CDF. Probabilities exp(x - max) with MLX's exp (the entries equal to the
// max when it is infinite), u * their sequential sum placed among their exclusive prefix sums.
Array inverse_cdf(const Array& logits, const Shape& shape, const Array& key, Stream s) {
  Dtype dt = promote(logits.dtype(), Dtype::float32);
  Array x = astype(logits, dt, s);
  Array m = max(x, std::nullopt, false, s);
  Array p = where(unary(UnaryOp::isinf, m, s), astype(binary(BinaryOp::equal, x, m, s), dt, s),
                  unary(UnaryOp::mlx_exp, binary(BinaryOp::subtract, x, m, s), s), s);
  Array below = scan(ScanOp::sum, p, 0, false, false, std::nullopt, s);
  // MLX's CPU sum adds in order: the last inclusive prefix sum, bit for bit.
  int64_t n = p.size();
  Array total = reshape(slice(scan(ScanOp::sum, p, 0, false, true, std::nullopt, s), {n - 1}, {n}, {1}, s), {}, s);
  Array t = binary(BinaryOp::multiply, uniform(shape, Dtype::float32, key, s), total, s);
  return binary(BinaryOp::subtract, count_not_above(below, t, s), scalar_array(1, Dtype::uint32), s);
}

}  // namespace

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
  int64_t n = logits.shape(axis);
  if (n > 0 && n == logits.size() && !sh.empty()) return inverse_cdf(reshape(logits, {n}, s), sh, key, s);
  int offset = axis + int(sh.size()) - x.ndim() + 1;
  Shape g_shape(sh.begin(), sh.begin() + offset);
  g_shape.push_back(logits.shape(axis));
  g_shape.insert(g_shape.end(), sh.begin() + offset, sh.end());
  Array scores = binary(BinaryOp::add, gumbel(g_shape, Dtype::float32, key, s), x, s);
  return argmax(scores, offset, false, s);
}

// Inverse CDF: sign(u) * log1p(-|u|) with u uniform on (-1, 1), then * scale + loc.
Array laplace(const Shape& shape, Dtype dtype, float loc, float scale, const Array& key, Stream s) {
  check_float(dtype, "laplace", "Laplace numbers");
  Array u =
      uniform(scalar_array(double(std::nextafter(-1.0f, 0.0f))), scalar_array(1.0), shape, Dtype::float32, key, s);
  // MLX multiplies by -1 in `dtype`: log1p runs in float64 for a float64 result.
  Array neg = unary(UnaryOp::negative, astype(unary(UnaryOp::abs, u, s), promote(dtype, Dtype::float32), s), s);
  Array out = binary(BinaryOp::multiply, unary(UnaryOp::sign, u, s), unary(UnaryOp::log1p, neg, s), s);
  out = astype(out, dtype, s);
  if (scale != 1.0f) out = binary(BinaryOp::multiply, scalar_array(double(scale), dtype), out, s);
  if (loc != 0.0f) out = binary(BinaryOp::add, scalar_array(double(loc), dtype), out, s);
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

// MLX's algorithm: mean + z @ (U * sqrt(S)) @ Vt from the SVD of cov (as float32) and standard
// normal z of the broadcast batch shape (or `shape`).
Array multivariate_normal(const Array& mean, const Array& cov, const Shape& shape, Dtype dtype, const Array& key,
                          Stream s) {
  const char* op = "multivariate_normal";
  if (dtype != Dtype::float32)
    throw OpError(op, std::string("the only supported dtype is float32, not ") + name_of(dtype));
  if (mean.ndim() < 1 || cov.ndim() < 2 || cov.shape(-1) != cov.shape(-2) || cov.shape(-1) != mean.shape(-1))
    throw OpError(op, "mean of shape " + shape_text(mean.shape()) + " and cov of shape " + shape_text(cov.shape()) +
                          " do not describe one distribution (cov must be (..., n, n) with mean (..., n))");
  Shape batch = broadcast_shapes(Shape(mean.shape().begin(), mean.shape().end() - 1),
                                 Shape(cov.shape().begin(), cov.shape().end() - 2), op);
  Shape out = broadcast_shapes(shape, batch, op);
  out.push_back(mean.shape(-1));
  std::vector<Array> usv = decompose(astype(cov, Dtype::float32, s), Decomposition::svd, false, s);
  Array root = binary(BinaryOp::multiply, usv[0], expand_dims(unary(UnaryOp::sqrt, usv[1], s), {-2}, s), s);
  Array std_dev = astype(matmul(root, usv[2], s), Dtype::float32, s);
  Array z = normal(out, Dtype::float32, std::nullopt, std::nullopt, key, s);
  Array scaled = squeeze(matmul(expand_dims(z, {-2}, s), std_dev, s), std::vector<int>{-2}, s);
  return binary(BinaryOp::add, mean, scaled, s);
}

}  // namespace nuvec::random
