// Quantization as MLX's: quantize, dequantize and the products with quantized weights
// (docs/quantization.md).
#pragma once
#include <optional>
#include <vector>

#include "core/ops/common.h"
#include "core/primitives/quantized.h"

namespace nuvec {

// (packed words, scales[, biases]) of w (at least 2-D, the last axis a multiple of the group size).
std::vector<Array> quantize(const Array& w, QuantSpec q, const std::optional<Array>& global_scale, Stream s);
// The values the packed words stand for, of `dtype` (default: the scales' (and biases') dtype in
// affine mode, bfloat16 in the floating-point modes).
Array dequantize(const Array& w, const Array& scales, const std::optional<Array>& biases, QuantSpec q,
                 const std::optional<Array>& global_scale, std::optional<Dtype> dtype, Stream s);
// x @ W.T (transpose) or x @ W with W the dequantized weight, computed in float32; the result has
// promote(x, scales)'s dtype; batch axes of x and w broadcast. activation_bits 8 (nuvec's own, not
// MLX's) rounds x to int8 per group for transposed affine 4- or 8-bit weights (QuantizedProduct).
Array quantized_matmul(const Array& x, const Array& w, const Array& scales, const std::optional<Array>& biases,
                       bool transpose, QuantSpec q, Stream s, int activation_bits = 0);
// quantized_matmul of x's batch items lhs_indices with w's rhs_indices (indices into the flattened
// batches; by default every item in order), as MLX's gather_qmm: the result has the indices'
// broadcast shape, then (M, N).
Array gather_qmm(const Array& x, const Array& w, const Array& scales, const std::optional<Array>& biases,
                 const std::optional<Array>& lhs_indices, const std::optional<Array>& rhs_indices, bool transpose,
                 QuantSpec q, Stream s, int activation_bits = 0);

}  // namespace nuvec
