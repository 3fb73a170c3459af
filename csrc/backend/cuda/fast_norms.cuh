// The row normalizations (RMS norm, layer norm, residual add + RMS norm) as the CUDA kernel sees
// them: backend/cuda/fast_norms.cpp builds the rows, fast_norms.cu computes them.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

// rows x d row-contiguous arrays; w and b float32 (d,) or null; res and h only for add_rms
// (h = x + res in h_type, which the norm then reads). Sums in float32, as the CPU.
struct NormRows {
  const void* x;
  const void* res;
  const float* w;
  const float* b;
  void* y;
  void* h;
  int64_t rows, d;
  Dtype x_type, res_type, y_type, h_type;
  bool layer, add;
  float eps;
};

void norm_rows(const NormRows& n, cudaStream_t stream);

}  // namespace nuvec::cuda
