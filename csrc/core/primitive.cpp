#include "core/primitive.h"

#include <atomic>
#include <string>

namespace nuvec {

int new_kernel_slot() {
  static std::atomic<int> next{0};
  return next++;
}

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
