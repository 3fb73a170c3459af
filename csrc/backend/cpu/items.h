// Work items on the thread pool for the blocked kernels (matrix product, convolution): each item's
// arithmetic is fixed by the shapes alone, so no thread count changes a bit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/threads.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace nuvec::cpu {

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
inline int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// Jobs of fewer multiply-adds (or elements packed) than this run on the caller alone: ~10 us of
// arithmetic, less than what waking the pool can cost when another process holds a core.
constexpr int64_t kInlineBelow = int64_t(1) << 18;

// Runs fn(i) for i < n, `work` multiply-adds (or elements packed) in all, on the pool: each item
// is a piece of its own (up to the pool's 64 pieces), claimed as threads come free, so a thread
// slowed by other work on the machine takes fewer, and the caller can tell a worker that lags.
inline void for_each_item(int64_t n, int64_t work, const std::function<void(int64_t)>& fn) {
  auto items = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  };
  if (work < kInlineBelow)
    items(0, n);
  else
    parallel_for(n, 1, items);
}

// For its scope, x86's arithmetic treats subnormal inputs as zero and flushes subnormal results to
// zero (MXCSR's DAZ and FTZ bits; the previous mode comes back at the end). The float products run
// under it, as XLA's CPU runtime and TensorFlow run theirs: a product whose operands hold subnormals
// ran 30-55x slower in microcode (1.9 -> 102 ms for 256 x 1024 @ 1024 x 1024 with a third of x
// subnormal, in NumPy, PyTorch and MLX alike), which a classifier's softmax gradients reach once its
// loss falls below ~1e-4. Elsewhere (element-wise ops, reductions, attention) subnormals stay.
class FlushSubnormals {
 public:
#if defined(__x86_64__)
  FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kDaz | kFtz); }
  ~FlushSubnormals() { _mm_setcsr(saved_); }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  static constexpr unsigned kDaz = 1u << 6, kFtz = 1u << 15;
  unsigned saved_;
#endif
};

// for_each_item for the float products (matrix product, convolution): each item under
// FlushSubnormals.
inline void for_each_product(int64_t n, int64_t work, const std::function<void(int64_t)>& fn) {
  for_each_item(n, work, [&](int64_t i) {
    FlushSubnormals flush;
    fn(i);
  });
}

}  // namespace nuvec::cpu
