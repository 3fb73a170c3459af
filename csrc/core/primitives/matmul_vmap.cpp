// vmap rule of the matrix product. When one operand alone is batched, its batch axis is folded
// into its rows (a) or columns (b): one larger product instead of many small ones, and for a the
// rows keep the bits of the unbatched product (the row-independence promise).
#include "core/ops.h"
#include "core/ops/matmul.h"
#include "core/primitives/matmul.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Matmul::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  const Array& a = inputs[0];
  const Array& b = inputs[1];
  const Array& out = outputs[0];
  Stream s = out.stream();
  int r = out.ndim();  // one example's rank: (..., M, N)
  int64_t n = batch_size(inputs, axes);
  if (axes[0] >= 0 && axes[1] >= 0) return {{matmul(to_front(a, axes[0]), to_front(b, axes[1]), s)}, {0}};
  if (axes[0] >= 0) {
    // (..., n, M, K) -> (..., n * M, K)
    Array x = moveaxis(a, axes[0], r - 2, s);
    Shape folded(x.shape().begin(), x.shape().end() - 3);
    folded.insert(folded.end(), {n * x.shape(r - 1), x.shape(r)});
    Array y = matmul(reshape(x, folded, s), b, s);
    return {{reshape(y, with_batch(out.shape(), n, r - 2), s)}, {r - 2}};
  }
  // (..., K, N, n) -> (..., K, N * n): column j * n + i is example i's column j.
  Array y = moveaxis(b, axes[1], r, s);
  Shape folded(y.shape().begin(), y.shape().end() - 2);
  folded.push_back(y.shape(r - 1) * n);
  Array p = matmul(a, reshape(y, folded, s), s);
  return {{reshape(p, with_batch(out.shape(), n, r), s)}, {r}};
}

}  // namespace nuvec
