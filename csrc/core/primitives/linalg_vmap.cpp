// vmap rules of nuvec.linalg's LU / triangular / Cholesky primitives: they are batched over
// leading axes already, so the batch axis moves to the front (an unbatched operand of a solve is
// repeated along it) and one node does every example.
#include "core/ops.h"
#include "core/ops/linalg.h"
#include "core/primitives/linalg.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

namespace {

// Both operands with the batch axis in front; one unbatched matrix a stays as it is (the solve
// then takes the batch as columns of b instead of repeating a).
std::pair<Array, Array> fronts(const std::vector<Array>& inputs, const std::vector<int>& axes) {
  int64_t n = batch_size(inputs, axes);
  if (axes[0] < 0 && inputs[0].ndim() == 2) return {inputs[0], to_front(inputs[1], axes[1])};
  return {front_or_repeated(inputs[0], axes[0], n), front_or_repeated(inputs[1], axes[1], n)};
}

}  // namespace

Result LUFactor::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  const Array& a = inputs[0];
  return {linalg::lu_factor_all(to_front(a, axes[0]), a.stream()), {0, 0, 0}};
}

Result Solve::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  auto [a, b] = fronts(inputs, axes);
  return {{linalg::solve_matrix(a, b, transpose_, outputs[0].stream())}, {0}};
}

Result TriangularSolve::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                             const std::vector<Array>& outputs) {
  auto [t, b] = fronts(inputs, axes);
  return {{linalg::triangular_solve(t, b, upper_, transpose_, unit_, outputs[0].stream())}, {0}};
}

Result Cholesky::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  return {{linalg::cholesky(to_front(inputs[0], axes[0]), upper_, inputs[0].stream())}, {0}};
}

Result Inverse::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  return {{linalg::inverse(to_front(inputs[0], axes[0]), triangular_, upper_, inputs[0].stream())}, {0}};
}

}  // namespace nuvec
