#include "core/profile.h"

#include <algorithm>
#include <atomic>
#include <unordered_map>

namespace nuvec::profile {
namespace {

std::atomic<bool> g_on{false};
// Keyed by the primitive's name pointer (names are static strings); the evaluator's lock
// serialises the writers, and start/stop run while nothing evaluates on this thread's stream.
std::unordered_map<const char*, Entry>& totals() {
  static std::unordered_map<const char*, Entry> t;
  return t;
}

}  // namespace

void start() {
  totals().clear();
  g_on.store(true, std::memory_order_relaxed);
}

std::vector<Entry> stop() {
  g_on.store(false, std::memory_order_relaxed);
  std::unordered_map<std::string, Entry> by_name;  // equal names from different pointers merge
  for (auto& [key, e] : totals()) {
    Entry& m = by_name[e.name];
    m.name = e.name;
    m.count += e.count;
    m.seconds += e.seconds;
  }
  std::vector<Entry> out;
  for (auto& [name, e] : by_name) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.seconds > b.seconds; });
  return out;
}

bool on() { return g_on.load(std::memory_order_relaxed); }

void add(const char* name, double seconds) {
  Entry& e = totals()[name];
  if (e.name.empty()) e.name = name;
  e.count += 1;
  e.seconds += seconds;
}

}  // namespace nuvec::profile
