// A compiled call as one node. Where a tape's steps all run on the CPU at the traced shapes, a
// replay records a single CompiledCall node whose kernel runs the fused steps' kernels in order:
// no node per step at the call, no walk and no per-node bookkeeping at evaluation (a decode step
// of SmolLM2 is ~700 steps). Values are dropped at their last use, so kernels donate buffers as
// they would in the graph; the tape's outputs are held to the end and handed to the call's
// outputs. docs/compile.md ("One node per call").
#include <chrono>

#include "core/backend.h"
#include "core/fusion.h"
#include "core/primitive.h"
#include "core/profile.h"
#include "transforms/compile.h"

namespace nuvec {

// The plan is flat (a few arrays walked in order) because evaluation reaches it cold: a decode
// step's products stream ~100 MB between its small steps, and a step held in a handful of small
// heap blocks cost ~1.4 us of cache misses.
struct PlanStep {
  const Primitive* primitive;  // kept alive by TapePlan::primitives
  int32_t reads, num_reads;    // into TapePlan::reads and moves
  int32_t writes, num_writes;  // into TapePlan::writes, dtypes and dims_at
};

struct TapePlan {
  int num_inputs = 0, num_values = 0;
  std::vector<std::pair<int, Array>> constants;
  std::vector<std::shared_ptr<Primitive>> primitives;
  std::vector<PlanStep> steps;
  std::vector<int32_t> reads;    // every step's input values, in order
  std::vector<uint8_t> moves;    // per read: the value's last reader (handed over; other reads are lent)
  std::vector<int32_t> writes;   // every step's output values
  std::vector<Dtype> dtypes;     // per write
  std::vector<int32_t> dims_at;  // per write, and one past the last: where its shape starts in dims
  std::vector<int64_t> dims;
  std::vector<Stream> streams;  // per step
  std::vector<int> outputs;     // values
  std::vector<Shape> output_shapes;
  std::vector<Dtype> output_dtypes;
  Stream stream;
};

namespace {

// Element-wise steps this large stay out of plans (see plan_tape): the CPU's fusion threshold.
constexpr int64_t kPlanMaxLoose = int64_t(1) << 16;

class CompiledCall : public Primitive {
 public:
  explicit CompiledCall(std::shared_ptr<const TapePlan> plan) : plan_(std::move(plan)) {}
  const char* name() const override { return "compiled_call"; }
  NUVEC_KERNEL_SLOT
  bool profiles_inside() const override { return true; }
  const TapePlan& plan() const { return *plan_; }

 private:
  std::shared_ptr<const TapePlan> plan_;
};

// Stands for an input of a call whose evaluation failed part-way after its steps took it.
class TakenInput : public Primitive {
 public:
  const char* name() const override { return "compiled_call"; }
  NUVEC_KERNEL_SLOT
};

void refuse_taken(const TakenInput&, const std::vector<Array>&, std::vector<Array>&) {
  throw KernelError(EvalErrorKind::other,
                    "an earlier evaluation of this compiled call failed part-way and its steps consumed this input");
}
const bool taken_registered = add_device_free_kernel<TakenInput, refuse_taken>();

// A handle that holds nothing, for a value held elsewhere while a step reads it: no count to
// touch (the weights' nodes are cold by the time a decode step reads them), and a count of zero,
// so no kernel writes it in place.
Array borrowed(const Array& a) { return Array(std::shared_ptr<Node>(std::shared_ptr<Node>{}, a.node())); }

// After a failed step: the call's inputs as the graph needs them to stay walkable, those the
// steps consumed replaced by arrays that raise when read; every output's node gets them back.
void restore_inputs(const TapePlan& p, std::vector<Array>& values, std::vector<Array>& held,
                    std::vector<Array>& outputs) {
  held.resize(size_t(p.num_inputs));  // emptied at the start where it is an output node's own
  for (size_t i = 0; i < held.size(); ++i) {
    if (values[i].node()) {
      held[i] = values[i];
      continue;
    }
    // (Built by hand: Array::lazy records the Python caller's line, which needs the GIL.)
    auto n = std::make_shared<Node>(Shape{0}, Dtype::float32);
    n->size = 0;
    n->primitive = std::make_shared<TakenInput>();
    n->stream = p.stream;
    held[i] = Array(std::move(n));
  }
  for (Array& o : outputs)
    if (o.node()->inputs.empty()) o.node()->inputs = held;
}

// Asks for the lines the coming steps read first, two steps ahead so that the second level waits
// a step for the first: the input nodes of step `far` (with their handles' counts), and for step
// `near`, whose nodes were asked for a step ago, their shapes, strides, buffers and primitive.
void warm(const TapePlan& p, const std::vector<Array>& values, size_t near, size_t far) {
  auto nodes = [&](size_t s, auto&& ask) {
    if (s >= p.steps.size()) return;
    const PlanStep& st = p.steps[s];
    for (int32_t j = st.reads; j < st.reads + st.num_reads; ++j)
      if (Node* n = values[size_t(p.reads[size_t(j)])].node()) ask(n);
  };
  nodes(far, [](Node* n) {
    __builtin_prefetch(reinterpret_cast<char*>(n) - 16);  // make_shared's counts sit before the node
    __builtin_prefetch(reinterpret_cast<char*>(n) + 48);
  });
  nodes(near, [](Node* n) {
    __builtin_prefetch(n->shape.data());
    __builtin_prefetch(n->strides.data());
    __builtin_prefetch(n->buffer.get());
  });
  if (near < p.steps.size()) __builtin_prefetch(p.steps[near].primitive);
}

void run_plan(const CompiledCall& call, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const TapePlan& p = call.plan();
  // The node's inputs are moved in (and every output node's copy dropped): a value's last reader
  // is then its only holder and may write it in place, as in the graph.
  auto& held = const_cast<std::vector<Array>&>(inputs);
  ThreadValues kept(size_t(p.num_values));
  std::vector<Array>& values = kept.values;
  for (size_t i = 0; i < held.size(); ++i) values[i] = std::move(held[i]);
  for (Array& o : outputs) o.node()->inputs.clear();
  for (const auto& [v, c] : p.constants) values[size_t(v)] = borrowed(c);  // the plan keeps them
  const bool timed = profile::on();
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  double inside = 0;
  const PlanStep* at = nullptr;
  std::vector<Array> outs;
  std::vector<Array> spare;  // the last step's input list, its room reused (one allocation a call, not a step)
  try {
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const PlanStep& st = p.steps[s];
      at = &st;
      warm(p, values, s + 1, s + 2);
      for (int32_t k = st.writes; k < st.writes + st.num_writes; ++k) {
        auto n = std::make_shared<Node>(
            Shape(p.dims.begin() + p.dims_at[size_t(k)], p.dims.begin() + p.dims_at[size_t(k) + 1]),
            p.dtypes[size_t(k)]);
        n->size = shape_size(n->shape);
        n->stream = p.streams[s];
        outs.emplace_back(std::move(n));
      }
      // Every output's node holds the inputs while the kernel runs, as in the graph: kernels
      // count those holders when they decide to write an input in place.
      std::vector<Array>& ins = outs[0].node()->inputs;
      ins = std::move(spare);
      ins.reserve(size_t(st.num_reads));
      for (int32_t j = st.reads; j < st.reads + st.num_reads; ++j) {
        Array& v = values[size_t(p.reads[size_t(j)])];
        ins.push_back(p.moves[size_t(j)] ? std::move(v) : borrowed(v));
      }
      for (size_t k = 1; k < outs.size(); ++k) outs[k].node()->inputs = ins;
      auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      find_kernel(*st.primitive, DeviceType::cpu)(*st.primitive, ins, outs);
      if (timed) {
        double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        profile::add(st.primitive->name(), d), inside += d;
      }
      for (int32_t k = 0; k < st.num_writes; ++k) {
        Node* n = outs[size_t(k)].node();
        n->inputs.clear();  // last readers let go of their values now
        if (k == 0) spare = std::move(n->inputs);
        n->evaluated.store(true, std::memory_order_release);
        values[size_t(p.writes[size_t(st.writes + k)])] = std::move(outs[size_t(k)]);
      }
      outs.clear();
    }
  } catch (const std::exception& e) {
    // A failed step's inputs go back where they were, then the call's inputs to its nodes.
    if (!outs.empty()) {
      const std::vector<Array>& ins = outs[0].node()->inputs;
      for (size_t j = 0; j < ins.size(); ++j)
        if (p.moves[size_t(at->reads) + j]) values[size_t(p.reads[size_t(at->reads) + j])] = ins[j];
    }
    restore_inputs(p, values, held, outputs);
    auto* op = dynamic_cast<const OpError*>(&e);
    auto* kernel = dynamic_cast<const KernelError*>(&e);
    if (!op && !kernel) throw;
    EvalErrorKind kind = kernel ? kernel->kind : op->is_index ? EvalErrorKind::index : EvalErrorKind::other;
    throw KernelError(kind, std::string(at->primitive->name()) + " (inside the compiled call): " + e.what());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Array& v = values[size_t(p.outputs[k])];
    outputs[k].set_data(v.buffer(), v.strides(), v.offset());
  }
  if (timed)
    profile::add(call.name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - inside);
}
const bool registered = add_device_free_kernel<CompiledCall, run_plan>();

}  // namespace

std::atomic<bool>& plans_enabled() {
  static std::atomic<bool> on{true};
  return on;
}

std::shared_ptr<const TapePlan> plan_tape(const Tape& t) {
  // One step is one node already: a plan would only wrap it.
  if (t.shapeless || t.fused.size() < 2) return nullptr;
  for (const TapeStep& st : t.fused) {
    if (st.stream.device.type != DeviceType::cpu) return nullptr;
    // A large element-wise step the tape left alone is one evaluation's fusion may still join to
    // its neighbours: such tapes keep the graph (their calls are not bound by per-node costs).
    if (fusible(*st.primitive) && shape_size(st.shapes[0]) >= kPlanMaxLoose) return nullptr;
  }
  auto p = std::make_shared<TapePlan>();
  p->num_inputs = t.num_inputs, p->num_values = t.num_values;
  p->constants = t.constants;
  p->outputs = t.outputs;
  p->stream = t.fused.front().stream;
  for (int o : t.outputs)
    p->output_shapes.push_back(t.value_shapes[size_t(o)]), p->output_dtypes.push_back(t.value_dtypes[size_t(o)]);
  // Each value's last reader; the outputs and constants are never handed over (they outlive the
  // steps, or belong to the tape).
  std::vector<int64_t> last(size_t(t.num_values), -1);  // the index of its last read
  int64_t read = 0;
  for (const TapeStep& st : t.fused)
    for (int v : st.inputs) last[size_t(v)] = read++;
  for (int o : t.outputs) last[size_t(o)] = -1;
  for (const auto& c : t.constants) last[size_t(c.first)] = -1;
  p->dims_at.push_back(0);
  for (const TapeStep& st : t.fused) {
    p->primitives.push_back(st.primitive);
    p->steps.push_back({st.primitive.get(), int32_t(p->reads.size()), int32_t(st.inputs.size()),
                        int32_t(p->writes.size()), int32_t(st.outputs.size())});
    p->streams.push_back(st.stream);
    for (int v : st.inputs) {
      p->moves.push_back(last[size_t(v)] == int64_t(p->reads.size()));
      p->reads.push_back(v);
    }
    for (size_t k = 0; k < st.outputs.size(); ++k) {
      p->writes.push_back(st.outputs[k]);
      p->dtypes.push_back(st.dtypes[k]);
      p->dims.insert(p->dims.end(), st.shapes[k].begin(), st.shapes[k].end());
      p->dims_at.push_back(int32_t(p->dims.size()));
    }
  }
  return p;
}

std::vector<Array> replay_plan(const std::shared_ptr<const TapePlan>& plan, const std::vector<Array>& inputs) {
  auto call = std::make_shared<CompiledCall>(plan);
  if (plan->outputs.size() == 1)
    return {Array::lazy(plan->output_shapes[0], plan->output_dtypes[0], std::move(call), inputs, plan->stream)};
  PinnedCallSite site;  // every output at the caller's line, captured once
  return Array::lazy_multi(plan->output_shapes, plan->output_dtypes, std::move(call), inputs, plan->stream);
}

}  // namespace nuvec
