// One matrix product as the CUDA kernels see it (backend/cuda/matmul.cpp builds it), and the paths
// that compute it: the row-wise kernel (matmul.cu), the tiled kernels (matmul_tiled.cu) and
// cuBLASLt (cublaslt.cpp). The kernels queue on `stream`; the caller checks the launch. Kernel
// files include no core header but this one's (nvcc's front end rejects core/array.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

constexpr int kMaxBatchDims = 8;

// C (batch x m x n, contiguous) = A (m x k) B (k x n) per batch. Strides are in elements; a batch
// index splits over batch_shape (the last axis fastest) into element offsets of A and B.
struct Gemm {
  const void* a;
  const void* b;
  void* c;
  int64_t m, n, k;
  int64_t sam, sak;  // A's row and k strides
  int64_t sbk, sbn;  // B's k and column strides
  int64_t batch;
  int batch_dims;
  int64_t batch_shape[kMaxBatchDims], batch_a[kMaxBatchDims], batch_b[kMaxBatchDims];
};

#ifdef __CUDACC__
#define NUVEC_HOST_DEVICE __host__ __device__
#else
#define NUVEC_HOST_DEVICE
#endif
// Element offsets of A and B for batch `bi`.
NUVEC_HOST_DEVICE inline void batch_offsets(const Gemm& g, int64_t bi, int64_t& oa, int64_t& ob) {
  oa = 0, ob = 0;
  for (int d = g.batch_dims - 1; d >= 0; --d) {
    int64_t idx = bi % g.batch_shape[d];
    bi /= g.batch_shape[d];
    oa += idx * g.batch_a[d], ob += idx * g.batch_b[d];
  }
}
#undef NUVEC_HOST_DEVICE

// At most kRowIndependentRows rows, every float dtype: each element's sequence over K is fixed by
// K alone, whatever m, the tile or the layout (matmul.cu).
void gemm_rowwise(const Gemm& g, Dtype d, cudaStream_t stream);
// More rows, when cuBLASLt is absent: tensor cores for float16 and bfloat16, FMA tiles for
// float32 and float64 (matmul_tiled.cu).
void gemm_tiled(const Gemm& g, Dtype d, cudaStream_t stream);

}  // namespace nuvec::cuda
