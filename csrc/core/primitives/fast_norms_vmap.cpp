// vmap rule of the row normalizations: they act on the last axis, so the batch axis of x (and of
// the residual) moves to the front; a batched weight or bias applies after an unweighted
// normalization, broadcast over each example's rows.
#include "core/ops/fast_norms.h"
#include "core/primitives/fast_norms.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result RowNorm::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                     const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  int64_t n = batch_size(inputs, axes);
  int rank = outputs[0].ndim();
  bool add_rms = kind_ == NormKind::add_rms;
  Array x = front_or_repeated(inputs[0], axes[0], n);
  std::optional<Array> w, b;
  if (weighted_) w = inputs[size_t(weight_index())];
  if (biased_) b = inputs[size_t(bias_index())];
  bool wb = weighted_ && axes[size_t(weight_index())] >= 0, bb = biased_ && axes[size_t(bias_index())] >= 0;
  // A batched vector (n, D) as (n, 1, ..., 1, D), to broadcast over one example's rows.
  auto spread = [&](const Array& v, int axis) { return front_aligned(v, axis, rank); };
  std::vector<Array> out;
  if (add_rms) {
    Array r = front_or_repeated(inputs[1], axes[1], n);
    auto [y, h] = add_rms_norm(x, r, wb ? std::nullopt : w, eps_, s);
    out = {y, h};
  } else if (kind_ == NormKind::rms) {
    out = {rms_norm(x, wb ? std::nullopt : w, eps_, s)};
  } else {
    out = {layer_norm(x, wb ? std::nullopt : w, (wb || bb) ? std::nullopt : b, eps_, s)};
  }
  if (wb) out[0] = binary(BinaryOp::multiply, out[0], spread(*w, axes[size_t(weight_index())]), s);
  if (biased_ && (wb || bb)) {
    Array bias = bb ? spread(*b, axes[size_t(bias_index())]) : *b;
    out[0] = binary(BinaryOp::add, out[0], bias, s);
  }
  out[0] = astype(out[0], outputs[0].dtype(), s);
  std::vector<int> out_axes(out.size(), 0);
  return {out, out_axes};
}

}  // namespace nuvec
