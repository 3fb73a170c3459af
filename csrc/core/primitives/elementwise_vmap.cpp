// The vmap rule of the element-wise family: align the batch axes, then apply the same primitive
// (its kernel broadcasts, so unbatched inputs are read as they are).
#include "core/primitives/elementwise.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Elementwise::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                         const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  int rank = out.ndim();
  int64_t n = batch_size(inputs, axes);
  // Every input batched at the same axis with the output's rank: nothing moves.
  bool same = true;
  for (size_t i = 0; i < inputs.size(); ++i) same &= axes[i] == axes[0] && inputs[i].ndim() == rank + 1;
  if (same) return {{remake(*this, with_batch(out.shape(), n, axes[0]), out, inputs)}, {axes[0]}};
  std::vector<Array> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(axes[i] < 0 ? inputs[i] : front_aligned(inputs[i], axes[i], rank));
  return {{remake(*this, with_batch(out.shape(), n), out, ins)}, {0}};
}

}  // namespace nuvec
