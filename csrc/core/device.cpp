#include "core/device.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/backend.h"
#include "core/errors.h"

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
  int next_index = 1;  // stream 0 is the CPU's default
  std::map<int, std::unique_ptr<Worker>> workers;
  Device default_device;
};

Registry& registry() {
  static Registry* r = new Registry();  // workers outlive static destruction
  return *r;
}

thread_local std::map<int, Stream> t_default_streams;  // per device type

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

Stream default_stream(Device d) {
  auto it = t_default_streams.find(int(d.type));
  if (it != t_default_streams.end()) return it->second;
  return Stream{0, d};
}

void set_default_stream(Stream s) {
  check_available(s.device, "set_default_stream");
  t_default_streams[int(s.device.type)] = s;
}

Stream new_stream(Device d) {
  check_available(d, "new_stream");
  auto& r = registry();
  std::lock_guard<std::mutex> l(r.mu);
  return Stream{r.next_index++, d};
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
