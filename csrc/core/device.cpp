#include "core/device.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "core/backend.h"
#include "core/errors.h"
#include "core/streams.h"

namespace nuvec {
namespace {

// A stream's worker: runs queued tasks in order on its own thread.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) { thread_.detach(); }
  void push(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_.push_back(std::move(task));
      ++queued_;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> l(mu_);
    done_cv_.wait(l, [&] { return finished_ == queued_; });
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
      {
        std::lock_guard<std::mutex> l(mu_);
        ++finished_;
      }
      done_cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::function<void()>> queue_;
  uint64_t queued_ = 0, finished_ = 0;
  std::thread thread_;
};

struct Registry {
  std::mutex mu;
  int next_index = 0;
  int next_thread_local = 0;
  std::set<int> unsafe;  // new_thread_unsafe_stream's streams
  std::map<int, std::unique_ptr<Worker>> workers;
  Device default_device;
};

Registry& registry() {
  static Registry* r = new Registry();  // workers outlive static destruction
  return *r;
}

int next_index() {
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  return r.next_index++;
}

// Per device type: this thread's default stream's index; -1: not made yet; -2 - i: stream i,
// destroyed by clear_streams. A plain int, so the per-op read costs no initialisation guard.
constexpr int kDeviceTypes = 2;
thread_local int t_default[kDeviceTypes] = {-1, -1};

// The streams this thread has (its defaults, new_stream's, its ThreadLocalStream streams).
struct ThreadStreams {
  std::vector<int> owned;
  std::map<int, int> thread_local_streams;  // ThreadLocalStream id -> stream index
};
thread_local ThreadStreams t_streams;

int own_new_index() {
  int i = next_index();
  t_streams.owned.push_back(i);
  return i;
}

bool owned(int index) {
  auto& o = t_streams.owned;
  return std::find(o.begin(), o.end(), index) != o.end();
}

Worker& worker(Stream s) {
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  auto& w = r.workers[s.index];
  if (!w) w = std::make_unique<Worker>();
  return *w;
}

void check_available(Device d, const char* op) {
  if (!is_available(d))
    throw OpError(op, std::string("no backend for the ") + device_name(d.type) + " device is registered in this nuvec");
}

}  // namespace

const char* device_name(DeviceType t) {
  switch (t) {
    case DeviceType::cpu: return "cpu";
    case DeviceType::gpu: return "gpu";
  }
  return "?";
}

bool is_available(Device d) { return d.index == 0 && backend_for(d.type) != nullptr; }

Device default_device() { return registry().default_device; }

void set_default_device(Device d) {
  check_available(d, "set_default_device");
  registry().default_device = d;
}

[[noreturn]] void no_stream(int index, Device d) {
  throw StreamError("There is no Stream(" + std::string(device_name(d.type)) + ", " + std::to_string(index) +
                    ") in current thread (a stream serves the thread that made it, until clear_streams).");
}

Stream default_stream(Device d) {
  int& i = t_default[int(d.type)];
  if (i < 0) {
    if (i != -1) no_stream(-2 - i, d);
    i = own_new_index();
  }
  return Stream{i, d};
}

Stream peek_default_stream(Device d) {
  int i = t_default[int(d.type)];
  if (i >= 0) return Stream{i, d};
  return i < -1 ? Stream{-2 - i, d} : default_stream(d);
}

bool is_unsafe(int index) {
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  return r.unsafe.count(index) != 0;
}

void check_usable(Stream s) {
  if (!owned(s.index) && !is_unsafe(s.index)) no_stream(s.index, s.device);
}

void set_default_stream(Stream s) {
  check_available(s.device, "set_default_stream");
  check_usable(s);
  t_default[int(s.device.type)] = s.index;
}

Stream new_stream(Device d) {
  check_available(d, "new_stream");
  return Stream{own_new_index(), d};
}

Stream new_thread_unsafe_stream(Device d) {
  check_available(d, "new_thread_unsafe_stream");
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  r.unsafe.insert(r.next_index);
  return Stream{r.next_index++, d};
}

ThreadLocalStream new_thread_local_stream(Device d) {
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  return ThreadLocalStream{r.next_thread_local++, d};
}

Stream resolve(ThreadLocalStream s) {
  check_available(s.device, "stream");
  auto [it, made] = t_streams.thread_local_streams.try_emplace(s.id, -1);
  if (made) it->second = own_new_index();
  return Stream{it->second, s.device};
}

void clear_streams() {
  t_streams.owned.clear();
  t_streams.thread_local_streams.clear();
  for (int& i : t_default)
    if (i >= 0 && !is_unsafe(i)) i = -2 - i;
}

void enqueue(Stream s, std::function<void()> task) { worker(s).push(std::move(task)); }

void synchronize(Stream s) {
  auto& r = registry();
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> l(r.mu);
    auto it = r.workers.find(s.index);
    if (it != r.workers.end()) w = it->second.get();
  }
  if (w) w->wait();
}

void synchronize_all() {
  std::vector<Worker*> ws;
  {
    auto& r = registry();
    std::lock_guard<std::mutex> l(r.mu);
    for (auto& [i, w] : r.workers) ws.push_back(w.get());
  }
  for (Worker* w : ws) w->wait();
}

}  // namespace nuvec
