// Vectorising map of functions of arrays.
#pragma once
#include <utility>
#include <vector>

#include "transforms/autodiff.h"

namespace nuvec {

// fun mapped over axis axes[i] of inputs[i] (-1: the input is shared by every example): the
// outputs with the batch axis of each (-1: the output is the same for every example). At least
// one input must be batched, and all batched inputs must agree on the batch size.
std::pair<std::vector<Array>, std::vector<int>> vmap(const ArrayFn& fun, const std::vector<Array>& inputs,
                                                     const std::vector<int>& axes);

}  // namespace nuvec
