#include "transforms/trace.h"

#include <string>

#include "core/graph_walk.h"
#include "core/ops.h"
#include "core/primitive.h"

namespace nuvec {
namespace {
thread_local int t_depth = 0;
}  // namespace

TraceLevel::TraceLevel(const char* transform) {
  if (t_depth >= 31) throw OpError(transform, "transforms are nested too deeply (31 levels)");
  level_ = t_depth++;
  take_traced(level_);  // nothing left over from an earlier transform at this depth
}

TraceLevel::~TraceLevel() {
  --t_depth;
  // Every node that got this level's bit, forward and backward pass alike, becomes ordinary:
  // evaluation may now detach it, and already evaluated ones release their inputs.
  for (auto& w : take_traced(level_)) {
    std::shared_ptr<Node> n = w.lock();
    if (!n) continue;
    n->traced &= ~bit();
    if (!n->traced && n->evaluated.load()) {
      std::vector<Array> inputs;
      inputs.swap(n->inputs);
      n->primitive.reset();
    }
  }
}

ValuelessLevel::ValuelessLevel(const TraceLevel& level, const char* reason) : bit_(level.bit()) {
  valueless_trace_reason(level.level()) = reason;
  valueless_trace_bits() |= bit_;
}

ValuelessLevel::~ValuelessLevel() { valueless_trace_bits() &= ~bit_; }

std::vector<Array> make_tracers(const std::vector<Array>& primals, TraceLevel& level) {
  std::vector<Array> tracers;
  for (const Array& p : primals) {
    Stream s = default_stream(default_device());
    // An identity node (a same-dtype copy shares the buffer) that the walk can stop at.
    Array t = Array::lazy(p.shape(), p.dtype(), std::make_shared<Unary>(UnaryOp::copy, p.dtype(), p.dtype()), {p}, s);
    t.node()->traced |= level.bit();
    note_traced(t.node_ptr());
    tracers.push_back(t);
  }
  return tracers;
}

std::vector<Node*> traced_order(const std::vector<Array>& outputs, const std::unordered_set<Node*>& leaves,
                                uint32_t bit) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen;
  auto enter = [&](Node* n) { return (n->traced & bit) && seen.insert(n).second && !leaves.count(n); };
  post_order(outputs, enter, order);
  return order;
}

std::vector<Array> outputs_of(Node* n, const std::shared_ptr<Node>& self) {
  std::vector<Array> outs;
  if (n->siblings.empty()) {
    outs.emplace_back(self);
    return outs;
  }
  for (size_t i = 0; i < n->siblings.size(); ++i) {
    if (auto sib = n->siblings[i].lock()) {
      outs.emplace_back(sib);
    } else {
      // An output nobody kept: it gets no cotangent; zeros stand in with its shape and dtype.
      auto& [shape, dtype] = (*n->sibling_specs)[i];
      outs.push_back(full(shape, scalar_array(int64_t(0), dtype), std::nullopt, n->stream));
    }
  }
  return outs;
}

}  // namespace nuvec
