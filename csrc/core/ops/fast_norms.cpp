// The row normalizations' ops: argument checks as MLX's, the result dtype, and the route: the
// fused primitive for float32 / float16 / bfloat16, the same formula in ops for float64.
#include "core/ops/fast_norms.h"

#include <string>

#include "core/ops.h"
#include "core/primitives/fast_norms.h"

namespace nuvec {

namespace {

bool kernel_dtype(Dtype d) { return d == Dtype::float32 || d == Dtype::float16 || d == Dtype::bfloat16; }

void check_vector(const char* op, const char* what, const Array& v, const Array& x) {
  if (v.ndim() != 1)
    throw OpError(op, std::string(what) + " must have 1 dimension but has " + std::to_string(v.ndim()) + " dimensions");
  if (v.shape(0) != x.shape(-1))
    throw OpError(op, std::string(what) + " must have the same size as the last dimension of x but has " +
                          std::to_string(v.shape(0)) + " elements");
}

// The output dtype (x's, promoted with the weight's and bias's), checked floating as MLX checks it.
Dtype result_dtype(const char* op, const Array& x, const std::optional<Array>& weight,
                   const std::optional<Array>& bias) {
  if (x.ndim() == 0) throw OpError(op, "Input must have at least 1 dimension but got input with 0 dimensions");
  Dtype out = x.dtype();
  if (weight) check_vector(op, "weight", *weight, x), out = promote(out, weight->dtype());
  if (bias) check_vector(op, "bias", *bias, x), out = promote(out, bias->dtype());
  if (!is_floating(out)) throw OpError(op, std::string("Received unsupported type ") + name_of(out));
  return out;
}

Array f32(const Array& a, Stream s) { return astype(a, Dtype::float32, s); }

// The float64 route: MLX's formula in ops (differentiable and batchable as ops are).
Array composed(NormKind kind, Array x, const std::optional<Array>& w, const std::optional<Array>& b, float eps,
               Dtype out, Stream s) {
  x = astype(x, out, s);
  Array e = scalar_array(double(eps), out);
  if (kind == NormKind::layer) x = binary(BinaryOp::subtract, x, mean(x, std::vector<int>{-1}, true, s), s);
  Array r = unary(UnaryOp::rsqrt,
                  binary(BinaryOp::add, mean(unary(UnaryOp::square, x, s), std::vector<int>{-1}, true, s), e, s), s);
  Array y = binary(BinaryOp::multiply, x, r, s);
  if (w) y = binary(BinaryOp::multiply, y, astype(*w, out, s), s);
  if (b) y = binary(BinaryOp::add, y, astype(*b, out, s), s);
  return y;
}

std::vector<Array> fused(NormKind kind, std::vector<Array> in, const std::optional<Array>& w,
                         const std::optional<Array>& b, float eps, Dtype out, Stream s) {
  Shape shape = in[0].shape();
  Dtype dt = in[0].dtype();
  if (w) in.push_back(f32(*w, s));
  if (b) in.push_back(f32(*b, s));
  auto prim = std::make_shared<RowNorm>(kind, w.has_value(), b.has_value(), eps);
  if (kind != NormKind::add_rms) return {Array::lazy(shape, out, std::move(prim), std::move(in), s)};
  return Array::lazy_multi({shape, shape}, {out, dt}, std::move(prim), std::move(in), s);
}

// x in a dtype the kernel reads: integer inputs become the (floating) result dtype first.
Array kernel_input(const Array& x, Dtype out, Stream s) { return kernel_dtype(x.dtype()) ? x : astype(x, out, s); }

}  // namespace

Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps, Stream s) {
  Dtype out = result_dtype("rms_norm", x, weight, std::nullopt);
  if (!kernel_dtype(out)) return composed(NormKind::rms, x, weight, std::nullopt, eps, out, s);
  return fused(NormKind::rms, {kernel_input(x, out, s)}, weight, std::nullopt, eps, out, s)[0];
}

Array layer_norm(const Array& x, const std::optional<Array>& weight, const std::optional<Array>& bias, float eps,
                 Stream s) {
  Dtype out = result_dtype("layer_norm", x, weight, bias);
  if (!kernel_dtype(out)) return composed(NormKind::layer, x, weight, bias, eps, out, s);
  return fused(NormKind::layer, {kernel_input(x, out, s)}, weight, bias, eps, out, s)[0];
}

std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual, const std::optional<Array>& weight,
                                     float eps, Stream s) {
  if (x.shape() != residual.shape() || x.dtype() != residual.dtype())
    throw OpError("add_rms_norm", "x and residual must have one shape and dtype but got " + shape_str(x.shape()) + " " +
                                      name_of(x.dtype()) + " and " + shape_str(residual.shape()) + " " +
                                      name_of(residual.dtype()));
  Dtype out = result_dtype("add_rms_norm", x, weight, std::nullopt);
  if (!kernel_dtype(x.dtype()) || !kernel_dtype(out)) {
    Array h = binary(BinaryOp::add, x, residual, s);
    return {composed(NormKind::rms, h, weight, std::nullopt, eps, out, s), h};
  }
  std::vector<Array> r = fused(NormKind::add_rms, {x, residual}, weight, std::nullopt, eps, out, s);
  return {r[0], r[1]};
}

}  // namespace nuvec
