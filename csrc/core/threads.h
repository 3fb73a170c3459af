// The CPU thread pool. Kernels split work so that no result depends on how many threads run
// it: element-wise work is independent per element, and reductions combine fixed-size blocks.
#pragma once
#include <cstdint>
#include <functional>

namespace nuvec {

int get_num_threads();
void set_num_threads(int n);  // NUVEC_NUM_THREADS sets the starting value (default: the cores available)

// Runs fn(begin, end) over [0, n) in pieces of at least `grain` (at most 64 pieces, a split that
// depends on n and grain alone), claimed by the threads as they come free; fn must give the same
// result whatever the pieces. Inline, as fn(0, n), when n is at most `grain` (so `grain` is the
// least work worth waking the pool for), inside another parallel_for, and while another thread's
// job holds the pool. docs/design.md ("Threads") describes the policy.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace nuvec
