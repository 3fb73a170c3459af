// vmap rules of gather, scatter and concatenate. Batched index arrays get their batch axis in
// front; when the source is batched as well, an index array over the batch (an arange) indexes
// its batch axis, so example i reads (gather) or updates (scatter) only its own slice. A scatter
// always updates every example (MLX's rule updates only the first when the indices are batched).
#include "core/primitives/indexing.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

namespace {
// The index arrays from inputs[first], batched ones aligned to (n, I...) for an index shape of
// rank `rank` (unbatched ones broadcast against them as they are).
std::vector<Array> aligned_indices(const std::vector<Array>& inputs, const std::vector<int>& axes, size_t first,
                                   int rank) {
  std::vector<Array> idx;
  for (size_t k = first; k < inputs.size(); ++k)
    idx.push_back(axes[k] < 0 ? inputs[k] : front_aligned(inputs[k], axes[k], rank));
  return idx;
}

// arange(n) along the front of a grid of rank 1 + rank.
Array batch_index(int64_t n, int rank, Stream s) {
  Shape shape(rank + 1, 1);
  shape[0] = n;
  return reshape(arange(0, double(n), 1, Dtype::int64, s), shape, s);
}

// One example's index shape I has rank out_rank - (src_rank - indexed axes).
int index_rank(const Array& out, int src_rank, size_t indexed) { return out.ndim() - (src_rank - int(indexed)); }

std::vector<int> shifted_by_one(const std::vector<int>& axes) {
  std::vector<int> out{0};
  for (int a : axes) out.push_back(a + 1);
  return out;
}
}  // namespace

Result Gather::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  const Array& src = inputs[0];
  Stream s = outputs[0].stream();
  int src_rank = src.ndim() - (axes[0] >= 0);
  int rank = index_rank(outputs[0], src_rank, axes_.size());
  bool indices_batched = false;
  for (size_t k = 1; k < axes.size(); ++k) indices_batched |= axes[k] >= 0;
  if (!indices_batched) {
    // Index the example axes of the batched source: the batch axis comes out behind I.
    std::vector<int> ax;
    for (int a : axes_) ax.push_back(a + 1);
    std::vector<Array> idx(inputs.begin() + 1, inputs.end());
    return {{gather(to_front(src, axes[0]), idx, ax, s)}, {rank}};
  }
  std::vector<Array> idx = aligned_indices(inputs, axes, 1, rank);
  if (axes[0] < 0) return {{gather(src, idx, axes_, s)}, {0}};
  idx.insert(idx.begin(), batch_index(batch_size(inputs, axes), rank, s));
  return {{gather(to_front(src, axes[0]), idx, shifted_by_one(axes_), s)}, {0}};
}

Result Scatter::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                     const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  int64_t n = batch_size(inputs, axes);
  const Array& out = outputs[0];
  // The updates are shaped I + the source's other axes.
  int rank = inputs[1].ndim() - (axes[1] >= 0) - (out.ndim() - int(axes_.size()));
  std::vector<Array> idx = aligned_indices(inputs, axes, 2, rank);
  idx.insert(idx.begin(), batch_index(n, rank, s));
  Array src = front_or_repeated(inputs[0], axes[0], n);
  Array updates = axes[1] < 0 ? inputs[1] : to_front(inputs[1], axes[1]);
  return {{scatter(src, idx, updates, shifted_by_one(axes_), op_, s)}, {0}};
}

Result Concatenate::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                         const std::vector<Array>& outputs) {
  int64_t n = batch_size(inputs, axes);
  std::vector<Array> parts;
  for (size_t i = 0; i < inputs.size(); ++i) parts.push_back(front_or_repeated(inputs[i], axes[i], n));
  return {{concatenate(parts, axis_ + 1, outputs[0].stream())}, {0}};
}

}  // namespace nuvec
