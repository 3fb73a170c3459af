// Buffers, the caching allocator and MLX's memory counters.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace nuvec {

// A GPU backend's memory, registered at its load (the core names no backend): plain device
// allocations, and copies that wait for the device's queued work.
struct DeviceMemory {
  void* (*allocate)(size_t bytes) = nullptr;  // null when the device has no room
  void (*free)(void* p) = nullptr;
  void (*to_host)(void* host, const void* device, size_t bytes) = nullptr;  // throws KernelError
  void (*to_device)(void* device, const void* host, size_t bytes) = nullptr;
  size_t capacity = 0;  // the device's memory, bytes
  // A device with several queues (CUDA streams, one per nuvec stream; at most 64): the queue the
  // calling thread's kernels go to (-1: one ordered with every queue both ways, needing no wait),
  // and a wait that orders that queue after what the queues of a mask (bit q: queue q) hold now.
  // Null with one queue.
  int (*queue)() = nullptr;
  void (*order_after)(uint64_t queues) = nullptr;
};
void set_device_memory(const DeviceMemory& m);

// A block of memory an array reads. Owned by the allocator (returned to its cache when the
// last reference goes) or borrowed from outside (NumPy, DLPack, a mapped file) with a deleter.
// Where a GPU backend runs, a buffer has a host copy, a device copy or both: arrays move between
// devices on use, as MLX's unified memory lets them (a CPU read of a GPU result copies it back).
class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t bytes);         // host memory; throws KernelError(memory)
  static std::shared_ptr<Buffer> allocate_device(size_t bytes);  // device memory; likewise
  static std::shared_ptr<Buffer> external(void* ptr, size_t bytes, std::function<void()> release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // The host address; a buffer last written on the device is copied back first.
  void* data() const { return valid_.load(std::memory_order_acquire) & kHost ? ptr_ : host_slow(); }
  // The device address for a kernel about to be queued that reads it; host data is copied over
  // first. On a device with several queues, the kernel's queue is first ordered after the write
  // of the buffer's contents on another queue.
  void* device_data() const {
    void* p = valid_.load(std::memory_order_acquire) & kDevice ? dev_ : device_slow();
    read_on_queue();
    return p;
  }
  // A kernel is about to write the buffer in place (a donated input) on the host or on the device:
  // the other copy goes stale.
  void written_on_host();
  void written_on_device();
  // Whether the host copy is current (reading data() copies nothing).
  bool on_host() const { return valid_.load(std::memory_order_acquire) & kHost; }
  size_t size() const { return size_; }
  bool owned() const { return !release_; }

 private:
  static constexpr uint8_t kHost = 1, kDevice = 2;
  Buffer(void* p, size_t n, size_t block, std::function<void()> r)
      : ptr_(p), size_(n), block_(block), release_(std::move(r)) {}
  void* host_slow() const;
  void* device_slow() const;
  void read_on_queue() const;
  void write_on_queue(uint64_t earlier) const;
  uint64_t queues_used() const;  // the queues whose work on the device copy a new writer waits for
  mutable void* ptr_;            // host memory (null until a device-born buffer is read on the host)
  mutable void* dev_ = nullptr;
  size_t size_;
  mutable size_t block_;          // host bytes reserved by the allocator (0 for external buffers)
  mutable size_t dev_block_ = 0;  // device bytes reserved by the device pool
  mutable std::atomic<uint8_t> valid_{kHost};
  // Where a device with several queues used the device copy: the queue that wrote it (-1: none
  // pending) and the queues ordered after that write which read it (bits), whose work a new writer
  // (a donation, or the pool's next owner of the block) must wait for.
  mutable std::atomic<int> writer_{-1};
  mutable std::atomic<uint64_t> users_{0};
  std::function<void()> release_;
};

// MLX's memory counters and limits: those of the default device's pool (the device's memory
// where a GPU is the default, as MLX on CUDA; else the host's).
namespace memory {
size_t active();
size_t peak();
void reset_peak();
size_t cache();
size_t set_memory_limit(size_t limit);  // returns the previous limit
size_t memory_limit();
size_t set_cache_limit(size_t limit);  // returns the previous limit
void clear_cache();
// Called by clear_cache() first: a kernel family's own cache drops what only it still holds.
void on_clear_cache(void (*drop)());
}  // namespace memory

}  // namespace nuvec
