// vmap rule of the convolution: a batched input folds its batch axis into N (one larger
// convolution); a batched weight folds it into the groups, each example's kernels seeing its own
// copy of the input channels; both batched, each example's input channels become groups too.
#include "core/ops.h"
#include "core/ops/conv.h"
#include "core/primitives/conv.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Convolution::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                         const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  int64_t b = batch_size(inputs, axes);
  int nd = outputs[0].ndim();  // one example's rank: (N, *O, C_out)
  const Array& out = outputs[0];
  if (axes[1] < 0) {
    // (B, N, *S, C) -> (B * N, *S, C)
    Array x = to_front(inputs[0], axes[0]);
    Shape folded(x.shape().begin() + 1, x.shape().end());
    folded[0] *= b;
    Array y = convolution(reshape(x, folded, s), inputs[1], p_, s);
    return {{reshape(y, with_batch(out.shape(), b), s)}, {0}};
  }
  // Weight (B, C_out, *K, Cig) -> (B * C_out, *K, Cig), groups B * G.
  Array w = to_front(inputs[1], axes[1]);
  Shape wf(w.shape().begin() + 1, w.shape().end());
  wf[0] *= b;
  // Input (N, *S, B, C): example i's channels are group block i.
  Array x = inputs[0];
  if (axes[0] < 0) {
    Shape rep = x.shape();
    rep.insert(rep.end() - 1, b);
    x = broadcast_to(expand_dims(x, {nd - 1}, s), rep, s);
  } else {
    x = moveaxis(x, axes[0], nd - 1, s);
  }
  Shape xf(x.shape().begin(), x.shape().end() - 1);
  xf.back() *= x.shape(-1);
  ConvParams q = p_;
  q.groups *= b;
  Array y = convolution(reshape(x, xf, s), reshape(w, wf, s), std::move(q), s);  // (N, *O, B * C_out)
  return {{reshape(y, with_batch(out.shape(), b, nd - 1), s)}, {nd - 1}};
}

}  // namespace nuvec
