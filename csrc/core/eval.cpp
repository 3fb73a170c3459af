#include "core/eval.h"

#include <chrono>
#include <mutex>
#include <unordered_set>

#include "core/backend.h"
#include "core/graph_walk.h"
#include "core/profile.h"

namespace nuvec {
namespace {

// One evaluation at a time: a second thread waits, then finds shared nodes done.
std::mutex& eval_mutex() {
  static std::mutex m;
  return m;
}

uint32_t next_stamp() {
  static uint32_t stamp = 0;
  return ++stamp;
}

// The unevaluated nodes the outputs depend on, inputs before users.
std::vector<Node*> schedule(const std::vector<Array>& outputs) {
  uint32_t stamp = next_stamp();
  std::vector<Node*> order;
  post_order(
      outputs,
      [stamp](Node* n) {
        if (n->evaluated.load(std::memory_order_acquire) || n->mark == stamp) return false;
        n->mark = stamp;
        for (auto& w : n->siblings)
          if (auto sib = w.lock()) sib->mark = stamp;
        return true;
      },
      order);
  return order;
}

void run(Node* n, const std::unordered_set<Node*>& fused) {
  std::vector<Array> outs;
  std::vector<std::shared_ptr<Node>> keep;  // siblings nobody else holds still receive their output
  if (n->siblings.empty()) {
    outs.emplace_back(std::shared_ptr<Node>(std::shared_ptr<Node>{}, n));  // non-owning alias
  } else {
    for (size_t i = 0; i < n->siblings.size(); ++i) {
      auto sib = n->siblings[i].lock();
      if (!sib) {
        auto& [shape, dtype] = (*n->sibling_specs)[i];
        sib = std::make_shared<Node>(shape, dtype);
        sib->size = shape_size(shape);
      }
      keep.push_back(sib);
    }
    for (auto& k : keep) outs.emplace_back(k);
  }
  bool timed = profile::on();
  auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  try {
    bool inline_inputs = false;
    if (!fused.empty())
      for (const Array& in : n->inputs) inline_inputs |= fused.count(in.node()) > 0;
    DeviceType device = n->stream.device.type;
    if (inline_inputs)
      backend_for(device)->fusion.eval(*n->primitive, n->inputs, outs, fused);
    else
      find_kernel(*n->primitive, device)(*n->primitive, n->inputs, outs);
  } catch (const KernelError& e) {
    throw EvalError(e.kind, n->primitive->name(), e.what(), describe_call_site(n->site));
  } catch (const OpError& e) {
    throw EvalError(e.is_index ? EvalErrorKind::index : EvalErrorKind::other, n->primitive->name(), e.what(),
                    describe_call_site(n->site));
  }
  if (timed)
    profile::add(n->primitive->name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (keep.empty()) {
    finish_node(n);
  } else {
    for (auto& k : keep) finish_node(k.get());
  }
}

}  // namespace

void finish_node(Node* n) {
  n->evaluated.store(true, std::memory_order_release);
  if (n->traced) return;  // a transform still walks through this node
  std::vector<Array> inputs;
  inputs.swap(n->inputs);
  n->primitive.reset();
  n->siblings.clear();
}

void eval(const std::vector<Array>& outputs) {
  bool pending = false;
  for (const Array& a : outputs) pending |= !a.evaluated();
  if (!pending) return;
  if (uint32_t bits = valueless_trace_bits())  // as MLX: a ValueError at the call
    for (const Array& a : outputs)
      if (uint32_t hit = a.traced() & bits)
        throw OpError("eval", std::string(valueless_trace_reason(__builtin_ctz(hit))) +
                                  " (item, tolist, printing, eval, a boolean mask or an op whose shape depends on "
                                  "values)");
  std::lock_guard<std::mutex> lock(eval_mutex());
  std::vector<Node*> order = schedule(outputs);
  std::unordered_set<Node*> fused = plan_fusion(order, outputs);
  for (Node* n : order)
    if (!fused.count(n) && !n->evaluated.load(std::memory_order_acquire)) run(n, fused);
}

void async_eval(const std::vector<Array>& outputs) {
  bool pending = false;
  for (const Array& a : outputs) {
    // As MLX: a transform's traced arrays are read in place by the transform, never queued.
    if (a.traced()) throw OpError("async_eval", "not allowed on an array traced by a transform (grad, vjp, jvp, vmap)");
    pending |= !a.evaluated();
  }
  if (!pending) return;
  enqueue(outputs.front().stream(), [outputs] {
    try {
      eval(outputs);
    } catch (...) {
      // The error surfaces when the caller evaluates these arrays again.
    }
  });
}

}  // namespace nuvec
