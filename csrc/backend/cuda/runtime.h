// What the CUDA kernels share: the CUDA stream GPU work is queued on, device memory for outputs,
// error checks, and each family's registration.
#pragma once
#include "backend/cuda/stream.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/primitives/elementwise.h"

namespace nuvec::cuda {

// Gives `out` fresh contiguous device memory.
void allocate(Array& out);
// Gives `out` the buffer of `in` when nothing else holds it (as the CPU's donate).
bool donate(const Array& in, Array& out, long holders = 1);

// The device address of an array's first element, whatever its dtype (host data is copied over
// first).
const void* device_address(const Array& a);
// The same, typed.
template <class T> const T* device_in(const Array& a) {
  return static_cast<const T*>(a.buffer()->device_data()) + a.offset();
}
template <class T> T* device_out(const Array& a) { return static_cast<T*>(a.buffer()->device_data()) + a.offset(); }

struct KernelParams;  // elementwise_launch.h
// The parameterised element-wise ops' parameters as kernel data (elementwise.cpp).
KernelParams kernel_params(const OpParams& p);
// The element-wise fusion (fused.cpp).
Fusion fusion();

// Each family's kernels (backend/cuda/<family>.cu).
void register_attention_kernels(Backend& b);  // scaled_dot_product_attention (attention.cpp)
void register_compiled_kernels(Backend& b);   // compile's fused groups, op by op (fused.cpp)
void register_creation_kernels(Backend& b);
void register_elementwise_kernels(Backend& b);
void register_fast_norm_kernels(Backend& b);  // rms_norm, layer_norm (fast_norms.cpp)
void register_indexing_kernels(Backend& b);
void register_matmul_kernels(Backend& b);
void register_quantized_kernels(Backend& b);  // quantized_matmul, gather_qmm (quantized.cpp)
void register_random_kernels(Backend& b);
void register_rope_kernels(Backend& b);
void register_shape_kernels(Backend& b);  // the layout primitives that copy (shape.cpp)
void register_reduce_kernels(Backend& b);
void register_scan_kernels(Backend& b);
void register_sort_kernels(Backend& b);

}  // namespace nuvec::cuda
