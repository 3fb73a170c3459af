// vmap rules of the gathered and segmented products: the batch folds into the indices. A batched
// operand's batch entries (or inner axis, for segmented_mm) are flattened with the vmapped axis
// in front, and each example's indices are offset to its own entries: one product for all
// examples, whose rows keep the bits of the unbatched ones.
#include "core/ops.h"
#include "core/primitives/gathered.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

namespace {

// (n, 1, ..., 1) of step * v for example v, to add to indices of rank `rank` + 1.
Array example_offsets(int64_t n, int64_t step, int rank, Stream s) {
  Shape shape(size_t(rank) + 1, 1);
  shape[0] = n;
  return reshape(arange(0, double(n * step), double(std::max<int64_t>(step, 1)), Dtype::uint32, s), shape, s);
}

int64_t batch_entries(const Shape& shape, int lead) {
  int64_t e = 1;
  for (int d = 0; d < lead; ++d) e *= shape[d];
  return e;
}

// x (X..., r, c) with batch entries flattened to (entries, r, c), the vmapped examples' in turn,
// and the example indices `idx` (I..., batched or not) offset to them: (n, I...).
std::pair<Array, Array> fold(const Array& x, int ax, const Array& idx, int iax, int64_t n, Stream s) {
  Array f = ax >= 0 ? to_front(x, ax) : x;
  int lead = f.ndim() - 2;
  int64_t entries = batch_entries(f.shape(), lead), per_example = ax >= 0 ? entries / std::max<int64_t>(n, 1) : 0;
  Array flat = reshape(f, {entries, f.shape(-2), f.shape(-1)}, s);
  Array i = front_or_repeated(idx, iax, n);
  if (ax >= 0 && per_example > 0) i = binary(BinaryOp::add, i, example_offsets(n, per_example, i.ndim() - 1, s), s);
  return {flat, i};
}

}  // namespace

Result GatherMM::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                      const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Stream s = out.stream();
  int64_t n = batch_size(inputs, axes);
  auto [a, li] = fold(inputs[0], axes[0], inputs[2], axes[2], n, s);
  if (kind_ == Kind::product) {
    auto [b, ri] = fold(inputs[1], axes[1], inputs[3], axes[3], n, s);
    std::vector<Array> idx = broadcast_arrays({li, ri}, s);
    return {{remake(*this, with_batch(out.shape(), n), out, {a, b, idx[0], idx[1]})}, {0}};
  }
  // grad_b: g is per index position, like the indices; the output's entries are offset per example.
  Array g = front_or_repeated(inputs[1], axes[1], n);
  Array ri = front_or_repeated(inputs[3], axes[3], n);
  int64_t entries = batch_entries(out.shape(), out.ndim() - 2);
  if (entries > 0) ri = binary(BinaryOp::add, ri, example_offsets(n, entries, ri.ndim() - 1, s), s);
  std::vector<Array> idx = broadcast_arrays({li, ri}, s);
  Shape flat{n * entries, out.shape(-2), out.shape(-1)};
  Array r = remake(*this, flat, out, {a, g, idx[0], idx[1]});
  return {{reshape(r, with_batch(out.shape(), n), s)}, {0}};
}

Result SegmentedMM::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                         const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Stream s = out.stream();
  int64_t n = batch_size(inputs, axes);
  Array seg = front_or_repeated(inputs[2], axes[2], n);
  if (axes[0] < 0 && axes[1] < 0)
    return {{remake(*this, with_batch(out.shape(), n), out, {inputs[0], inputs[1], seg})}, {0}};
  // Examples side by side along the inner axis: a (M, n * K), b (n * K, N), segments offset by v * K.
  int64_t k = inputs[1].shape(axes[1] == 0 ? 1 : 0);
  Array a = moveaxis(front_or_repeated(inputs[0], axes[0], n), 0, 1, s);
  Array b = front_or_repeated(inputs[1], axes[1], n);
  a = reshape(a, {a.shape(0), n * a.shape(2)}, s);
  b = reshape(b, {n * b.shape(1), b.shape(2)}, s);
  if (k > 0) seg = binary(BinaryOp::add, seg, example_offsets(n, k, seg.ndim() - 1, s), s);
  return {{remake(*this, with_batch(out.shape(), n), out, {a, b, seg})}, {0}};
}

}  // namespace nuvec
