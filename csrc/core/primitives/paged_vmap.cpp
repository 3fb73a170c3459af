// vmap rule of paged_attention: the vmapped axis X folds into the sequences (example-major), so a
// batch of calls over one pair of pools is one call with X times the sequences; unbatched queries,
// tables or lengths are repeated (broadcast views). Pools batched along X have no such fold.
#include "core/ops.h"
#include "core/primitives/paged.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result PagedAttention::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                            const std::vector<Array>& outputs) {
  if (axes[1] >= 0 || axes[2] >= 0)
    throw OpError("paged_attention", "vmap over the page pools is not supported: share one pool and vmap the tables");
  Stream s = outputs[0].stream();
  int64_t x = batch_size(inputs, axes);
  std::vector<Array> in{inputs[0], inputs[1], inputs[2]};
  in[0] = flatten(front_or_repeated(inputs[0], axes[0], x), 0, 1, s);
  for (size_t i = 3; i < 5; ++i) in.push_back(flatten(front_or_repeated(inputs[i], axes[i], x), 0, 1, s));
  Shape o = outputs[0].shape();  // (B, Hq, 1, Dv)
  Array y = Array::lazy({x * o[0], o[1], o[2], o[3]}, outputs[0].dtype(), shared_from_this(), std::move(in), s);
  return {{unflatten(y, 0, {x, o[0]}, s)}, {0}};
}

}  // namespace nuvec
