// Evaluation of lazy graphs.
#pragma once
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

}  // namespace nuvec
