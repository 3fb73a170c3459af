// The CPU backend's registration: each kernel family adds its kernels to the backend, and the
// binding module calls register_cpu_backend() once at import (the core names no backend; an
// object file of a static library that only held self-registering statics would be dropped).
#pragma once
#include "core/backend.h"

namespace nuvec::cpu {

void register_cpu_backend();

// Each family's kernels (backend/cpu/<family>.cpp), and the element-wise fusion (fused.cpp).
void register_creation_kernels(Backend& b);
void register_elementwise_kernels(Backend& b);
void register_indexing_kernels(Backend& b);
void register_matmul_kernels(Backend& b);
void register_optimizer_kernels(Backend& b);
void register_distributed_kernels(Backend& b);
void register_conv_kernels(Backend& b);
void register_compiled_kernels(Backend& b);
void register_random_kernels(Backend& b);
void register_reduce_kernels(Backend& b);
void register_scan_kernels(Backend& b);
void register_sort_kernels(Backend& b);
void register_views_kernels(Backend& b);
void register_quantized_kernels(Backend& b);
void register_fast_norm_kernels(Backend& b);  // nuvec.fast: norms and RoPE
void register_attention_kernels(Backend& b);
void register_paged_kernels(Backend& b);  // called by register_attention_kernels
void register_gathered_kernels(Backend& b);
void register_hadamard_kernels(Backend& b);
void register_quantized_matmul_kernels(Backend& b);
void register_linalg_spectral_kernels(Backend& b);  // nuvec.linalg: QR, SVD, eigen
void register_linalg_kernels(Backend& b);           // nuvec.linalg: LU, triangular, Cholesky
void register_fft_kernels(Backend& b);
Fusion fusion();

}  // namespace nuvec::cpu
