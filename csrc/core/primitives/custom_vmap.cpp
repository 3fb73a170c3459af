// vmap rule of custom functions: the front end's rule (the user's, or the function itself
// vmapped), given the primals alone (the hidden outputs are never batched).
#include <string>

#include "core/primitives/custom.h"

namespace nuvec {

std::pair<std::vector<Array>, std::vector<int>> Custom::vmap(const std::vector<Array>& inputs,
                                                             const std::vector<int>& axes,
                                                             const std::vector<Array>& outputs) {
  std::vector<Array> p(inputs.begin(), inputs.begin() + num_primals_);
  std::vector<int> ax(axes.begin(), axes.begin() + num_primals_);
  auto result = vmap_(p, ax);
  if (result.first.size() != outputs.size() || result.second.size() != outputs.size())
    throw OpError(name(), "the vmap rule returned " + std::to_string(result.first.size()) + " outputs for " +
                              std::to_string(outputs.size()));
  return result;
}

}  // namespace nuvec
