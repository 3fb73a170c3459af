// The ops of rope and norm_rope: MLX's argument checks, then one primitive.
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

}  // namespace

Array rope(const Array& x, int64_t dims, bool traditional, std::optional<float> base, float scale,
           const RopeOffset& offset, const std::optional<Array>& freqs, Stream s) {
  std::vector<Array> inputs{x};
  RopeParams p = rope_params("rope", x, dims, traditional, base, scale, offset, freqs, inputs, s);
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
