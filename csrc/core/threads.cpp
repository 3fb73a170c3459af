#include "core/threads.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace nuvec {
namespace {

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

// Workers sleep on a generation counter; the caller takes part as thread 0.
class Pool {
 public:
  explicit Pool(int n) { resize(n); }

  int size() const { return size_; }

  void resize(int n) {
    std::lock_guard<std::mutex> run_lock(run_mu_);
    stop_workers();
    size_ = std::max(1, n);
    stop_ = false;
    for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { loop(i); });
  }

  void run(int64_t pieces, const std::function<void(int64_t)>& piece) {
    std::lock_guard<std::mutex> run_lock(run_mu_);
    {
      std::lock_guard<std::mutex> l(mu_);
      job_ = &piece;
      pieces_ = pieces;
      next_.store(0);
      busy_ = size_ - 1;
      ++generation_;
    }
    cv_.notify_all();
    work();
    spin_until([&] { return busy_.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void work() {
    for (int64_t i; (i = next_.fetch_add(1)) < pieces_;) (*job_)(i);
  }

  // Threads poll for a while before they sleep, workers for the next job and the caller for
  // the workers to finish: a sleeping thread's core may be halted (a virtual CPU handed back to
  // the host), and waking it can take longer than a whole product, so back-to-back jobs would
  // run on one core. OpenMP and OpenBLAS wait the same way.
  template <class Ready> static void spin_until(Ready ready) {
    constexpr auto kSpin = std::chrono::milliseconds(2);
    auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1; !ready(); ++i) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      if (i % 256 == 0 && std::chrono::steady_clock::now() > until) return;
    }
  }

  void loop(int) {
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      {
        std::lock_guard<std::mutex> l(mu_);
        --busy_;
      }
      done_cv_.notify_all();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  std::mutex run_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> threads_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t pieces_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> busy_{0};             // changed under mu_; read without it while spinning
  std::atomic<uint64_t> generation_{0};  // changed under mu_; read without it while spinning
  bool stop_ = false;
  int size_ = 1;
};

constexpr int64_t kMaxPieces = 64;

Pool& pool() {
  static Pool* p = new Pool(initial_threads());  // never joined at exit
  return *p;
}

}  // namespace

int get_num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(n); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int threads = pool().size();
  if (n <= grain || threads == 1) {
    fn(0, n);
    return;
  }
  // The pieces depend on n and grain alone; threads take them as they come free, which also
  // keeps both cores busy when another process holds one of them for a while.
  int64_t pieces = std::min<int64_t>((n + grain - 1) / grain, kMaxPieces);
  int64_t per = (n + pieces - 1) / pieces;
  pool().run(pieces, [&](int64_t i) {
    int64_t b = i * per, e = std::min(n, b + per);
    if (b < e) fn(b, e);
  });
}

}  // namespace nuvec
