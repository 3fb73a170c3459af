// Rotary positional encoding as the CUDA kernel sees it: backend/cuda/rope.cpp builds the rows,
// rope.cu computes them.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

// x and y: rows x d, row-contiguous, rows_per_batch rows per batch row and t positions per
// sequence (row r is at position r % t). Offsets: int32, one per batch row (per_batch_offsets) or
// one for all, or null (then `offset`). Periods: float32 freqs (half,), or base^(2i / dims).
struct RopeRows {
  const void* x;
  void* y;
  Dtype type;
  int64_t rows, d, t, rows_per_batch, half;
  const int32_t* offsets;
  bool per_batch_offsets;
  int64_t offset;
  const float* freqs;
  float base, scale;
  bool traditional, inverse;
};

void rope_rows(const RopeRows& r, cudaStream_t stream);

}  // namespace nuvec::cuda
