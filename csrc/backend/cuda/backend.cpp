#include "backend/cuda/backend.h"

#include <string>

#include "backend/cuda/runtime.h"
#include "core/allocator.h"
#include "core/errors.h"

namespace nuvec::cuda {
namespace {

cudaStream_t g_stream = nullptr;
std::optional<DeviceInfo> g_info;

void* device_allocate(size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // clears the sticky error: the pool frees its cache and tries again
    return nullptr;
  }
  return p;
}

void device_free(void* p) { cudaFree(p); }

// cudaMemcpy runs on the legacy default stream, which waits for the work queued on g_stream (a
// blocking stream) before it: the copy sees what earlier kernels wrote.
void to_host(void* host, const void* device, size_t bytes) {
  check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "copying an array to the host");
}

void to_device(void* device, const void* host, size_t bytes) {
  check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "copying an array to the device");
}

void synchronize() { check(cudaStreamSynchronize(g_stream), "waiting for the GPU"); }

}  // namespace

cudaStream_t stream() { return g_stream; }

std::optional<DeviceInfo> device_info() { return g_info; }

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw KernelError(e == cudaErrorMemoryAllocation ? EvalErrorKind::memory : EvalErrorKind::other,
                      std::string("CUDA error ") + cudaGetErrorName(e) + " " + what + ": " + cudaGetErrorString(e));
}

void check_launch(const char* what) { check(cudaGetLastError(), what); }

const void* device_address(const Array& a) {
  return static_cast<const char*>(a.buffer()->device_data()) + a.offset() * int64_t(a.itemsize());
}

void allocate(Array& out) { out.set_contiguous_data(Buffer::allocate_device(out.nbytes())); }

bool donate(const Array& in, Array& out, long holders) {
  // As the CPU's: a traced node keeps its value for the transform walking the graph.
  if (in.traced() || in.use_count() != holders || !in.buffer() || in.buffer().use_count() != 1 || !in.buffer()->owned())
    return false;
  if (in.itemsize() != out.itemsize() || in.shape() != out.shape() || !in.row_contiguous() || in.offset() != 0)
    return false;
  in.buffer()->written_on_device();
  out.set_contiguous_data(in.buffer());
  return true;
}

bool register_cuda_backend() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // no driver or no device: the CPU alone
    return false;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaStreamCreate(&g_stream) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  g_info = DeviceInfo{prop.name, "sm_" + std::to_string(prop.major) + std::to_string(prop.minor), prop.totalGlobalMem};
  DeviceMemory memory;
  memory.allocate = device_allocate;
  memory.free = device_free;
  memory.to_host = to_host;
  memory.to_device = to_device;
  memory.capacity = prop.totalGlobalMem;
  set_device_memory(memory);

  static Backend* gpu = [&] {
    auto* b = new Backend{"cuda", DeviceType::gpu, g_info->name + " (" + g_info->architecture + ")", fusion(), {}};
    b->synchronize = synchronize;
    for (auto add :
         {register_attention_kernels, register_compiled_kernels, register_creation_kernels,
          register_elementwise_kernels, register_fast_norm_kernels, register_indexing_kernels, register_matmul_kernels,
          register_quantized_kernels, register_random_kernels, register_reduce_kernels, register_rope_kernels,
          register_scan_kernels, register_shape_kernels, register_sort_kernels})
      add(*b);
    // A primitive without a CUDA kernel yet runs its CPU kernel on the host copies of its inputs
    // (docs/cuda.md lists which); its output moves to the device when a GPU kernel reads it.
    if (Backend* cpu = backend_for(DeviceType::cpu))
      for (size_t slot = 0; slot < cpu->kernels.size(); ++slot)
        if (!b->kernel(int(slot)) && cpu->kernels[slot]) b->set_kernel(int(slot), cpu->kernels[slot]);
    return b;
  }();
  install_backend(gpu);
  return true;
}

}  // namespace nuvec::cuda
