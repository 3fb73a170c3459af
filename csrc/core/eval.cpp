#include "core/eval.h"

#include <mutex>

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

void run(Node* n) {
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
    n->primitive->eval_cpu(n->inputs, outs);
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
  for (Node* n : schedule(outputs))
    if (!n->evaluated.load(std::memory_order_acquire)) run(n);
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
