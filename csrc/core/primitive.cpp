#include "core/primitive.h"

#include <mutex>
#include <string>
#include <typeindex>
#include <unordered_map>

namespace nuvec {

int kernel_slot_for(const std::type_info& type) {
  static std::mutex mu;
  static std::unordered_map<std::type_index, int> slots;
  std::lock_guard<std::mutex> lock(mu);
  return slots.try_emplace(std::type_index(type), int(slots.size())).first->second;
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
