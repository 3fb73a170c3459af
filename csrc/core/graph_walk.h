// The one walk over a graph, inputs before users, with an explicit stack: graphs of millions of
// nodes would overflow a recursive one.
#pragma once
#include <utility>
#include <vector>

#include "core/array.h"

namespace nuvec {

// Appends to `order` the nodes reachable from `roots` through inputs, each after its inputs.
// `enter(n)` says whether to walk into n; it must mark n so that it refuses n the next time.
template <class Enter> void post_order(const std::vector<Array>& roots, Enter&& enter, std::vector<Node*>& order) {
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Array& root : roots) {
    if (enter(root.node())) stack.emplace_back(root.node(), 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* child = n->inputs[next++].node();
        if (enter(child)) stack.emplace_back(child, 0);  // (invalidates n and next: not used after)
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
}

}  // namespace nuvec
