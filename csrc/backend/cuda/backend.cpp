#include "backend/cuda/backend.h"

#include <atomic>
#include <mutex>
#include <string>

#include "backend/cuda/runtime.h"
#include "core/allocator.h"
#include "core/errors.h"

namespace nuvec::cuda {
namespace {

// A queue: a CUDA stream (blocking: the legacy default stream's copies wait for it) and an event
// that another queue waits on to be ordered after it. One per nuvec GPU stream (streams whose
// indices agree modulo kQueues share one), made at its first node and kept, as MLX keeps a
// stream's command queue.
constexpr int kQueues = 64;  // the bits of core/allocator.h's queue masks
struct Queue {
  cudaStream_t stream = nullptr;
  cudaEvent_t mark = nullptr;
};
std::mutex g_queues_mutex;
Queue g_queues[kQueues];
// The calling thread's queue (set by enter()); before any, the legacy default stream (-1), which
// is ordered after every queue's work and they after its.
thread_local int t_queue = -1;
thread_local cudaStream_t t_stream = nullptr;
std::atomic<uint64_t> g_waits{0};
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

// cudaMemcpy runs on the legacy default stream, which waits for the work queued on every queue (a
// blocking stream) before it: the copy sees what earlier kernels wrote.
void to_host(void* host, const void* device, size_t bytes) {
  check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "copying an array to the host");
}

void to_device(void* device, const void* host, size_t bytes) {
  check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "copying an array to the device");
}

void synchronize() { check(cudaDeviceSynchronize(), "waiting for the GPU"); }

Queue& queue_of(int slot) {
  std::lock_guard<std::mutex> l(g_queues_mutex);
  Queue& q = g_queues[slot];
  if (!q.stream) {
    check(cudaStreamCreate(&q.stream), "making a CUDA stream");
    check(cudaEventCreateWithFlags(&q.mark, cudaEventDisableTiming), "making a CUDA event");
  }
  return q;
}

int slot_of(int stream_index) { return stream_index % kQueues; }

void enter(const Stream& s) {
  const int slot = slot_of(s.index);
  if (t_queue == slot) return;
  t_stream = queue_of(slot).stream;
  t_queue = slot;
}

int current_queue() { return t_queue; }

// The calling thread's queue waits for what the queues of the mask hold now.
void order_after(uint64_t queues) {
  for (int q = 0; q < kQueues; ++q)
    if (queues >> q & 1 && q != t_queue) {
      Queue& from = queue_of(q);
      check(cudaEventRecord(from.mark, from.stream), "marking a CUDA stream");
      check(cudaStreamWaitEvent(t_stream, from.mark, 0), "ordering two CUDA streams");
      g_waits.fetch_add(1, std::memory_order_relaxed);
    }
}

}  // namespace

cudaStream_t stream() { return t_stream; }

int queue() { return t_queue; }

uintptr_t stream_handle(int index) { return g_info ? reinterpret_cast<uintptr_t>(queue_of(slot_of(index)).stream) : 0; }

uint64_t queue_waits() { return g_waits.load(std::memory_order_relaxed); }

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
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
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
  memory.queue = current_queue;
  memory.order_after = order_after;
  set_device_memory(memory);

  static Backend* gpu = [&] {
    auto* b = new Backend{"cuda", DeviceType::gpu, g_info->name + " (" + g_info->architecture + ")", fusion(), {}};
    b->synchronize = synchronize;
    b->enter = enter;
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
