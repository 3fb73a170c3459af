// How OpenBLAS's threaded routines run inside nuvec: on threads nuvec owns, at a thread count that
// depends on the routine and the shape alone (never on NUVEC_NUM_THREADS), so their bits depend on
// the shape alone.
//
// OpenBLAS splits a call into as many jobs as its thread count allows (fewer for small sizes), and
// its results change with that split (a threaded symv or getrf sums in another order). nuvec
// fixes the count per call (`Threads`) and installs OpenBLAS's threads callback, which runs the
// jobs on a crew of helper threads: the caller runs job 0, a helper each of the others. The jobs
// of one call must all run at once (a threaded product's jobs wait on each other's packed blocks:
// run one after another they would wait forever), so they cannot go through nuvec's pool, which
// runs a piece on whichever thread comes free, and inline when nested. The jobs of concurrent
// calls (a batch's matrices on nuvec's pool) take turns: OpenBLAS's per-thread scratch is shared
// by them. Helpers poll briefly for the next job, then sleep; OpenBLAS's own workers are never
// handed a job, so they sleep too.
#pragma once
#include <cstdint>

namespace nuvec::cpu::blas_threads {

// The thread count a threaded routine runs at from order kThreadedFrom (1 below it; which
// routines: backend/cpu/linalg_spectral.cpp's blas_threads_for).
constexpr int kThreads = 2;
constexpr int64_t kThreadedFrom = 256;

// Holds OpenBLAS at `count` threads (and the callback installed) while it lives. OpenBLAS's count
// is one number for the process: a scope wanting another count waits until those holding the
// current one have left, so no call ever sees the count change under it.
class Threads {
 public:
  explicit Threads(int count);
  ~Threads();
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
};

// Callback invocations and helper threads started so far (for tests).
int64_t callback_calls();
int64_t helper_threads();

}  // namespace nuvec::cpu::blas_threads
