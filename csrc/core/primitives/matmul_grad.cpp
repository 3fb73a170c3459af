// Differentiation rules of the matrix product: d(a @ b) = da @ b + a @ db.
#include "core/ops.h"
#include "core/ops/matmul.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/matmul.h"
#include "core/primitives/shape.h"

namespace nuvec {
using namespace grad;

namespace {
Array swap_last(const Array& x) { return swapaxes(x, -1, -2, x.stream()); }

// Whether x is a view swapping the last two axes of another array, as nn.Linear's `weight.T`.
bool swaps_last_two(const Array& x) {
  auto* t = dynamic_cast<const Transpose*>(x.primitive().get());
  if (!t) return false;
  const std::vector<int>& perm = t->perm();
  int n = int(perm.size());
  for (int i = 0; i < n - 2; ++i)
    if (perm[i] != i) return false;
  return n >= 2 && perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

// d(a @ b)/db. When b is a transposed view, the product is computed in the layout of the array
// under the view, (g^T a)^T, so the view's own rule hands that array a row-major gradient (an
// optimizer then reads it contiguously rather than through a transpose).
Array grad_of_b(const Array& a, const Array& b, const Array& g) {
  if (swaps_last_two(b) && a.ndim() == b.ndim()) return swap_last(matmul(swap_last(g), a, g.stream()));
  return matmul(swap_last(a), g, g.stream());
}
}  // namespace

std::vector<Array> Matmul::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array& g = cotangents[0];
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 0 ? matmul(g, swap_last(primals[1]), g.stream()) : grad_of_b(primals[0], primals[1], g));
  return out;
}

std::vector<Array> Matmul::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::optional<Array> t;
  for (size_t i = 0; i < argnums.size(); ++i) {
    Stream s = outputs[0].stream();
    Array term = argnums[i] == 0 ? matmul(tangents[i], primals[1], s) : matmul(primals[0], tangents[i], s);
    t = t ? add(*t, term) : term;
  }
  return {*t};
}

}  // namespace nuvec
