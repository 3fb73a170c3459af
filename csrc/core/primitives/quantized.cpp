// What every backend's quantized kernels share: gather_qmm's index check.
#include "core/primitives/quantized.h"

#include <string>

#include "core/errors.h"

namespace nuvec {

void check_gather_qmm_indices(const uint32_t* lhs, const uint32_t* rhs, int64_t items, int64_t x_items,
                              int64_t w_items) {
  for (int64_t i = 0; i < items; ++i) {
    const bool bad_x = lhs[i] >= x_items;
    if (!bad_x && rhs[i] < w_items) continue;
    throw KernelError(EvalErrorKind::index, "index " + std::to_string(bad_x ? lhs[i] : rhs[i]) +
                                                " is out of bounds for the " + (bad_x ? "lhs" : "rhs") +
                                                " batch of size " + std::to_string(bad_x ? x_items : w_items));
  }
}

}  // namespace nuvec
