// The row normalizations on the GPU: one block per row, each thread summing the same elements in
// the same order for every pass, then a fixed tree across the block. A row's bits depend on d
// alone, never on the other rows (docs/cuda.md).
#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/fast_norms.cuh"

namespace nuvec::cuda {
namespace {

constexpr int kThreads = 256;

// The block's sum of each thread's v: a butterfly in each warp, then one across the warps' sums.
__device__ float block_sum(float v, float* partial) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  __syncthreads();  // partial is free: the previous sum has been read
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? partial[lane] : 0.0f;
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__global__ void __launch_bounds__(kThreads) norm_kernel(NormRows n) {
  __shared__ float partial[kThreads / 32];
  float d = float(n.d);
  for (int64_t row = blockIdx.x; row < n.rows; row += gridDim.x) {
    int64_t base = row * n.d;
    // What the norm reads: x, or h = x + residual rounded to its dtype (each thread reads back
    // only the elements it wrote).
    const void* src = n.add ? n.h : n.x;
    Dtype src_type = n.add ? n.h_type : n.x_type;
    float first = 0.0f;
    for (int64_t j = threadIdx.x; j < n.d; j += kThreads) {
      if (n.add)
        store_float(n.h, n.h_type, base + j,
                    load_float(n.x, n.x_type, base + j) + load_float(n.res, n.res_type, base + j));
      float v = load_float(src, src_type, base + j);
      first += n.layer ? v : v * v;
    }
    float sum = block_sum(first, partial), mean = 0.0f;
    if (n.layer) {
      mean = sum / d;
      float second = 0.0f;
      for (int64_t j = threadIdx.x; j < n.d; j += kThreads) {
        float v = load_float(src, src_type, base + j) - mean;
        second += v * v;
      }
      sum = block_sum(second, partial);
    }
    float inv = 1.0f / sqrtf(sum / d + n.eps);
    for (int64_t j = threadIdx.x; j < n.d; j += kThreads) {
      float v = load_float(src, src_type, base + j);
      if (n.layer) v = v - mean;
      v = v * inv;
      if (n.w) v = v * n.w[j];
      if (n.b) v = v + n.b[j];
      store_float(n.y, n.y_type, base + j, v);
    }
  }
}

}  // namespace

void norm_rows(const NormRows& n, cudaStream_t stream) {
  unsigned blocks = unsigned(n.rows < (int64_t(1) << 20) ? n.rows : (int64_t(1) << 20));
  norm_kernel<<<blocks, kThreads, 0, stream>>>(n);
}

}  // namespace nuvec::cuda
