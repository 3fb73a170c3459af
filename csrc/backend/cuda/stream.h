// The CUDA stream and error checks, apart from runtime.h: for kernel files that take plain data
// (no Array), such as elementwise.cu behind elementwise_launch.h.
#pragma once
#include <cuda_runtime.h>

namespace nuvec::cuda {

// Every nuvec GPU stream queues on this one CUDA stream: its order is what makes reusing a freed
// device block safe while earlier kernels may still read it.
cudaStream_t stream();
void check(cudaError_t e, const char* what);  // a KernelError naming `what` when e is an error
void check_launch(const char* what);          // after a kernel launch

}  // namespace nuvec::cuda
