// The fused element-wise kernel: each thread takes elements in a grid-stride loop and runs a chain's
// steps on each in registers, through the same op functions as the op-by-op kernels
// (elementwise.cu), so a fused result has the bits of the unfused one.
#include "backend/cuda/fused.cuh"
#include "backend/cuda/ops.cuh"
#include "backend/cuda/stream.h"

namespace nuvec::cuda {
namespace {

template <class T> __device__ inline void apply_step(const FusedStep& s, T a, T b, Result<T>& r) {
  if (s.arity == 1)
    apply(UnaryOp(s.op), a, s.params, r);
  else
    apply(BinaryOp(s.op), a, b, s.params, r);
}

// The steps unrolled, so each result is a register: an operand picks its step's result by
// comparison (a dynamic index would put the results in local memory). The arguments stay in the
// constant bank (__grid_constant__), read with the step's dynamic fields, never copied per thread.
template <class T> __global__ void fused_kernel(const __grid_constant__ FusedArgs a) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n; i += int64_t(gridDim.x) * blockDim.x) {
    T r[kFusedMaxSteps];
#pragma unroll
    for (int s = 0; s < kFusedMaxSteps; ++s) {
      if (s >= a.steps) break;
      const FusedStep& st = a.step[s];
      T v[2] = {};
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        if (k >= st.arity) break;
        const int src = st.src[k];
        if (src < 0) {
          const int j = -src - 1;
          v[k] = a.in[j] ? static_cast<const T*>(a.in[j])[a.scalar[j] ? 0 : i] : T(a.value[j]);
        } else {
#pragma unroll
          for (int t = 0; t < s; ++t)
            if (src == t) v[k] = r[t];
        }
      }
      Result<T> res;
      apply_step(st, v[0], v[1], res);
      r[s] = res.t;
      if (st.out) static_cast<T*>(st.out)[i] = res.t;
    }
  }
}

}  // namespace

bool fused_dtype(Dtype d) { return d == Dtype::float32; }

void launch_fused(Dtype d, const FusedArgs& a) {
  const int threads = 256;
  int64_t blocks = (a.n + threads - 1) / threads;
  blocks = blocks < 8192 ? blocks : 8192;
  (void)d;  // float32 alone (fused_dtype)
  fused_kernel<float><<<unsigned(blocks), threads, 0, stream()>>>(a);
}

}  // namespace nuvec::cuda
