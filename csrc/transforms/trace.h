// What the transforms share: a nesting level's traced bit (so vjp, jvp and vmap nest in any
// order with distinct bits), and the walks over the nodes that depend on a level.
#pragma once
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/array.h"

namespace nuvec {

// One nesting level of transform: its bit, and clearing it from the graph afterwards.
class TraceLevel {
 public:
  explicit TraceLevel(const char* transform);
  ~TraceLevel();
  TraceLevel(const TraceLevel&) = delete;
  TraceLevel& operator=(const TraceLevel&) = delete;
  uint32_t bit() const { return uint32_t(1) << level_; }
  int level() const { return level_; }

 private:
  int level_;
};

// While it lives, the level only records a graph to replay (compile, export_function): a primitive
// without differentiation or vmap rules (Adam's step) may be recorded, and shape-dependent
// constants are recorded as nodes (Count, BroadcastLike) so a shapeless replay recomputes them.
struct ReplayOnlyLevel {
  uint32_t bit;
  explicit ReplayOnlyLevel(const TraceLevel& level) : bit(level.bit()) { replay_only_trace_bits() |= bit; }
  ~ReplayOnlyLevel() { replay_only_trace_bits() &= ~bit; }
};

// While it lives, the arrays of a level have no value to read (vmap's placeholders stand for every
// example, compile's for every call): evaluating one raises at the call with `reason`.
class ValuelessLevel {
 public:
  ValuelessLevel(const TraceLevel& level, const char* reason);
  ~ValuelessLevel();
  ValuelessLevel(const ValuelessLevel&) = delete;
  ValuelessLevel& operator=(const ValuelessLevel&) = delete;

 private:
  uint32_t bit_;
};

// Identity nodes over `primals` carrying the level's bit: the leaves a transform's walk stops at.
std::vector<Array> make_tracers(const std::vector<Array>& primals, TraceLevel& level);

// Nodes between the leaves and the outputs that depend on this level, inputs first.
std::vector<Node*> traced_order(const std::vector<Array>& outputs, const std::unordered_set<Node*>& leaves,
                                uint32_t bit);

// The outputs of n's primitive (n alone, or its siblings; zeros stand in for a dropped one).
std::vector<Array> outputs_of(Node* n, const std::shared_ptr<Node>& self);

// A shared handle for a node reachable from `outputs` (found through its users' inputs).
struct Handles {
  std::unordered_map<Node*, Array> map;
  void add(const Array& a) { map.emplace(a.node(), a); }
  void add_inputs(Node* n) {
    for (const Array& in : n->inputs) map.emplace(in.node(), in);
  }
};

}  // namespace nuvec
