// vmap rule of scaled_dot_product_attention: the vmapped axis X folds into the heads, example-major
// (query head x * Hq + h reads key head x * Hkv + h / rep, the grouping unchanged), so a batch of
// calls is one call with X times the heads; unbatched operands are repeated (broadcast views).
#include "core/ops.h"
#include "core/primitives/attention.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result ScaledDotProductAttention::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                       const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  int64_t x = batch_size(inputs, axes);
  std::vector<Array> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Array a = front_or_repeated(inputs[i], axes[i], x);  // (X, ...)
    if (a.ndim() == 2) {                                 // sinks (X, Hq) -> (X * Hq)
      in.push_back(reshape(a, {a.shape(0) * a.shape(1)}, s));
      continue;
    }
    Array m = moveaxis(a, 0, 1, s);  // (B, X, H, L, D) -> (B, X * H, L, D)
    in.push_back(flatten(m, 1, 2, s));
  }
  const Shape& o = outputs[0].shape();  // (B, Hq, Lq, Dv)
  Array y = Array::lazy({o[0], x * o[1], o[2], o[3]}, outputs[0].dtype(), shared_from_this(), std::move(in), s);
  return {{unflatten(y, 1, {x, o[1]}, s)}, {1}};
}

}  // namespace nuvec
