#include "backend/cpu/blas_threads.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

extern "C" {
typedef void (*openblas_dojob_callback)(int thread_num, void* jobdata, int dojob_data);
typedef void (*openblas_threads_callback)(int sync, openblas_dojob_callback dojob, int numjobs, size_t jobdata_elsize,
                                          void* jobdata, int dojob_data);
void scipy_openblas_set_threads_callback_function(openblas_threads_callback callback);
void scipy_openblas_set_num_threads(int num_threads);
int scipy_openblas_get_num_threads(void);
}

namespace nuvec::cpu::blas_threads {
namespace {

using Clock = std::chrono::steady_clock;

// A waiting thread polls this long (plainly for kPlainPoll, then yielding its core) before it
// sleeps: one LAPACK call hands out thousands of small jobs (syevd of order 1024: ~3300), each
// a few microseconds after the last, and a sleeping thread takes longer than that to wake.
constexpr auto kPoll = std::chrono::microseconds(1000);
constexpr auto kPlainPoll = std::chrono::microseconds(5);

// Waits until `v` differs from `old`; returns its new value.
uint32_t wait_change(const std::atomic<uint32_t>& v, uint32_t old) {
  auto start = Clock::now();
  for (int i = 1;; ++i) {
    uint32_t now = v.load(std::memory_order_acquire);
    if (now != old) return now;
    if (i % 64 != 0) continue;
    auto spent = Clock::now() - start;
    if (spent > kPoll) break;
    if (spent > kPlainPoll) sched_yield();
  }
  for (uint32_t now;;) {
    if ((now = v.load(std::memory_order_acquire)) != old) return now;
    v.wait(old, std::memory_order_acquire);
  }
}

// A helper thread and the job it is handed. `stage` moves idle -> posted (the caller) -> running
// (the helper) -> done, or posted -> idle when the caller takes the job back; `posted` counts
// posts, to wake the helper.
enum Stage : uint32_t { kIdle, kPosted, kRunning, kDone };

struct Helper {
  std::atomic<uint32_t> posted{0}, stage{kIdle};
  openblas_dojob_callback dojob = nullptr;
  void* data = nullptr;
  int arg = 0, index = 0;

  void run() { dojob(index, data, arg); }

  [[noreturn]] void loop() {
    for (uint32_t seen = 0;;) {
      seen = wait_change(posted, seen);
      uint32_t expect = kPosted;
      if (!stage.compare_exchange_strong(expect, kRunning, std::memory_order_acquire)) continue;  // taken back
      run();
      stage.store(kDone, std::memory_order_release);
      stage.notify_one();
    }
  }
};

std::atomic<int64_t> calls{0}, started{0};

// The idle helpers; a call that finds too few starts more. Helpers live as long as the process
// (a forked child starts a fresh crew: its parent's helpers are not there).
class Crew {
 public:
  Helper* take() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!idle_.empty()) {
        Helper* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    auto* h = new Helper;
    std::thread([h] { h->loop(); }).detach();
    started.fetch_add(1);
    return h;
  }
  void give(Helper* h) {
    std::lock_guard<std::mutex> l(mu_);
    idle_.push_back(h);
  }

 private:
  std::mutex mu_;
  std::vector<Helper*> idle_;
};

std::atomic<Crew*> crew{new Crew};

// OpenBLAS gives job i the scratch buffer and status slot of its thread i (static, shared by
// every caller); its own pool keeps concurrent calls on disjoint workers, the callback cannot, so
// one call's jobs run at a time (measured: two at once gave batched eigh different eigenvectors
// from run to run). OpenBLAS never hands out jobs from inside a job, so this cannot deadlock.
std::mutex one_call;

// OpenBLAS's callback: job 0 on the calling thread, each other job handed to a helper. A job whose
// helper has not started it when the caller is done with its own runs on the caller: jobs that
// wait on each other (a threaded product's) have all started by then (job 0 cannot finish before
// the others have read its packed blocks), and independent ones (a matrix-vector product's) need
// not wait for a helper that a busy machine has not scheduled yet.
void run_jobs(int, openblas_dojob_callback dojob, int numjobs, size_t size, void* data, int arg) {
  std::lock_guard<std::mutex> l(one_call);
  calls.fetch_add(1, std::memory_order_relaxed);
  Crew* c = crew.load();
  std::vector<Helper*> handed;
  for (int i = 1; i < numjobs; ++i) {
    Helper* h = c->take();
    h->dojob = dojob;
    h->data = static_cast<char*>(data) + size_t(i) * size;
    h->arg = arg;
    h->index = i;
    h->stage.store(kPosted, std::memory_order_release);
    h->posted.fetch_add(1, std::memory_order_release);
    h->posted.notify_one();
    handed.push_back(h);
  }
  if (numjobs > 0) dojob(0, data, arg);
  for (Helper* h : handed) {
    uint32_t s = kPosted;
    if (h->stage.compare_exchange_strong(s, kIdle, std::memory_order_acq_rel)) {
      h->run();  // taken back: the helper will find it gone
    } else {
      while (s != kDone) s = wait_change(h->stage, s);
      h->stage.store(kIdle, std::memory_order_relaxed);
    }
    c->give(h);
  }
}

// The count OpenBLAS is held at, and how many scopes hold it.
std::mutex count_mu;
std::condition_variable count_free;
int held_count = 0, holders = 0;
thread_local int depth = 0;  // scopes this thread holds

void install_once() {
  static bool done = [] {
    scipy_openblas_set_threads_callback_function(run_jobs);
    pthread_atfork([] { one_call.lock(); }, [] { one_call.unlock(); },
                   [] {
                     crew.store(new Crew);
                     one_call.unlock();
                   });
    return true;
  }();
  (void)done;
}

}  // namespace

Threads::Threads(int count) {
  install_once();
  if (depth > 0) {  // nested on this thread: it already holds the count
    if (count != held_count) throw std::logic_error("nested OpenBLAS thread scopes with different counts");
    ++depth;
    return;
  }
  ++depth;
  std::unique_lock<std::mutex> l(count_mu);
  count_free.wait(l, [&] { return holders == 0 || held_count == count; });
  // Set again when the first holder arrives, in case something else in the process (threadpoolctl,
  // say) changed it.
  if (holders == 0 && scipy_openblas_get_num_threads() != count) scipy_openblas_set_num_threads(count);
  held_count = count;
  ++holders;
}

Threads::~Threads() {
  if (--depth > 0) return;
  std::lock_guard<std::mutex> l(count_mu);
  if (--holders == 0) count_free.notify_all();
}

int64_t callback_calls() { return calls.load(); }
int64_t helper_threads() { return started.load(); }

}  // namespace nuvec::cpu::blas_threads
