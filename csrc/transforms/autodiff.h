// Reverse and forward mode differentiation of functions of arrays.
#pragma once
#include <functional>
#include <vector>

#include "core/array.h"

namespace nuvec {

using ArrayFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// (fun(primals), the cotangents of primals given `cotangents` of fun's outputs; none given means
// ones for every output, as grad needs).
std::pair<std::vector<Array>, std::vector<Array>> vjp(const ArrayFn& fun, const std::vector<Array>& primals,
                                                      const std::vector<Array>& cotangents);
// (fun(primals), the tangents of fun's outputs given `tangents` of the primals).
std::pair<std::vector<Array>, std::vector<Array>> jvp(const ArrayFn& fun, const std::vector<Array>& primals,
                                                      const std::vector<Array>& tangents);

}  // namespace nuvec
