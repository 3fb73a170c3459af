// vmap rules of sort and partition: the same operation along the shifted axis.
#include "core/primitives/sort.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Sort::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  auto p = std::make_shared<Sort>(shifted(axis_, axes[0]), indices_);
  return {{Array::lazy(x.shape(), outputs[0].dtype(), p, {x}, x.stream())}, {axes[0]}};
}

Result Partition::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  auto p = std::make_shared<Partition>(shifted(axis_, axes[0]), kth_, indices_);
  return {{Array::lazy(x.shape(), outputs[0].dtype(), p, {x}, x.stream())}, {axes[0]}};
}

}  // namespace nuvec
