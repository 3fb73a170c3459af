// What the backends' element-wise fusion shares (core/backend.h's Fusion): which nodes a pass
// takes in, and the op-by-op fallback. Each backend's fused evaluation is its own.
#pragma once
#include <unordered_set>
#include <vector>

#include "core/array.h"

namespace nuvec {

// Element-wise primitives with a kernel to chain (copies convert while gathering: they have none).
bool fusible(const Primitive& p);

// Adds to `fused` the element-wise nodes on `device` (of at least `min_elements` elements) used
// once in this evaluation, by another such node of the same shape, so they run inside that user;
// a user and the producers fused into it make at most `max_steps` steps.
void plan_elementwise_chains(const std::vector<Node*>& order, DeviceType device, int64_t min_elements, int max_steps,
                             std::unordered_set<Node*>& fused);

// The fallback: the fused producers among `inputs` evaluated op by op on `device`, inputs first.
void evaluate_producers(const std::vector<Array>& inputs, const std::unordered_set<Node*>& fused, DeviceType device);

}  // namespace nuvec
