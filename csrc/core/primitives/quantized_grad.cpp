// Differentiation rules of quantized_matmul: with respect to x (the product with the same weight,
// the other way round), the scales and the biases as MLX's vjp (and jvp, which MLX has for x
// alone); none for the packed weights.
#include "core/ops.h"
#include "core/ops/creation.h"
#include "core/ops/indexing.h"
#include "core/ops/matmul.h"
#include "core/ops/quantized.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/quantized.h"

namespace nuvec {
using namespace grad;

namespace {

Array swap_last(const Array& x) { return swapaxes(x, -1, -2, x.stream()); }

// The gradient of the dequantized weight, shaped as it (rows, cols), groups along cols.
Array weight_grad(const Array& x, const Array& cot, bool shared, bool transpose) {
  Stream s = cot.stream();
  Array xx = shared ? reshape(x, {-1, x.shape(-1)}, s) : x;
  Array cc = shared ? reshape(astype(cot, Dtype::float32, s), {-1, cot.shape(-1)}, s) : astype(cot, Dtype::float32, s);
  return transpose ? matmul(swap_last(cc), xx, s) : matmul(swap_last(xx), cc, s);
}

// d(loss)/d(scales), d(loss)/d(biases) from the gradient of the dequantized weight.
Array scales_grad(const Array& dweight, const Array& w, const Array& sc, QuantSpec q) {
  Stream s = dweight.stream();
  Array codes = dequantize(w, full(sc.shape(), scalar_array(1.0, Dtype::float32), Dtype::float32, s),
                           full(sc.shape(), scalar_array(0.0, Dtype::float32), Dtype::float32, s), q, std::nullopt,
                           Dtype::float32, s);
  Shape g = dweight.shape();
  g.back() /= q.group_size;
  g.push_back(q.group_size);
  return astype(sum(reshape(mul(dweight, codes), g, s), std::vector<int>{-1}, false, s), sc.dtype(), s);
}

// Sums of each group of the last axis.
Array group_sums(const Array& a, int group) {
  Shape g = a.shape();
  g.back() /= group;
  g.push_back(group);
  return sum(reshape(a, g, a.stream()), std::vector<int>{-1}, false, a.stream());
}

}  // namespace

std::vector<Array> QuantizedMatmul::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                        const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &x = primals[0], &w = primals[1], &sc = primals[2], &bi = primals[3], &cot = cotangents[0];
  Stream s = cot.stream();
  bool shared = w.ndim() == 2;
  std::vector<Array> out;
  std::optional<Array> dweight;
  for (int a : argnums) {
    if (a == 0) {
      out.push_back(astype(quantized_matmul(cot, w, sc, bi, !transpose_, q_, s), x.dtype(), s));
      continue;
    }
    if (a == 1) throw OpError("quantized_matmul", "[QuantizedMatmul::vjp] no gradient wrt the quantized weights.");
    if (!dweight) dweight = weight_grad(x, cot, shared, transpose_);
    if (a == 3) {
      out.push_back(astype(group_sums(*dweight, q_.group_size), bi.dtype(), s));
      continue;
    }
    out.push_back(scales_grad(*dweight, w, sc, q_));
  }
  return out;
}

std::vector<Array> QuantizedMatmul::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                        const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  const Array &x = primals[0], &w = primals[1], &sc = primals[2], &bi = primals[3];
  // Linear in x, in the scales and in the biases: each tangent through the same product.
  std::optional<Array> out;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const Array& t = tangents[i];
    Array term = [&] {
      switch (argnums[i]) {
        case 0: return quantized_matmul(t, w, sc, bi, transpose_, q_, s);
        case 2: return quantized_matmul(x, w, t, zeros_like(bi), transpose_, q_, s);
        case 3: return quantized_matmul(x, w, zeros_like(sc), t, transpose_, q_, s);
        default: throw OpError("quantized_matmul", "[QuantizedMatmul::jvp] No JVP wrt the quantized matrix.");
      }
    }();
    out = out ? add(*out, term) : term;
  }
  return {astype(*out, outputs[0].dtype(), s)};
}

// Item i is x[lhs_i] times weight rhs_i: x's gradient gathers the cotangents' products with the
// weights back (a scatter-add over lhs), the weights' sums each item's outer products over rhs.
std::vector<Array> GatherQmm::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &x = primals[0], &w = primals[1], &sc = primals[2], &bi = primals[3], &lhs = primals[4],
              &rhs = primals[5], &cot = cotangents[0];
  Stream s = cot.stream();
  const int64_t m = x.shape(-2), k = x.shape(-1);
  Array x3 = reshape(x, {-1, m, k}, s);
  std::vector<Array> out;
  std::optional<Array> dweight;
  for (int a : argnums) {
    if (a == 0) {
      Array items = gather_qmm(cot, w, sc, bi, std::nullopt, rhs, !transpose_, q_, s);
      Array dx = scatter(zeros_like(x3), {lhs}, astype(items, Dtype::float32, s), {0}, ScatterOp::add, s);
      out.push_back(reshape(dx, x.shape(), s));
      continue;
    }
    if (a == 1 || a > 3) throw OpError("gather_qmm", "no gradient wrt the quantized weights or the indices.");
    if (!dweight) {
      Array xg = gather(x3, {lhs}, {0}, s), c = astype(cot, Dtype::float32, s);
      Array items = transpose_ ? matmul(swap_last(c), xg, s) : matmul(swap_last(xg), c, s);
      Shape dshape{w.size() / (w.shape(-2) * w.shape(-1)), w.shape(-2), w.shape(-1) * 32 / q_.bits};
      Array acc = full(dshape, scalar_array(0.0, Dtype::float32), Dtype::float32, s);
      dweight = scatter(acc, {rhs}, items, {0}, ScatterOp::add, s);
    }
    Shape ws = w.shape();
    ws.back() = dweight->shape(-1);
    Array dw = reshape(*dweight, ws, s);
    out.push_back(a == 3 ? astype(group_sums(dw, q_.group_size), bi.dtype(), s) : scales_grad(dw, w, sc, q_));
  }
  return out;
}

std::vector<Array> GatherQmm::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                  const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  const Array &x = primals[0], &w = primals[1], &sc = primals[2], &bi = primals[3], &lhs = primals[4],
              &rhs = primals[5];
  std::optional<Array> out;
  for (size_t i = 0; i < argnums.size(); ++i) {
    const Array& t = tangents[i];
    Array term = [&] {
      switch (argnums[i]) {
        case 0: return gather_qmm(t, w, sc, bi, lhs, rhs, transpose_, q_, s);
        case 2: return gather_qmm(x, w, t, zeros_like(bi), lhs, rhs, transpose_, q_, s);
        case 3: return gather_qmm(x, w, zeros_like(sc), t, lhs, rhs, transpose_, q_, s);
        default: throw OpError("gather_qmm", "no JVP wrt the quantized weights or the indices.");
      }
    }();
    out = out ? add(*out, term) : term;
  }
  return {astype(*out, outputs[0].dtype(), s)};
}

namespace {
// g (..., K) as (..., K / group, group).
Array by_group(const Array& g, int group) {
  Shape shape = g.shape();
  shape.back() /= group;
  shape.push_back(group);
  return reshape(g, shape, g.stream());
}

Array codes_of(const Array& w, const Array& sc, QuantSpec q, Stream s) {
  return dequantize(w, full(sc.shape(), scalar_array(1.0, Dtype::float32), Dtype::float32, s),
                    full(sc.shape(), scalar_array(0.0, Dtype::float32), Dtype::float32, s), q, std::nullopt,
                    Dtype::float32, s);
}

void affine_only(QuantSpec q, const std::vector<int>& argnums) {
  for (int a : argnums)
    if (a == 0 || !q.has_biases())
      throw OpError("dequantize", "no gradient wrt the quantized weights or the floating-point modes' scales");
}
}  // namespace

std::vector<Array> Dequantize::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                   const std::vector<int>& argnums, const std::vector<Array>&) {
  affine_only(q_, argnums);
  Stream s = cotangents[0].stream();
  Array c = by_group(astype(cotangents[0], Dtype::float32, s), q_.group_size);
  std::vector<Array> out;
  for (int a : argnums) {
    Array terms = a == 1 ? mul(c, by_group(codes_of(primals[0], primals[1], q_, s), q_.group_size)) : c;
    out.push_back(astype(sum(terms, std::vector<int>{-1}, false, s), primals[size_t(a)].dtype(), s));
  }
  return out;
}

std::vector<Array> Dequantize::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                   const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  affine_only(q_, argnums);
  Stream s = outputs[0].stream();
  std::optional<Array> out;
  for (size_t i = 0; i < argnums.size(); ++i) {
    Array t = expand_dims(astype(tangents[i], Dtype::float32, s), {-1}, s);
    Array term = argnums[i] == 1 ? mul(by_group(codes_of(primals[0], primals[1], q_, s), q_.group_size), t)
                                 : broadcast_to(t, by_group(outputs[0], q_.group_size).shape(), s);
    term = reshape(term, outputs[0].shape(), s);
    out = out ? add(*out, term) : term;
  }
  return {astype(*out, outputs[0].dtype(), s)};
}

}  // namespace nuvec
