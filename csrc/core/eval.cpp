#include "core/eval.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/primitive.h"

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

// The unevaluated nodes the outputs depend on, inputs before users, by an explicit-stack walk.
std::vector<Node*> schedule(const std::vector<Array>& outputs) {
  uint32_t stamp = next_stamp();
  std::vector<Node*> order;
  std::vector<std::pair<Node*, size_t>> stack;
  auto visit = [&](Node* n) {
    if (n->evaluated.load(std::memory_order_acquire) || n->mark == stamp) return;
    n->mark = stamp;
    for (auto& w : n->siblings)
      if (auto sib = w.lock()) sib->mark = stamp;
    stack.emplace_back(n, 0);
  };
  for (const Array& a : outputs) {
    visit(a.node());
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* child = n->inputs[next++].node();
        visit(child);
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

constexpr int kMaxFusedSteps = 8;
// Smaller arrays stay in cache between ops anyway: fusing them saves nothing.
constexpr int64_t kFuseMinElements = int64_t(1) << 16;

// Element-wise nodes used once, by another element-wise node of the same shape, in this
// evaluation and by nothing else: they run inside that user and are never stored.
std::unordered_set<Node*> fusible_nodes(const std::vector<Node*>& order, const std::vector<Array>& outputs) {
  std::unordered_set<Node*> fused;
  auto large = [](Node* n) { return n->size >= kFuseMinElements; };
  if (std::none_of(order.begin(), order.end(), large)) return fused;  // nothing worth a pass
  std::unordered_set<Node*> pending, requested;
  for (Node* n : order)
    if (large(n)) pending.insert(n);
  std::unordered_map<Node*, int> uses;
  for (Node* n : order)
    for (const Array& in : n->inputs)
      if (pending.count(in.node())) ++uses[in.node()];
  for (const Array& a : outputs) requested.insert(a.node());
  auto candidate = [&](Node* n) {
    return large(n) && n->primitive && n->primitive->fusible() && !n->traced && n->siblings.empty();
  };
  // Steps in each group (a node and the producers fused into it), bounded so a group's kernels
  // share a few small buffers and no walk over a group goes deep.
  std::unordered_map<Node*, int> steps;
  for (Node* user : order) {
    if (!candidate(user)) continue;
    int total = 1;
    for (const Array& in : user->inputs) {
      Node* a = in.node();
      if (pending.count(a) && !requested.count(a) && uses[a] == 1 && in.use_count() == 1 && candidate(a) &&
          a->shape == user->shape && total + steps[a] <= kMaxFusedSteps) {
        fused.insert(a);
        total += steps[a];
      }
    }
    steps[user] = total;
  }
  return fused;
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
  try {
    bool inline_inputs = false;
    if (!fused.empty())
      for (const Array& in : n->inputs) inline_inputs |= fused.count(in.node()) > 0;
    if (inline_inputs) n->primitive->eval_cpu_fused(n->inputs, outs, fused);
    else n->primitive->eval_cpu(n->inputs, outs);
  } catch (const KernelError& e) {
    throw EvalError(e.kind, n->primitive->name(), e.what(), describe_call_site(n->site));
  } catch (const OpError& e) {
    throw EvalError(e.is_index ? EvalErrorKind::index : EvalErrorKind::other, n->primitive->name(), e.what(),
                    describe_call_site(n->site));
  }
  // Detach: the outputs hold their data now, so the inputs can be freed.
  auto finish = [](Node* m) {
    m->evaluated.store(true, std::memory_order_release);
    if (m->traced) return;  // a transform still walks through this node
    std::vector<Array> inputs;
    inputs.swap(m->inputs);
    m->primitive.reset();
    m->siblings.clear();
  };
  if (keep.empty()) {
    finish(n);
  } else {
    for (auto& k : keep) finish(k.get());
  }
}

}  // namespace

void eval(const std::vector<Array>& outputs) {
  bool pending = false;
  for (const Array& a : outputs) pending |= !a.evaluated();
  if (!pending) return;
  std::lock_guard<std::mutex> lock(eval_mutex());
  std::vector<Node*> order = schedule(outputs);
  std::unordered_set<Node*> fused = fusible_nodes(order, outputs);
  for (Node* n : order)
    if (!fused.count(n) && !n->evaluated.load(std::memory_order_acquire)) run(n, fused);
}

void async_eval(const std::vector<Array>& outputs) {
  bool pending = false;
  for (const Array& a : outputs) pending |= !a.evaluated();
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
