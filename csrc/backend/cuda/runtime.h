// What the CUDA kernels share: the CUDA stream GPU work is queued on, device memory for outputs,
// error checks, and each family's registration.
#pragma once
#include <cuda_runtime.h>

#include "core/array.h"
#include "core/backend.h"

namespace nuvec::cuda {

// Every nuvec GPU stream queues on this one CUDA stream: its order is what makes reusing a freed
// device block safe while earlier kernels may still read it.
cudaStream_t stream();
void check(cudaError_t e, const char* what);  // a KernelError naming `what` when e is an error
void check_launch(const char* what);          // after a kernel launch

// Gives `out` fresh contiguous device memory.
void allocate(Array& out);
// Gives `out` the buffer of `in` when nothing else holds it (as the CPU's donate).
bool donate(const Array& in, Array& out, long holders = 1);

// The device address of an array's first element (host data is copied over first).
template <class T> const T* device_in(const Array& a) {
  return static_cast<const T*>(a.buffer()->device_data()) + a.offset();
}
template <class T> T* device_out(const Array& a) { return static_cast<T*>(a.buffer()->device_data()) + a.offset(); }

// Each family's kernels (backend/cuda/<family>.cu).
void register_random_kernels(Backend& b);
void register_reduce_kernels(Backend& b);
void register_scan_kernels(Backend& b);
void register_sort_kernels(Backend& b);

}  // namespace nuvec::cuda
