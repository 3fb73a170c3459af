#include "core/fusion.h"

#include <algorithm>
#include <unordered_map>

#include "core/backend.h"
#include "core/eval.h"
#include "core/primitives/elementwise.h"

namespace nuvec {

bool fusible(const Primitive& p) {
  if (auto* u = dynamic_cast<const Unary*>(&p)) return u->op() != UnaryOp::copy && u->op() != UnaryOp::stop_gradient;
  return dynamic_cast<const Elementwise*>(&p) != nullptr;
}

// Those also asked for or held elsewhere are stored as they are computed (a backend's fused
// evaluation tells them by their handle count); the others are never stored.
void plan_elementwise_chains(const std::vector<Node*>& order, DeviceType device, int64_t min_elements, int max_steps,
                             std::unordered_set<Node*>& fused) {
  auto large = [&](Node* n) { return n->size >= min_elements && n->stream.device.type == device; };
  if (std::none_of(order.begin(), order.end(), large)) return;  // nothing worth a pass
  std::unordered_set<Node*> pending;
  for (Node* n : order)
    if (large(n)) pending.insert(n);
  std::unordered_map<Node*, int> uses;
  for (Node* n : order)
    for (const Array& in : n->inputs)
      if (pending.count(in.node())) ++uses[in.node()];
  auto candidate = [&](Node* n) {
    return large(n) && n->primitive && fusible(*n->primitive) && !n->traced && n->siblings.empty();
  };
  // Steps in each group (a node and the producers fused into it), bounded so a group's kernels
  // share a few small buffers and no walk over a group goes deep.
  std::unordered_map<Node*, int> steps;
  for (Node* user : order) {
    if (!candidate(user)) continue;
    int total = 1;
    for (const Array& in : user->inputs) {
      Node* a = in.node();
      if (pending.count(a) && uses[a] == 1 && candidate(a) && a->shape == user->shape &&
          total + steps[a] <= max_steps) {
        fused.insert(a);
        total += steps[a];
      }
    }
    steps[user] = total;
  }
}

void evaluate_producers(const std::vector<Array>& inputs, const std::unordered_set<Node*>& fused, DeviceType device) {
  for (const Array& in : inputs) {
    if (!fused.count(in.node()) || in.evaluated()) continue;
    evaluate_producers(in.inputs(), fused, device);
    std::vector<Array> outs{in};
    const Primitive& p = *in.primitive();
    find_kernel(p, device)(p, in.inputs(), outs);
    finish_node(in.node());
  }
}

}  // namespace nuvec
