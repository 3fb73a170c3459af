#include "core/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace nuvec {
namespace {

using Clock = std::chrono::steady_clock;

int cores_available() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1, int(std::thread::hardware_concurrency()));
}

int initial_threads() {
  if (const char* env = std::getenv("NUVEC_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return cores_available();
}

void pause() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

// Idle workers poll for the next job this long before they sleep: a sleeping thread's core may be
// halted (a virtual CPU handed back to the host), and waking it can take longer than a whole
// product. After a few microseconds of plain polling they poll with sched_yield, so a process that
// wants the core gets it at once: polling costs a loaded machine almost nothing.
constexpr auto kWorkerPoll = std::chrono::microseconds(2000);
constexpr auto kPlainPoll = std::chrono::microseconds(5);
// The caller, out of pieces to claim, polls for the pieces still running on workers at most this
// many times as long as its own pieces took on average (and at least kCallerPollMin), then
// sleeps: a worker that takes far longer has lost its core to another process, and the caller's
// sleep frees a core that the scheduler hands to it.
constexpr int kCallerPollPieces = 2;
constexpr auto kCallerPollMin = std::chrono::microseconds(20);

// Set while a thread runs pieces of a job: a parallel_for inside one runs inline.
thread_local bool in_job = false;

// Runs jobs of numbered pieces. Threads (the caller and the workers) claim pieces one at a time
// until none are left; the caller returns once every claimed piece has finished, so it never
// waits for a worker that has not started: a worker off its core claims nothing.
class Pool {
 public:
  explicit Pool(int n) { resize(n); }

  int size() const { return size_; }

  void resize(int n) {
    std::lock_guard<std::mutex> l(run_mu_);
    stop_workers();
    size_ = std::max(1, n);
    uint32_t seen = job_id_.load();
    for (int i = 1; i < size_; ++i) threads_.emplace_back([this, seen] { loop(seen); });
  }

  // False when the pool is taken (by another thread's job, or while resizing): run inline then.
  bool try_run(uint32_t pieces, const std::function<void(int64_t)>& piece) {
    std::unique_lock<std::mutex> l(run_mu_, std::try_to_lock);
    if (!l.owns_lock()) return false;
    if (skip_ > 0) {  // backing off: the last jobs gained nothing from the workers
      --skip_;
      return false;
    }
    uint32_t id = job_id_.load(std::memory_order_relaxed) + 1;
    job_ = &piece;
    done_.store(0, std::memory_order_relaxed);
    claim_.store(claim_word(id, pieces), std::memory_order_release);
    job_id_.store(id);
    if (sleepers_.load() > 0) wake_workers();
    auto start = Clock::now();
    uint32_t mine = work(id);
    auto own = Clock::now() - start;
    wait_done(pieces, mine ? own / mine : Clock::duration{});
    if (mine) judge(Clock::now() - start, own / mine * pieces);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return true;
  }

 private:
  // The claim word: the job's id in the high 32 bits, its piece count in the next 16 and the next
  // unclaimed piece in the low 16. The count must sit in the same word as the id: a worker that has
  // just finished job N's last piece rereads the word while the caller sets up job N+1, and read
  // from a separate variable it could pair job N's word with job N+1's larger count, claim a piece
  // past job N's end, run job N+1's function and count it into job N+1's total after the reset
  // (a caller then waited for good, its total one past the pieces: seen on a 2-core Xeon).
  static uint64_t claim_word(uint32_t id, uint32_t pieces) { return uint64_t(id) << 32 | uint64_t(pieces) << 16; }

  // Claims and runs pieces of job `id` until none are left; returns how many it ran.
  uint32_t work(uint32_t id) {
    in_job = true;
    uint32_t ran = 0;
    uint64_t s = claim_.load(std::memory_order_acquire);
    while (uint32_t(s >> 32) == id && (s & 0xffff) < ((s >> 16) & 0xffff)) {
      if (!claim_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      uint32_t pieces = (s >> 16) & 0xffff;
      try {
        (*job_)(int64_t(s & 0xffff));  // the job lives until its last piece is done
      } catch (...) {
        std::lock_guard<std::mutex> l(error_mu_);
        if (!error_) error_ = std::current_exception();
      }
      ++ran;
      if (done_.fetch_add(1) + 1 == pieces && caller_sleeps_.load()) {
        std::lock_guard<std::mutex> l(sleep_mu_);  // the caller checks done_ under it: no lost wakeup
        done_cv_.notify_one();
      }
      s = claim_.load(std::memory_order_acquire);
    }
    in_job = false;
    return ran;
  }

  // A job that took at least as long as the caller alone would have taken (its own pieces'
  // average times the pieces) gained nothing: the workers lost their cores to other processes.
  // Consecutive such jobs make the next 1, 2, 4, ... kMaxSkip jobs run inline on the caller (as
  // fast as one thread then); each later job probes the pool again, and a job that gains resets.
  void judge(Clock::duration wall, Clock::duration alone) {
    if (wall >= alone) {
      backoff_ = std::min(kMaxSkip, std::max(1, backoff_ * 2));
      skip_ = backoff_;
    } else {
      backoff_ = 0;
    }
  }

  void wait_done(uint32_t pieces, Clock::duration per_piece) {
    auto until = Clock::now() + std::max<Clock::duration>(kCallerPollMin, kCallerPollPieces * per_piece);
    for (int i = 1; done_.load(std::memory_order_acquire) != pieces; ++i) {
      pause();
      if (i % 64 == 0 && Clock::now() > until) break;
    }
    // The predicate is checked under the mutex the last piece's thread takes to notify: no lost
    // wakeup.
    std::unique_lock<std::mutex> l(sleep_mu_);
    caller_sleeps_.store(true);
    done_cv_.wait(l, [&] { return done_.load() == pieces; });
    caller_sleeps_.store(false);
  }

  // Waits for a job after `seen` (or the stop signal) and returns its id.
  uint32_t next_job(uint32_t seen) {
    auto start = Clock::now();
    for (int i = 1;; ++i) {
      uint32_t id = job_id_.load(std::memory_order_acquire);
      if (id != seen) return id;
      if (i % 64) {
        pause();
        continue;
      }
      auto waited = Clock::now() - start;
      if (waited > kWorkerPoll) break;
      if (waited > kPlainPoll) sched_yield();
    }
    std::unique_lock<std::mutex> l(sleep_mu_);
    sleepers_.fetch_add(1);
    uint32_t id;
    job_cv_.wait(l, [&] { return (id = job_id_.load()) != seen; });
    sleepers_.fetch_sub(1);
    return id;
  }

  // `seen`: the last job id before the worker started; stop_workers changes the id too.
  void loop(uint32_t seen) {
    for (;;) {
      seen = next_job(seen);
      if (stop_.load(std::memory_order_acquire)) return;
      work(seen);
    }
  }

  void stop_workers() {
    stop_.store(true, std::memory_order_release);
    job_id_.fetch_add(1);
    wake_workers();
    for (auto& t : threads_) t.join();
    threads_.clear();
    stop_.store(false);
  }

  // Under sleep_mu_, so a worker between its check of job_id_ and its sleep cannot miss it.
  void wake_workers() {
    std::lock_guard<std::mutex> l(sleep_mu_);
    job_cv_.notify_all();
  }

  std::mutex run_mu_;  // one job at a time; held while resizing
  // Sleeping: workers wait for a job (job_cv_), the caller for the job's last piece (done_cv_).
  std::mutex sleep_mu_;
  std::condition_variable job_cv_, done_cv_;
  static constexpr int kMaxSkip = 64;
  int backoff_ = 0, skip_ = 0;  // under run_mu_: see judge
  std::vector<std::thread> threads_;
  int size_ = 1;
  const std::function<void(int64_t)>* job_ = nullptr;
  std::atomic<bool> stop_{false};
  std::mutex error_mu_;
  std::exception_ptr error_;  // the first piece's exception, rethrown on the caller
  // Each on its own cache line: workers poll job_id_, threads claim through claim_ (see claim_word).
  alignas(64) std::atomic<uint32_t> job_id_{0};
  std::atomic<int> sleepers_{0};
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<uint32_t> done_{0};
  std::atomic<bool> caller_sleeps_{false};
};

constexpr int64_t kMaxPieces = 64;
static_assert(kMaxPieces < 0x10000, "the claim word holds piece numbers in 16 bits");

Pool& pool() {
  static Pool* p = new Pool(initial_threads());  // never joined at exit
  return *p;
}

}  // namespace

int get_num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(n); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (n <= grain || in_job || pool().size() == 1) {
    fn(0, n);
    return;
  }
  // The pieces depend on n and grain alone, so results do not depend on the thread count; there
  // are more pieces than threads where the work allows, so a thread slowed by another process
  // takes fewer of them.
  int64_t pieces = std::min<int64_t>((n + grain - 1) / grain, kMaxPieces);
  int64_t per = (n + pieces - 1) / pieces;
  auto piece = [&](int64_t i) {
    int64_t b = i * per, e = std::min(n, b + per);
    if (b < e) fn(b, e);
  };
  if (!pool().try_run(uint32_t(pieces), piece)) fn(0, n);
}

}  // namespace nuvec
