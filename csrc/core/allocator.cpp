#include "core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
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

// A caching pool over one kind of memory (the host's, or a GPU backend's device memory).
class Allocator {
 public:
  using Fresh = void* (*)(size_t block);  // null when there is no room
  using Free = void (*)(void* p);
  Allocator(Fresh fresh, Free free, size_t limit, const char* where, bool small_stacks)
      : fresh_(fresh),
        free_fn_(free),
        small_stacks_(small_stacks),
        memory_limit_(limit),
        cache_limit_(limit),
        where_(where) {}

  // Returns a block of at least `block` bytes and sets `block` to its real size, and `tag` to what
  // give() was told of a cached block (0 for a fresh one). Of the cached blocks that fit, one
  // whose tag has no bit outside `mine` is preferred (the device pool: a block the calling queue
  // alone used, which it reuses without a wait).
  void* take(size_t& block, uint64_t& tag, uint64_t mine = ~uint64_t(0)) {
    tag = 0;
    std::lock_guard<std::mutex> lock(mu_);
    // The limit holds for cached blocks too: it bounds what live arrays hold.
    if (active_ + block > memory_limit_)
      throw KernelError(EvalErrorKind::memory, "allocating " + std::to_string(block) + " bytes would exceed the " +
                                                   where_ + " memory limit of " + std::to_string(memory_limit_) +
                                                   " bytes (" + std::to_string(active_) +
                                                   " in use); raise it with set_memory_limit");
    void* p = small_stacks_ && block < kSmallBelow ? from_small(block) : nullptr;
    if (!p) p = from_cache(block, tag, mine);
    if (!p) {
      // Cached blocks count against the machine, not the limit: return them before a fresh one.
      if (active_ + cached_ + block > memory_limit_) release_cache(0);
      p = fresh_(block);
      if (!p && cached_) {  // the cache may hold what the machine lacks
        release_cache(0);
        p = fresh_(block);
      }
      if (!p)
        throw KernelError(EvalErrorKind::memory,
                          "out of " + std::string(where_) + " memory allocating " + std::to_string(block) + " bytes");
    }
    active_ += block;
    if (active_ > peak_) peak_ = active_;
    return p;
  }

  void give(void* p, size_t block, uint64_t tag = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (small_stacks_ && block < kSmallBelow) {
      size_t c = block / kAlign - 1;
      small_[c].push_back(p);  // (first: the counters stay right if it throws)
      small_bits_[c / 64] |= uint64_t(1) << (c % 64);
      active_ -= block;
      cached_ += block;
      if (cached_ > cache_limit_) release_cache(cache_limit_);
      return;
    }
    active_ -= block;
    cached_ += block;
    // The entry's list and map nodes are the last taken block's where there is one (a decode
    // step gives and takes ~300 blocks: 1200 fewer calls to malloc and free).
    Lru::iterator entry;
    if (spare_entries_.empty()) {
      entry = lru_.insert(lru_.end(), Entry{block, p, tag, {}});
    } else {
      entry = spare_entries_.begin();
      lru_.splice(lru_.end(), spare_entries_, entry);
      *entry = Entry{block, p, tag, {}};
    }
    if (spare_keys_.empty()) {
      entry->where = free_.emplace(block, entry);
    } else {
      FreeMap::node_type key = std::move(spare_keys_.back());
      spare_keys_.pop_back();
      key.key() = block, key.mapped() = entry;
      entry->where = free_.insert(std::move(key));
    }
    if (cached_ > cache_limit_) release_cache(cache_limit_);
  }

  void release_cache(size_t keep) {
    while (cached_ > keep && !lru_.empty()) {
      Entry e = lru_.front();
      free_.erase(e.where);
      lru_.pop_front();
      cached_ -= e.block;
      free_fn_(e.ptr);
    }
    // Then small blocks, largest first, over the stacks that hold any (a give under a cache limit
    // of zero comes here each time: no walk over the ~1000 stacks).
    for (size_t w = std::size(small_bits_); w-- > 0 && cached_ > keep;)
      while (small_bits_[w] && cached_ > keep) {
        const size_t c = w * 64 + 63 - size_t(__builtin_clzll(small_bits_[w]));
        for (; cached_ > keep && !small_[c].empty(); small_[c].pop_back()) {
          cached_ -= (c + 1) * kAlign;
          free_fn_(small_[c].back());
        }
        if (small_[c].empty()) small_bits_[w] &= ~(uint64_t(1) << (c % 64));
      }
  }

  std::mutex mu_;
  size_t active_ = 0, peak_ = 0, cached_ = 0;

 private:
  struct Entry;
  using Lru = std::list<Entry>;
  using FreeMap = std::multimap<size_t, Lru::iterator>;
  struct Entry {
    size_t block;
    void* ptr;
    uint64_t tag;
    FreeMap::iterator where;
  };

  // A cached small block of `block` bytes up to 1/8 more (the smallest such), or null.
  void* from_small(size_t& block) {
    const size_t c0 = block / kAlign - 1, c1 = std::min(kSmallClasses - 1, (block + block / 8) / kAlign - 1);
    for (size_t w = c0 / 64; w <= c1 / 64; ++w) {
      uint64_t bits = small_bits_[w];
      if (w == c0 / 64) bits &= ~uint64_t(0) << (c0 % 64);
      if (w == c1 / 64 && c1 % 64 != 63) bits &= (uint64_t(2) << (c1 % 64)) - 1;
      if (!bits) continue;
      const size_t c = w * 64 + size_t(__builtin_ctzll(bits));
      void* p = small_[c].back();
      small_[c].pop_back();
      if (small_[c].empty()) small_bits_[w] &= ~(uint64_t(1) << (c % 64));
      block = (c + 1) * kAlign;
      cached_ -= block;
      return p;
    }
    return nullptr;
  }

  void* from_cache(size_t& block, uint64_t& tag, uint64_t mine) {
    // Accept a cached block up to 1/8 larger than asked: the counters charge the whole block.
    auto it = free_.lower_bound(block);
    if (it == free_.end() || it->first > block + block / 8) return nullptr;
    // The first few that fit are looked at for one of `mine`; else the best fit.
    auto pick = it;
    for (int seen = 0; pick != free_.end() && pick->first <= block + block / 8 && seen < 16; ++pick, ++seen)
      if ((pick->second->tag & ~mine) == 0) {
        it = pick;
        break;
      }
    Lru::iterator entry = it->second;
    void* p = entry->ptr;
    block = entry->block;
    tag = entry->tag;
    spare_keys_.push_back(free_.extract(it));
    spare_entries_.splice(spare_entries_.end(), lru_, entry);
    cached_ -= block;
    return p;
  }

  Fresh fresh_;
  Free free_fn_;
  // Blocks under 64 KiB (in steps of 64 bytes) wait in a stack per size, not in the map and the
  // LRU list: a decode step takes and gives ~500 of them, and once its products have streamed
  // ~100 MB through the caches, each walk of the map's and the list's nodes missed on them
  // (700-1200 cycles a take or a give). They are released after the list's blocks. The host
  // pool's only: the device pool's blocks carry their queues' tags.
  static constexpr size_t kSmallBelow = size_t(1) << 16, kSmallClasses = kSmallBelow / kAlign - 1;
  bool small_stacks_;
  std::vector<void*> small_[kSmallClasses];
  uint64_t small_bits_[(kSmallClasses + 63) / 64] = {};  // which stacks hold a block
  Lru lru_;
  FreeMap free_;
  Lru spare_entries_;                           // nodes of taken blocks' entries, for give() to reuse
  std::vector<FreeMap::node_type> spare_keys_;  // likewise, of their keys

 public:
  size_t memory_limit_, cache_limit_;
  const char* where_;
};

void* host_fresh(size_t block) {
  size_t align = block >= kHuge ? kHuge : kAlign;
  void* p = nullptr;
  if (posix_memalign(&p, align, block) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
  // Large arrays stream through memory: huge pages cut page faults and TLB misses.
  if (p && block >= kHuge) madvise(p, block, MADV_HUGEPAGE);
#endif
  return p;
}

Allocator& allocator() {
  static Allocator* a = new Allocator(host_fresh, std::free, physical_memory() / 4 * 3, "host", true);
  return *a;  // never destroyed: buffers may outlive statics
}

DeviceMemory g_device;  // set once, at the GPU backend's load
Allocator* g_device_pool = nullptr;

Allocator& device_pool() {
  if (!g_device_pool) throw KernelError(EvalErrorKind::other, "no GPU backend holds device memory");
  return *g_device_pool;
}

// Transfers between a buffer's copies take turns (two kernels may read one buffer at once).
std::mutex& transfer_mutex() {
  static std::mutex m;
  return m;
}

// The pool MLX's memory functions speak of.
Allocator& counted() {
  return g_device_pool && default_device().type == DeviceType::gpu ? *g_device_pool : allocator();
}

}  // namespace

void set_device_memory(const DeviceMemory& m) {
  g_device = m;
  // A tenth of the device is left to CUDA's own needs (its context, libraries' workspaces).
  g_device_pool = new Allocator(m.allocate, m.free, m.capacity / 10 * 9, "device", false);
}

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  size_t block = block_size(bytes);
  uint64_t tag;
  void* p = allocator().take(block, tag);  // may enlarge block to a cached one
  return std::shared_ptr<Buffer>(new Buffer(p, bytes, block, nullptr));
}

std::shared_ptr<Buffer> Buffer::allocate_device(size_t bytes) {
  size_t block = block_size(bytes);
  uint64_t users;  // the queues that used the block before its free
  const int q = g_device.queue ? g_device.queue() : -1;
  void* p = device_pool().take(block, users, q >= 0 ? uint64_t(1) << q : ~uint64_t(0));
  auto b = std::shared_ptr<Buffer>(new Buffer(nullptr, bytes, 0, nullptr));
  b->dev_ = p;
  b->dev_block_ = block;
  b->write_on_queue(users);  // the caller's kernel writes it
  b->valid_.store(kDevice, std::memory_order_relaxed);
  return b;
}

std::shared_ptr<Buffer> Buffer::external(void* ptr, size_t bytes, std::function<void()> release) {
  if (!release) release = [] {};
  return std::shared_ptr<Buffer>(new Buffer(ptr, bytes, 0, std::move(release)));
}

void* Buffer::host_slow() const {
  std::lock_guard<std::mutex> l(transfer_mutex());
  if (!(valid_.load(std::memory_order_relaxed) & kHost)) {
    if (!ptr_) {
      size_t block = block_size(size_);
      uint64_t tag;
      ptr_ = allocator().take(block, tag);
      block_ = block;
    }
    if (size_) g_device.to_host(ptr_, dev_, size_);
    valid_.fetch_or(kHost, std::memory_order_release);
  }
  return ptr_;
}

void* Buffer::device_slow() const {
  std::lock_guard<std::mutex> l(transfer_mutex());
  if (!(valid_.load(std::memory_order_relaxed) & kDevice)) {
    if (!dev_) {
      size_t block = block_size(size_);
      uint64_t users;
      dev_ = device_pool().take(block, users);
      dev_block_ = block;
    }
    // The copy waits for every queue's work before it, and theirs after it waits for the copy
    // (to_device), so no earlier use is pending and the contents need no wait.
    if (size_) g_device.to_device(dev_, ptr_, size_);
    writer_.store(-1, std::memory_order_relaxed);
    users_.store(0, std::memory_order_relaxed);
    valid_.fetch_or(kDevice, std::memory_order_release);
  }
  return dev_;
}

// (Evaluation runs one node at a time, so these read-modify-writes do not race.)
void Buffer::read_on_queue() const {
  if (!g_device.queue) return;
  const int q = g_device.queue();
  if (q < 0) return;
  const uint64_t bit = uint64_t(1) << q, users = users_.load(std::memory_order_relaxed);
  if (users & bit) return;  // already ordered after the write
  const int writer = writer_.load(std::memory_order_relaxed);
  if (writer >= 0 && writer != q) g_device.order_after(uint64_t(1) << writer);
  users_.store(users | bit, std::memory_order_relaxed);
}

uint64_t Buffer::queues_used() const {
  const int writer = writer_.load(std::memory_order_relaxed);
  return users_.load(std::memory_order_relaxed) | (writer >= 0 ? uint64_t(1) << writer : 0);
}

// The calling queue is about to write the buffer: it waits for the queues that used it (`earlier`,
// besides this buffer's own users) and becomes its writer.
void Buffer::write_on_queue(uint64_t earlier) const {
  if (!g_device.queue) return;
  const int q = g_device.queue();
  uint64_t others = earlier | queues_used();
  if (q >= 0) others &= ~(uint64_t(1) << q);
  if (others && q >= 0) g_device.order_after(others);
  writer_.store(q, std::memory_order_relaxed);
  users_.store(q >= 0 ? uint64_t(1) << q : 0, std::memory_order_relaxed);
}

void Buffer::written_on_host() {
  data();
  valid_.store(kHost, std::memory_order_release);
}

void Buffer::written_on_device() {
  device_data();
  write_on_queue(0);
  valid_.store(kDevice, std::memory_order_release);
}

Buffer::~Buffer() {
  if (dev_) device_pool().give(dev_, dev_block_, queues_used());
  if (release_)
    release_();
  else if (ptr_)
    allocator().give(ptr_, block_);
}

namespace memory {
size_t active() {
  std::lock_guard<std::mutex> l(counted().mu_);
  return counted().active_;
}
size_t peak() {
  std::lock_guard<std::mutex> l(counted().mu_);
  return counted().peak_;
}
void reset_peak() {
  std::lock_guard<std::mutex> l(counted().mu_);
  counted().peak_ = counted().active_;
}
size_t cache() {
  std::lock_guard<std::mutex> l(counted().mu_);
  return counted().cached_;
}
size_t set_memory_limit(size_t limit) {
  std::lock_guard<std::mutex> l(counted().mu_);
  size_t old = counted().memory_limit_;
  counted().memory_limit_ = limit;
  return old;
}
size_t memory_limit() {
  std::lock_guard<std::mutex> l(counted().mu_);
  return counted().memory_limit_;
}
size_t set_cache_limit(size_t limit) {
  std::lock_guard<std::mutex> l(counted().mu_);
  size_t old = counted().cache_limit_;
  counted().cache_limit_ = limit;
  counted().release_cache(limit);
  return old;
}
namespace {
std::mutex drops_mu;
std::vector<void (*)()>& drops() {
  static auto* d = new std::vector<void (*)()>();
  return *d;
}
}  // namespace
void on_clear_cache(void (*drop)()) {
  std::lock_guard<std::mutex> l(drops_mu);
  drops().push_back(drop);
}
void clear_cache() {
  {
    std::lock_guard<std::mutex> l(drops_mu);
    for (auto drop : drops()) drop();
  }
  std::lock_guard<std::mutex> l(counted().mu_);
  counted().release_cache(0);
}
}  // namespace memory

}  // namespace nuvec
