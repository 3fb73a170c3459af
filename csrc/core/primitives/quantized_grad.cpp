// Differentiation rules of quantized_matmul: with respect to x (the product with the same weight,
// the other way round), the scales and the biases as MLX's vjp (and jvp, which MLX has for x
// alone); none for the packed weights.
#include "core/ops.h"
#include "core/ops/creation.h"
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
    Array codes = dequantize(w, full(sc.shape(), scalar_array(1.0, Dtype::float32), Dtype::float32, s),
                             full(sc.shape(), scalar_array(0.0, Dtype::float32), Dtype::float32, s), q_,
                             std::nullopt, Dtype::float32, s);
    out.push_back(astype(group_sums(mul(*dweight, codes), q_.group_size), sc.dtype(), s));
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

}  // namespace nuvec
