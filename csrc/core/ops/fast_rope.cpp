// The ops of rope and norm_rope: MLX's argument checks, then one primitive (float64 rope: the
// composition of ops MLX's fallback computes).
#include "core/ops/fast_rope.h"

#include <string>

#include "core/ops.h"
#include "core/primitives/rope.h"

namespace nuvec {

namespace {

bool kernel_dtype(Dtype d) { return d == Dtype::float32 || d == Dtype::float16 || d == Dtype::bfloat16; }

// Checks x, dims, base / freqs and the offset as MLX does; appends the offset and freqs inputs.
RopeParams rope_params(const char* op, const Array& x, int64_t dims, bool traditional, std::optional<float> base,
                       float scale, const RopeOffset& offset, const std::optional<Array>& freqs,
                       std::vector<Array>& inputs, Stream s) {
  if (x.ndim() < 3)
    throw OpError(
        op, "Input must have at least 3 dimensions but got input with " + std::to_string(x.ndim()) + " dimensions");
  if (!is_floating(x.dtype()))
    throw OpError(op, std::string("Input must be a floating type but got ") + name_of(x.dtype()));
  if (dims % 2 != 0 || dims <= 0) throw OpError(op, "dims must be even but got " + std::to_string(dims));
  if (dims > x.shape(-1))
    throw OpError(op, "dims must not exceed the input's last dimension (" + std::to_string(x.shape(-1)) + ") but got " +
                          std::to_string(dims));
  if (base.has_value() == freqs.has_value())
    throw OpError(op, base ? "Only one of base or freqs can have a value." : "Neither base nor freqs has a value.");
  RopeParams p;
  p.dims = dims, p.traditional = traditional, p.base = base.value_or(0.0f), p.scale = scale;
  if (const auto* o = std::get_if<Array>(&offset)) {
    if (!is_integer(o->dtype()))
      throw OpError(op, std::string("offset must be an integer but got type ") + name_of(o->dtype()));
    if (o->ndim() > 1)
      throw OpError(op, "offset must have at most one dimension but has shape " + shape_str(o->shape()));
    if (o->ndim() == 1 && o->shape(0) != x.shape(0))
      throw OpError(op, "offset must be a scalar or vector with " + std::to_string(x.shape(0)) +
                            " elements but has shape " + shape_str(o->shape()));
    p.has_offsets = true;
    inputs.push_back(astype(*o, Dtype::int32, s));
  } else {
    p.offset = std::get<int64_t>(offset);
  }
  if (freqs) {
    if (freqs->ndim() != 1 || freqs->shape(0) != dims / 2)
      throw OpError(op, "freqs must be one dimensional with size " + std::to_string(dims / 2) + " but got shape " +
                            shape_str(freqs->shape()));
    p.has_freqs = true;
    inputs.push_back(astype(*freqs, Dtype::float32, s));
  }
  return p;
}

// MLX's RoPE in float64 ops (the fused kernel takes float32 and half types), the angles in float64.
Array rope_float64(const Array& a, int64_t dims, bool traditional, std::optional<float> base, float scale,
                   const RopeOffset& offset, const std::optional<Array>& freqs, Stream s) {
  const Dtype f64 = Dtype::float64;
  auto mul = [&](const Array& x, const Array& y) { return binary(BinaryOp::multiply, x, y, s); };
  auto add = [&](const Array& x, const Array& y) { return binary(BinaryOp::add, x, y, s); };
  auto sub = [&](const Array& x, const Array& y) { return binary(BinaryOp::subtract, x, y, s); };
  auto last = [&](const Array& x, int64_t from, int64_t to) {  // x[..., from:to]
    Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1);
    start.back() = from, stop.back() = to;
    return slice(x, start, stop, step, s);
  };
  const int64_t half = dims / 2;
  Array inv = freqs ? binary(BinaryOp::divide, scalar_array(1.0, f64), astype(*freqs, f64, s), s)
                    : binary(BinaryOp::power, scalar_array(double(*base), f64),
                             binary(BinaryOp::divide, unary(UnaryOp::negative, arange(0, double(half), 1, f64, s), s),
                                    scalar_array(double(half), f64), s),
                             s);
  const Array* offsets = std::get_if<Array>(&offset);
  Array off = offsets ? astype(*offsets, f64, s) : scalar_array(double(std::get<int64_t>(offset)), f64);
  if (off.ndim() == 1) {  // one offset per batch row: (B, 1, ..., 1) against (T,)
    Shape sh(a.ndim() - 1, 1);
    sh[0] = off.shape(0);
    off = reshape(off, sh, s);
  }
  Array pos = mul(add(arange(0, double(a.shape(-2)), 1, f64, s), off), scalar_array(double(scale), f64));
  Array theta = mul(expand_dims(pos, {-1}, s), inv);
  Array c = unary(UnaryOp::cos, theta, s), sn = unary(UnaryOp::sin, theta, s);
  Shape lead(a.shape().begin(), a.shape().end() - 1);
  Array rot = [&] {
    if (!traditional) {
      Array x1 = last(a, 0, half), x2 = last(a, half, dims);
      return concatenate({sub(mul(x1, c), mul(x2, sn)), add(mul(x1, sn), mul(x2, c))}, -1, s);
    }
    Shape pairs = lead, flat = lead;
    pairs.insert(pairs.end(), {half, 2}), flat.push_back(dims);
    std::vector<Array> xs = split_sections(reshape(last(a, 0, dims), pairs, s), 2, -1, s);
    Array x1 = squeeze(xs[0], std::vector<int>{-1}, s), x2 = squeeze(xs[1], std::vector<int>{-1}, s);
    return reshape(stack({sub(mul(x1, c), mul(x2, sn)), add(mul(x1, sn), mul(x2, c))}, -1, s), flat, s);
  }();
  return dims < a.shape(-1) ? concatenate({rot, last(a, dims, a.shape(-1))}, -1, s) : rot;
}

}  // namespace

Array rope(const Array& x, int64_t dims, bool traditional, std::optional<float> base, float scale,
           const RopeOffset& offset, const std::optional<Array>& freqs, Stream s) {
  std::vector<Array> inputs{x};
  RopeParams p = rope_params("rope", x, dims, traditional, base, scale, offset, freqs, inputs, s);
  if (x.dtype() == Dtype::float64) return rope_float64(x, dims, traditional, base, scale, offset, freqs, s);
  if (!kernel_dtype(x.dtype()))
    throw OpError("rope",
                  std::string("the fused kernel takes float32, float16 or bfloat16, not ") + name_of(x.dtype()));
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<Rope>(p), std::move(inputs), s);
}

std::pair<Array, Array> norm_rope(const Array& x, const std::optional<Array>& weight, float eps, const Array& cache,
                                  const RopeOffset& offset, int64_t dims, bool traditional, std::optional<float> base,
                                  float scale, const std::optional<Array>& freqs, Stream s) {
  const char* op = "norm_rope";
  std::vector<Array> inputs{x};
  Dtype out = x.dtype();
  if (weight) {
    if (weight->ndim() != 1 || (x.ndim() > 0 && weight->shape(0) != x.shape(-1)))
      throw OpError(op, "weight must be one-dimensional with the size of x's last axis");
    out = promote(out, weight->dtype());
    inputs.push_back(astype(*weight, Dtype::float32, s));
  }
  inputs.push_back(cache);
  RopeParams p = rope_params(op, x, dims, traditional, base, scale, offset, freqs, inputs, s);
  if (!kernel_dtype(x.dtype()) || !kernel_dtype(out))
    throw OpError(op, std::string("x and the weight must be float32, float16 or bfloat16, not ") + name_of(out));
  Shape lead(x.shape().begin(), x.shape().end() - 2), cache_lead(cache.shape().begin(), cache.shape().end() - 2);
  if (cache.ndim() != x.ndim() || lead != cache_lead || cache.shape(-1) != x.shape(-1))
    throw OpError(op, "the cache " + shape_str(cache.shape()) + " must match x " + shape_str(x.shape()) +
                          " on every axis but the sequence axis (-2)");
  if (cache.dtype() != out)
    throw OpError(
        op, std::string("the cache must have the result's dtype ") + name_of(out) + ", not " + name_of(cache.dtype()));
  if (!p.has_offsets && (p.offset < 0 || p.offset + x.shape(-2) > cache.shape(-2)))
    throw OpError(op,
                  "rows " + std::to_string(p.offset) + " to " + std::to_string(p.offset + x.shape(-2)) +
                      " do not fit a cache of " + std::to_string(cache.shape(-2)) + " rows",
                  true);
  auto prim = std::make_shared<NormRope>(p, eps, weight.has_value());
  std::vector<Array> r =
      Array::lazy_multi({x.shape(), cache.shape()}, {out, out}, std::move(prim), std::move(inputs), s);
  return {r[0], r[1]};
}

}  // namespace nuvec
