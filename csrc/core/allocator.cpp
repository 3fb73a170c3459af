#include "core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <string>

#include "core/errors.h"

namespace nuvec {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kPage = 4096;
constexpr size_t kHuge = size_t(2) << 20;

// Size classes: small blocks round to 64 bytes, large ones to pages, so freed blocks are
// reused by requests of nearly the same size.
size_t block_size(size_t bytes) {
  if (bytes == 0) bytes = 1;
  size_t unit = bytes < (size_t(1) << 16) ? kAlign : kPage;
  return (bytes + unit - 1) / unit * unit;
}

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? size_t(pages) * size_t(size) : size_t(1) << 34;
}

class Allocator {
 public:
  Allocator() : memory_limit_(physical_memory() / 4 * 3), cache_limit_(memory_limit_) {}

  // Returns a block of at least `block` bytes and sets `block` to its real size.
  void* take(size_t& block) {
    std::lock_guard<std::mutex> lock(mu_);
    // The limit holds for cached blocks too: it bounds what live arrays hold.
    if (active_ + block > memory_limit_)
      throw KernelError(EvalErrorKind::memory,
                        "allocating " + std::to_string(block) + " bytes would exceed the memory limit of " +
                            std::to_string(memory_limit_) + " bytes (" + std::to_string(active_) +
                            " in use); raise it with set_memory_limit");
    void* p = from_cache(block);
    if (!p) {
      // Cached blocks count against the machine, not the limit: return them before a fresh one.
      if (active_ + cached_ + block > memory_limit_) release_cache(0);
      p = fresh(block);
    }
    active_ += block;
    if (active_ > peak_) peak_ = active_;
    return p;
  }

  void give(void* p, size_t block) {
    std::lock_guard<std::mutex> lock(mu_);
    active_ -= block;
    cached_ += block;
    auto entry = lru_.insert(lru_.end(), Entry{block, p, {}});
    entry->where = free_.emplace(block, entry);
    if (cached_ > cache_limit_) release_cache(cache_limit_);
  }

  void release_cache(size_t keep) {
    while (cached_ > keep && !lru_.empty()) {
      Entry e = lru_.front();
      free_.erase(e.where);
      lru_.pop_front();
      cached_ -= e.block;
      std::free(e.ptr);
    }
  }

  std::mutex mu_;
  size_t active_ = 0, peak_ = 0, cached_ = 0;
  size_t memory_limit_, cache_limit_;

 private:
  struct Entry;
  using Lru = std::list<Entry>;
  using FreeMap = std::multimap<size_t, Lru::iterator>;
  struct Entry {
    size_t block;
    void* ptr;
    FreeMap::iterator where;
  };

  void* from_cache(size_t& block) {
    // Accept a cached block up to 1/8 larger than asked: the counters charge the whole block.
    auto it = free_.lower_bound(block);
    if (it == free_.end() || it->first > block + block / 8) return nullptr;
    Lru::iterator entry = it->second;
    void* p = entry->ptr;
    block = entry->block;
    free_.erase(it);
    lru_.erase(entry);
    cached_ -= block;
    return p;
  }

  static void* fresh(size_t block) {
    size_t align = block >= kHuge ? kHuge : kAlign;
    void* p = nullptr;
    if (posix_memalign(&p, align, block) != 0 || !p)
      throw KernelError(EvalErrorKind::memory, "out of memory allocating " + std::to_string(block) + " bytes");
#ifdef MADV_HUGEPAGE
    // Large arrays stream through memory: huge pages cut page faults and TLB misses.
    if (block >= kHuge) madvise(p, block, MADV_HUGEPAGE);
#endif
    return p;
  }

  Lru lru_;
  FreeMap free_;
};

Allocator& allocator() {
  static Allocator* a = new Allocator();  // never destroyed: buffers may outlive statics
  return *a;
}

}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  size_t block = block_size(bytes);
  void* p = allocator().take(block);  // may enlarge block to a cached one
  return std::shared_ptr<Buffer>(new Buffer(p, bytes, block, nullptr));
}

std::shared_ptr<Buffer> Buffer::external(void* ptr, size_t bytes, std::function<void()> release) {
  if (!release) release = [] {};
  return std::shared_ptr<Buffer>(new Buffer(ptr, bytes, 0, std::move(release)));
}

Buffer::~Buffer() {
  if (release_)
    release_();
  else
    allocator().give(ptr_, block_);
}

namespace memory {
size_t active() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  return allocator().active_;
}
size_t peak() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  return allocator().peak_;
}
void reset_peak() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  allocator().peak_ = allocator().active_;
}
size_t cache() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  return allocator().cached_;
}
size_t set_memory_limit(size_t limit) {
  std::lock_guard<std::mutex> l(allocator().mu_);
  size_t old = allocator().memory_limit_;
  allocator().memory_limit_ = limit;
  return old;
}
size_t memory_limit() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  return allocator().memory_limit_;
}
size_t set_cache_limit(size_t limit) {
  std::lock_guard<std::mutex> l(allocator().mu_);
  size_t old = allocator().cache_limit_;
  allocator().cache_limit_ = limit;
  allocator().release_cache(limit);
  return old;
}
void clear_cache() {
  std::lock_guard<std::mutex> l(allocator().mu_);
  allocator().release_cache(0);
}
}  // namespace memory

}  // namespace nuvec
