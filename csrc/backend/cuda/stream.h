// The CUDA stream and error checks, apart from runtime.h: for kernel files that take plain data
// (no Array), such as elementwise.cu behind elementwise_launch.h.
#pragma once
#include <cuda_runtime.h>

namespace nuvec::cuda {

// Each nuvec GPU stream queues its kernels on a CUDA stream of its own: stream() is the calling
// thread's, set by the backend's enter() before each node (the legacy default stream before any).
// Buffers order the queues where their uses cross (core/allocator.h's device_data()).
cudaStream_t stream();
int queue();                                  // stream()'s queue: 0 to 63 (-1 for the legacy default stream)
void check(cudaError_t e, const char* what);  // a KernelError naming `what` when e is an error
void check_launch(const char* what);          // after a kernel launch

}  // namespace nuvec::cuda
