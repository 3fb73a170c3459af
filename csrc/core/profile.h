// Where evaluation time goes: while on, every node the evaluator runs adds its wall time to its
// primitive's total (bench/profile_lm.py prints them). Off by default, and then one relaxed
// atomic load per node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nuvec::profile {

struct Entry {
  std::string name;
  int64_t count = 0;
  double seconds = 0;
};

void start();               // clears the totals and turns timing on
std::vector<Entry> stop();  // turns it off; the totals, longest first
bool on();
void add(const char* name, double seconds);  // called by the evaluator (which runs one eval at a time)

}  // namespace nuvec::profile
