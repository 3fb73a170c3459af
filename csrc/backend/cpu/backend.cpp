#include "backend/cpu/backend.h"

#include "backend/cpu/kernels.h"

namespace nuvec::cpu {

void register_cpu_backend() {
  static Backend* cpu = [] {
    auto* b = new Backend{"cpu", DeviceType::cpu, isa_name(isa()), fusion(), {}};
    for (auto add : {register_creation_kernels,
                     register_elementwise_kernels,
                     register_indexing_kernels,
                     register_matmul_kernels,
                     register_optimizer_kernels,
                     register_distributed_kernels,
                     register_conv_kernels,
                     register_compiled_kernels,
                     register_random_kernels,
                     register_reduce_kernels,
                     register_scan_kernels,
                     register_sort_kernels,
                     register_views_kernels,
                     register_quantized_kernels,
                     register_quantized_matmul_kernels,
                     register_fast_norm_kernels,
                     register_attention_kernels,
                     register_gathered_kernels,
                     register_hadamard_kernels,
                     register_linalg_spectral_kernels,
                     register_linalg_kernels,
                     register_fft_kernels})
      add(*b);
    return b;
  }();
  install_backend(cpu);
}

}  // namespace nuvec::cpu
