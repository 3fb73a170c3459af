// Evaluation of lazy graphs.
#pragma once
#include <memory>
#include <vector>

#include "core/array.h"

namespace nuvec {

// Evaluates the arrays (and what they depend on) now, on the calling thread. Each node runs
// once even when several threads evaluate graphs that share it.
void eval(const std::vector<Array>& outputs);
// Queues the evaluation on the arrays' stream worker and returns at once.
void async_eval(const std::vector<Array>& outputs);
// Marks a node evaluated (its outputs hold their data) and, unless a transform still walks
// through it, drops its inputs and primitive so they can be freed.
void finish_node(Node* n);

// The work of evaluating `outputs`, ordered now and run later (nuvec.schedule): the walk may run
// while an evaluation is in progress (it stops at the nodes that evaluation runs), so ordering
// the next graph overlaps the current one. Running checks that nothing it lists was evaluated
// meanwhile and that the nodes it stopped at were; else it walks again, as eval would.
class Schedule {
 public:
  explicit Schedule(std::vector<Array> outputs);  // OpError for arrays traced by a transform
  void eval();                                    // runs now (a no-op once run)
  void async_eval();                              // queues eval() on the outputs' stream worker
  size_t nodes() const { return state_->nodes; }  // the unevaluated nodes found when ordering
  size_t outputs() const { return state_->outputs.size(); }

  // Shared with a queued async_eval (a handle owned by C++ alone: its worker holds no Python object).
  struct State {
    std::vector<Array> outputs;
    std::vector<Node*> order;     // inputs before users
    std::vector<Node*> frontier;  // nodes a running evaluation had claimed (not entered)
    std::vector<Array> held;      // keeps order's nodes alive until the run
    size_t nodes = 0;
    bool ran = false;  // under the evaluation lock
  };

 private:
  std::shared_ptr<State> state_;
};

}  // namespace nuvec
