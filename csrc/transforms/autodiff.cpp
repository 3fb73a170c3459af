// vjp and jvp: run the function on tracer copies of the primals, then walk the recorded graph
// backwards (vjp) or forwards (jvp) through the primitives' rules.
#include "transforms/autodiff.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/ops.h"
#include "core/primitive.h"
#include "transforms/trace.h"

namespace nuvec {
namespace {

// One application of a primitive: the node itself, or for several outputs the sibling list they
// share (a rule may apply one primitive object again to new inputs: that is another application).
const void* application(Node* n) { return n->siblings.empty() ? static_cast<const void*>(n) : n->sibling_specs.get(); }

void check_cotangent(const Array& out, const Array& cot, size_t i) {
  if (out.shape() != cot.shape())
    throw OpError("vjp", "the cotangent of output " + std::to_string(i) + " has the wrong shape");
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> vjp(const ArrayFn& fun, const std::vector<Array>& primals,
                                                      const std::vector<Array>& given) {
  TraceLevel level("vjp");
  std::vector<Array> tracers = make_tracers(primals, level);
  std::vector<Array> outputs = fun(tracers);
  std::vector<Array> cotangents = given;
  if (cotangents.empty())  // grad: ones for each (scalar) output
    for (const Array& o : outputs)
      cotangents.push_back(filled_like(o, scalar_array(int64_t(1), o.dtype()), o.stream()));
  if (outputs.size() > cotangents.size())  // extra cotangents are ignored, as MLX
    throw OpError("vjp", "got " + std::to_string(cotangents.size()) + " cotangents for " +
                             std::to_string(outputs.size()) + " outputs");
  std::unordered_set<Node*> leaves;
  for (const Array& t : tracers) leaves.insert(t.node());
  std::vector<Node*> order = traced_order(outputs, leaves, level.bit());

  Stream s = default_stream(default_device());
  Handles handles;
  std::unordered_map<Node*, Array> cot;
  auto accumulate = [&](const Array& target, const Array& g) {
    auto it = cot.find(target.node());
    if (it == cot.end())
      cot.emplace(target.node(), g);
    else
      it->second = binary(BinaryOp::add, it->second, g, s);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    check_cotangent(outputs[i], cotangents[i], i);
    if (outputs[i].traced() & level.bit()) accumulate(outputs[i], astype(cotangents[i], outputs[i].dtype(), s));
    handles.add(outputs[i]);
  }
  for (Node* n : order) handles.add_inputs(n);
  // A multi-output primitive runs once, at its output that comes first in the order: by then
  // every user of every output has passed its cotangent on.
  std::unordered_map<const void*, size_t> first_at;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i]->primitive) first_at.emplace(application(order[i]), i);
  std::unordered_set<const void*> done;
  for (size_t i = order.size(); i-- > 0;) {
    Node* n = order[i];
    if (!n->primitive || first_at.at(application(n)) != i || !done.insert(application(n)).second) continue;
    std::vector<Array> outs = outputs_of(n, handles.map.at(n).node_ptr());
    std::vector<Array> cots;
    bool any = false;
    for (const Array& o : outs) {
      auto c = cot.find(o.node());
      any |= c != cot.end();
      cots.push_back(c != cot.end() ? c->second : filled_like(o, scalar_array(int64_t(0), o.dtype()), s));
    }
    if (!any) continue;
    std::vector<int> argnums;
    for (int k = 0; k < int(n->inputs.size()); ++k)
      if (n->inputs[k].traced() & level.bit()) argnums.push_back(k);
    if (argnums.empty()) continue;
    std::vector<Array> inputs = n->inputs;
    std::vector<Array> grads = n->primitive->vjp(inputs, cots, argnums, outs);
    for (size_t k = 0; k < argnums.size(); ++k) accumulate(inputs[argnums[k]], grads[k]);
  }
  std::vector<Array> result;
  for (size_t i = 0; i < tracers.size(); ++i) {
    auto c = cot.find(tracers[i].node());
    result.push_back(c != cot.end() ? c->second
                                    : filled_like(primals[i], scalar_array(int64_t(0), primals[i].dtype()), s));
  }
  return {outputs, result};
}

std::pair<std::vector<Array>, std::vector<Array>> jvp(const ArrayFn& fun, const std::vector<Array>& primals,
                                                      const std::vector<Array>& tangents) {
  if (primals.size() != tangents.size())
    throw OpError("jvp", "got " + std::to_string(tangents.size()) + " tangents for " + std::to_string(primals.size()) +
                             " primals");
  for (size_t i = 0; i < primals.size(); ++i)
    if (primals[i].shape() != tangents[i].shape())
      throw OpError("jvp", "the tangent of primal " + std::to_string(i) + " has the wrong shape");
  TraceLevel level("jvp");
  std::vector<Array> tracers = make_tracers(primals, level);
  std::vector<Array> outputs = fun(tracers);
  std::unordered_set<Node*> leaves;
  for (const Array& t : tracers) leaves.insert(t.node());
  std::vector<Node*> order = traced_order(outputs, leaves, level.bit());

  Stream s = default_stream(default_device());
  std::unordered_map<Node*, Array> tan;
  for (size_t i = 0; i < tracers.size(); ++i)
    tan.emplace(tracers[i].node(), astype(tangents[i], primals[i].dtype(), s));
  Handles handles;
  for (const Array& o : outputs) handles.add(o);
  for (Node* n : order) handles.add_inputs(n);
  std::unordered_set<const void*> done;
  for (Node* n : order) {
    if (!n->primitive || !done.insert(application(n)).second) continue;
    std::vector<int> argnums;
    std::vector<Array> ts;
    for (int k = 0; k < int(n->inputs.size()); ++k) {
      auto t = tan.find(n->inputs[k].node());
      if (t != tan.end()) argnums.push_back(k), ts.push_back(t->second);
    }
    if (argnums.empty()) continue;
    std::vector<Array> inputs = n->inputs;
    std::vector<Array> outs = outputs_of(n, handles.map.at(n).node_ptr());
    std::vector<Array> out_t = n->primitive->jvp(inputs, ts, argnums, outs);
    for (size_t k = 0; k < outs.size(); ++k) tan.emplace(outs[k].node(), out_t[k]);
  }
  std::vector<Array> result;
  for (const Array& o : outputs) {
    auto t = tan.find(o.node());
    result.push_back(t != tan.end() ? t->second : filled_like(o, scalar_array(int64_t(0), o.dtype()), s));
  }
  return {outputs, result};
}

}  // namespace nuvec
