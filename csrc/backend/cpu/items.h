// Work items on the thread pool for the blocked kernels (matrix product, convolution): each item's
// arithmetic is fixed by the shapes alone, so no thread count changes a bit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "core/threads.h"

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

}  // namespace nuvec::cpu
