// Differentiation rules of the matrix product: d(a @ b) = da @ b + a @ db.
#include "core/ops.h"
#include "core/ops/matmul.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/matmul.h"

namespace nuvec {
using namespace grad;

namespace {
Array swap_last(const Array& x) { return swapaxes(x, -1, -2, x.stream()); }
}  // namespace

std::vector<Array> Matmul::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array& g = cotangents[0];
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 0 ? matmul(g, swap_last(primals[1]), g.stream()) : matmul(swap_last(primals[0]), g, g.stream()));
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
