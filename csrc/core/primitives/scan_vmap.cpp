// vmap rule of the scans: the same scan along the shifted axis.
#include "core/primitives/scan.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Scan::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  auto p = std::make_shared<Scan>(op_, shifted(axis_, axes[0]), reverse_, inclusive_);
  return {{Array::lazy(x.shape(), outputs[0].dtype(), p, {x}, x.stream())}, {axes[0]}};
}

}  // namespace nuvec
