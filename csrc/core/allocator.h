// Buffers, the caching allocator and MLX's memory counters.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace nuvec {

// A block of memory an array reads. Owned by the allocator (returned to its cache when the
// last reference goes) or borrowed from outside (NumPy, DLPack, a mapped file) with a deleter.
class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t bytes);  // throws KernelError(memory)
  static std::shared_ptr<Buffer> external(void* ptr, size_t bytes, std::function<void()> release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return ptr_; }
  size_t size() const { return size_; }
  bool owned() const { return !release_; }

 private:
  Buffer(void* p, size_t n, size_t block, std::function<void()> r)
      : ptr_(p), size_(n), block_(block), release_(std::move(r)) {}
  void* ptr_;
  size_t size_;
  size_t block_;  // bytes reserved by the allocator (0 for external buffers)
  std::function<void()> release_;
};

namespace memory {
size_t active();
size_t peak();
void reset_peak();
size_t cache();
size_t set_memory_limit(size_t limit);  // returns the previous limit
size_t memory_limit();
size_t set_cache_limit(size_t limit);  // returns the previous limit
void clear_cache();
}  // namespace memory

}  // namespace nuvec
