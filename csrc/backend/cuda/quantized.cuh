// MLX's affine quantized products as the CUDA kernels see them: backend/cuda/quantized.cpp builds
// the problem, quantized.cu computes it. Kernel files include no core header but dtype.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

// y (m x n, y_type) = x (m x k, float32, row-contiguous) @ W.T for one weight W (n x k) packed as
// MLX packs it: each row k * bits / 32 little-endian words of `bits`-bit codes, with a scale and a
// bias per group of `group` codes (n x k / group, s_type and b_type, row-contiguous). A batch of
// `items` such products: item z reads x item lhs[z] (z without lhs) and weight item rhs[z] (z
// without rhs) at the item strides (x_item elements, w_item words, p_item scales and biases; 0
// for one shared weight), and writes y item z (m x n further on).
struct QuantizedRows {
  const float* x;
  const uint32_t* w;
  const void* scales;
  const void* biases;
  void* y;
  int64_t m, n, k;
  int bits, group;
  Dtype s_type, b_type, y_type;
  int64_t items = 1, x_item = 0, w_item = 0, p_item = 0;
  const uint32_t* lhs = nullptr;  // device indices (gather_qmm), or null
  const uint32_t* rhs = nullptr;
};

// Whether the kernels take this bit width and group size.
bool quantized_rows_supported(int bits, int group);
// One row of x at a time, whatever m (and each item alike): element (i, j) is sum over the groups g, in order, of
// scale_jg * dot(codes, x) + bias_jg * sum(x), each over the group's codes in order (the one-row
// sequence, so a row gets the bits of its one-row product, quantized.cu).
void quantized_rows(const QuantizedRows& q, cudaStream_t stream);
// Item 0's W dequantized into `out` (n x k float32): scale * code + bias, as MLX's dequantize.
void dequantize_rows(const QuantizedRows& q, float* out, cudaStream_t stream);
// dst (count elements of dst_type) = src (float32).
void store_floats(const float* src, void* dst, Dtype dst_type, int64_t count, cudaStream_t stream);

}  // namespace nuvec::cuda
