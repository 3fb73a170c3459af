#include "core/primitive.h"

#include <string>

namespace nuvec {

std::vector<Array> Primitive::vjp(const std::vector<Array>&, const std::vector<Array>&, const std::vector<int>&,
                                  const std::vector<Array>&) {
  throw OpError(name(), "has no vjp rule: it cannot be differentiated");
}

std::vector<Array> Primitive::jvp(const std::vector<Array>&, const std::vector<Array>&, const std::vector<int>&,
                                  const std::vector<Array>&) {
  throw OpError(name(), "has no jvp rule: it cannot be differentiated");
}

std::pair<std::vector<Array>, std::vector<int>> Primitive::vmap(const std::vector<Array>&, const std::vector<int>&,
                                                                const std::vector<Array>&) {
  throw OpError(name(), "has no vmap rule: it cannot be used inside vmap");
}

}  // namespace nuvec
