#include "core/eval.h"

#include <atomic>
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

// Walks take turns, since a schedule's walk runs beside an evaluation: the evaluation claims its
// nodes (stamps them and publishes the stamp) before running them, and the walk never enters a
// claimed node, whose inputs the evaluation detaches as it goes.
std::mutex& walk_mutex() {
  static std::mutex m;
  return m;
}
uint32_t last_stamp = 0;              // under walk_mutex
std::atomic<uint32_t> claimed_by{0};  // the running evaluation's stamp; 0 when none runs

// Publishes a claim (under walk_mutex, with the stamping, so no walk sees the nodes stamped but
// unclaimed) and clears it when the evaluation ends, however it ends.
struct Claim {
  explicit Claim(uint32_t stamp) { claimed_by.store(stamp, std::memory_order_relaxed); }
  ~Claim() { claimed_by.store(0, std::memory_order_relaxed); }
};

void mark(Node* n, uint32_t stamp) {
  n->mark = stamp;
  for (auto& w : n->siblings)
    if (auto sib = w.lock()) sib->mark = stamp;
}

// Appends the unevaluated nodes the outputs depend on, inputs before users, and returns the stamp
// they carry. Nodes of the stamp `claimed` are not entered but listed in `frontier`. The caller
// holds walk_mutex.
uint32_t walk(const std::vector<Array>& outputs, uint32_t claimed, std::vector<Node*>& order,
              std::vector<Node*>* frontier) {
  uint32_t stamp = ++last_stamp;
  post_order(
      outputs,
      [&](Node* n) {
        if (n->evaluated.load(std::memory_order_acquire) || n->mark == stamp) return false;
        if (claimed && n->mark == claimed) {
          frontier->push_back(n);
          return false;
        }
        mark(n, stamp);
        return true;
      },
      order);
  return stamp;
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
  bool timed = profile::on() && !n->primitive->profiles_inside();
  auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  try {
    bool inline_inputs = false;
    if (!fused.empty())
      for (const Array& in : n->inputs) inline_inputs |= fused.count(in.node()) > 0;
    DeviceType device = n->stream.device.type;
    Backend* b = backend_for(device);
    if (b && b->enter) b->enter(n->stream);
    if (inline_inputs)
      b->fusion.eval(*n->primitive, n->inputs, outs, fused);
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

// Runs the claimed `order`; the caller holds eval_mutex.
void run_order(const std::vector<Node*>& order, const std::vector<Array>& outputs) {
  std::unordered_set<Node*> fused = plan_fusion(order, outputs);
  bool gpu = false;
  for (Node* n : order)
    if (!fused.count(n) && !n->evaluated.load(std::memory_order_acquire)) {
      gpu |= n->stream.device.type == DeviceType::gpu;
      run(n, fused);
    }
  if (gpu)
    if (Backend* b = backend_for(DeviceType::gpu); b && b->synchronize) b->synchronize();
}

// eval's body; the caller holds eval_mutex.
void eval_locked(const std::vector<Array>& outputs) {
  std::vector<Node*> order;
  std::unique_lock<std::mutex> walk_lock(walk_mutex());
  Claim claim(walk(outputs, 0, order, nullptr));
  walk_lock.unlock();
  run_order(order, outputs);
}

void check_not_traced(const std::vector<Array>& outputs, const char* op) {
  // As MLX: a transform's traced arrays are read in place by the transform, never queued.
  for (const Array& a : outputs)
    if (a.traced()) throw OpError(op, "not allowed on an array traced by a transform (grad, vjp, jvp, vmap)");
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
  eval_locked(outputs);
}

void async_eval(const std::vector<Array>& outputs) {
  check_not_traced(outputs, "async_eval");
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

namespace {

void run_schedule(Schedule::State& s) {
  std::lock_guard<std::mutex> lock(eval_mutex());
  bool fresh = !s.ran;  // nothing listed ran meanwhile, and every claimed node did
  s.ran = true;
  std::unique_lock<std::mutex> walk_lock(walk_mutex());
  for (Node* n : s.order) fresh &= !n->evaluated.load(std::memory_order_acquire);
  // (Only now are the frontier's nodes known alive: their unevaluated users hold them.)
  if (fresh)
    for (Node* n : s.frontier) fresh &= n->evaluated.load(std::memory_order_acquire);
  // Claims the listed nodes again: a later schedule's walk may have stamped them since.
  uint32_t stamp = fresh ? ++last_stamp : 0;
  if (fresh)
    for (Node* n : s.order) mark(n, stamp);
  Claim claim(stamp);
  walk_lock.unlock();
  std::vector<Node*> order;
  order.swap(s.order);
  s.frontier.clear();
  // When fresh, every listed node is still reached from the outputs through unevaluated nodes
  // (only evaluation drops inputs), so the outputs keep them alive; the handles go before the run
  // so that buffers can still be donated.
  s.held.clear();
  if (!fresh) return eval_locked(s.outputs);  // walk again (a no-op when the outputs are done)
  run_order(order, s.outputs);
}

}  // namespace

Schedule::Schedule(std::vector<Array> outputs) : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.outputs = std::move(outputs);
  check_not_traced(s.outputs, "schedule");
  std::lock_guard<std::mutex> walk_lock(walk_mutex());
  uint32_t stamp = walk(s.outputs, claimed_by.load(std::memory_order_relaxed), s.order, &s.frontier);
  // Handles on the listed nodes: one evaluated meanwhile drops its inputs, which may have been the
  // last holders of others. Each listed node is an output or an input of one; a second stamp
  // takes each once.
  uint32_t held = ++last_stamp;
  auto hold = [&](const Array& a) {
    if (a.node()->mark != stamp) return;
    a.node()->mark = held;
    s.held.push_back(a);
  };
  for (const Array& a : s.outputs) hold(a);
  for (Node* n : s.order)
    for (const Array& in : n->inputs) hold(in);
  s.nodes = s.order.size();
}

void Schedule::eval() { run_schedule(*state_); }

void Schedule::async_eval() {
  bool pending = false;
  for (const Array& a : state_->outputs) pending |= !a.evaluated();
  if (!pending) return;
  enqueue(state_->outputs.front().stream(), [state = state_] {
    try {
      run_schedule(*state);
    } catch (...) {
      // As async_eval: the error surfaces when the caller evaluates the outputs again.
    }
  });
}

}  // namespace nuvec
