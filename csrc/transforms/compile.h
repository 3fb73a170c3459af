// compile: a function's graph recorded once on placeholders, simplified (constants folded,
// common subexpressions merged, no-op views dropped) and fused (element-wise steps and the
// last-axis reductions that read them become one Compiled node), then replayed on each call's
// inputs as a graph of the same primitives. docs/compile.md describes it.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "core/array.h"
#include "transforms/autodiff.h"

namespace nuvec {

struct TapeStep {
  std::shared_ptr<Primitive> primitive;
  std::vector<int> inputs;       // values
  std::vector<Shape> in_shapes;  // their shapes at the trace
  std::vector<Shape> shapes;     // its outputs' shapes at the trace
  std::vector<Dtype> dtypes;
  std::vector<int> outputs;  // values
  Stream stream;
};

struct TapePlan;  // compile_plan.cpp

struct Tape {
  int num_inputs = 0;
  std::vector<std::pair<int, Array>> constants;  // (value, array): what depends on no input
  std::vector<TapeStep> steps;                   // simplified, inputs before users
  std::vector<TapeStep> fused;                   // the same with fused groups as Compiled steps
  std::vector<int> outputs;                      // values
  int num_values = 0;
  std::vector<Shape> value_shapes;  // at the trace
  std::vector<Dtype> value_dtypes;
  bool shapeless = false;
  // Whether some constant was captured from a transform's trace (traced while it lasts): a
  // decode step's ~360 weights are then not read at every call to ask.
  bool traced_constants = false;
  // The fused steps as one node's program (compile_plan.cpp); null where the calls replay the
  // graph (shapeless, a step off the CPU, a large element-wise step left unfused).
  std::shared_ptr<const TapePlan> plan;

  // The outputs for new inputs (their dtypes and ranks as traced; their shapes too unless
  // shapeless). Fused unless some input is traced by a transform (its rules then see the steps);
  // one node for the whole call where the tape has a plan.
  std::vector<Array> replay(const std::vector<Array>& inputs) const;
};

// Runs fun once on placeholders shaped as `inputs` (reading their values raises) and records it.
std::shared_ptr<const Tape> trace_tape(const ArrayFn& fun, const std::vector<Array>& inputs, bool shapeless);

// Groups the tape's element-wise steps into Compiled steps (compile_fuse.cpp).
std::vector<TapeStep> fuse_steps(const Tape& tape);

// A replay's or a plan's values, in the thread's vector kept between calls (emptied, its capacity
// kept): a decode step's ~900 values made a fresh 14 KiB vector each call, and glibc consolidated
// its free lists (the previous step's freed nodes) for every one. A nested use finds it taken
// (empty) and grows its own.
struct ThreadValues {
  std::vector<Array> values;
  explicit ThreadValues(size_t n);
  ~ThreadValues();
  ThreadValues(const ThreadValues&) = delete;
  ThreadValues& operator=(const ThreadValues&) = delete;
};

// Whether calls run as one node where their tape has a plan (on by default; tests and
// measurements turn it off to compare with the graph).
std::atomic<bool>& plans_enabled();
// The plan of a tape's fused steps, or null where its calls must replay the graph.
std::shared_ptr<const TapePlan> plan_tape(const Tape& tape);
// A call's outputs as one node that runs the plan's steps when evaluated.
std::vector<Array> replay_plan(const std::shared_ptr<const TapePlan>& plan, const std::vector<Array>& inputs);

class Compiled;
// A fused group's domain for new input shapes (shapeless replay).
Shape group_domain(const Compiled& c, const std::vector<Shape>& inputs, const TapeStep& step);

// The output shapes of `step` for new input shapes (shapeless replay).
std::vector<Shape> output_shapes(const TapeStep& step, const std::vector<Shape>& inputs);

}  // namespace nuvec
