// vmap rule of the decompositions: they already run over leading batch axes, so the batch axis
// moves to the front and every output carries it there.
#include "core/ops/linalg_spectral.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Decompose::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  Array x = to_front(inputs[0], axes[0]);
  std::vector<Array> out = decompose(x, kind_, upper_, x.stream());
  return {out, std::vector<int>(out.size(), 0)};
}

}  // namespace nuvec
