// cuBLASLt for products of more than kRowIndependentRows rows (docs/cuda.md): loaded with dlopen at
// first use, so nuvec imports where it is absent. NUVEC_CUBLASLT=path names the library; "0" or
// "off" keeps it unused (then the tiled kernels run).
#pragma once
#include "backend/cuda/matmul.cuh"

namespace nuvec::cuda::cublaslt {

// Whether the library loaded (tried once).
bool available();
// Computes g with the first algorithm of cuBLASLt's heuristic for its shape, split-K and every
// other reduction scheme excluded (so each element is one sum, the same bits run to run); false,
// having computed nothing, when the library is absent, or rejects the layout or shape.
bool gemm(const Gemm& g, Dtype d);

}  // namespace nuvec::cuda::cublaslt
