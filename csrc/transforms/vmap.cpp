// vmap: run the function once on placeholders shaped as one example, then replay the recorded
// graph forwards, giving each node's primitive its batched inputs through its vmap rule. The
// result is one graph of ordinary (batched) ops, so it is differentiated, vmapped again or
// evaluated like any other; transforms nested inside the function are replayed through the ops
// their rules recorded.
#include "transforms/vmap.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.h"
#include "core/ops.h"
#include "core/primitive.h"
#include "transforms/trace.h"

namespace nuvec {
namespace {

// Stands for one example of a batched input. It has no value: reading it inside the function
// (item, printing, eval, a data-dependent op) raises instead of quietly using one example.
class VmapPlaceholder : public Primitive {
 public:
  const char* name() const override { return "vmap"; }
  NUVEC_KERNEL_SLOT
};

void refuse_to_read(const VmapPlaceholder&, const std::vector<Array>&, std::vector<Array>&) {
  throw KernelError(EvalErrorKind::other,
                    "the value of a batched array cannot be read inside the vmapped function "
                    "(item, tolist, printing, eval or an op whose shape depends on values)");
}
const bool registered = add_device_free_kernel<VmapPlaceholder, refuse_to_read>();

using Batched = std::pair<Array, int>;  // an array and its batch axis (-1: not batched)

// The node's primitive applied again to unbatched inputs (their traced origins were mapped to
// arrays shared by every example).
std::vector<Array> reapply(Node* n, const std::vector<Array>& outs, std::vector<Array> inputs) {
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
  for (const Array& o : outs) shapes.push_back(o.shape()), dtypes.push_back(o.dtype());
  if (outs.size() == 1) return {Array::lazy(shapes[0], dtypes[0], n->primitive, std::move(inputs), n->stream)};
  return Array::lazy_multi(shapes, dtypes, n->primitive, std::move(inputs), n->stream);
}

// A rule's output must be one example's output with a batch axis of size n.
void check_rule(const Primitive& p, const Array& unbatched, const Array& out, int axis, int64_t n) {
  bool ok = axis >= -1 && axis < out.ndim();
  if (ok && axis >= 0) {
    Shape one = out.shape();
    ok = one[axis] == n;
    one.erase(one.begin() + axis);
    ok = ok && one == unbatched.shape();
  } else if (ok) {
    ok = out.shape() == unbatched.shape();
  }
  if (!ok || out.dtype() != unbatched.dtype())
    throw OpError(p.name(), "its vmap rule gave an output of the wrong shape or dtype");
}

}  // namespace

std::pair<std::vector<Array>, std::vector<int>> vmap(const ArrayFn& fun, const std::vector<Array>& inputs,
                                                     const std::vector<int>& axes) {
  if (inputs.size() != axes.size())
    throw OpError("vmap",
                  "got " + std::to_string(axes.size()) + " axes for " + std::to_string(inputs.size()) + " inputs");
  int64_t n = -1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (axes[i] < 0) continue;
    if (axes[i] >= inputs[i].ndim())
      throw OpError("vmap",
                    "axis " + std::to_string(axes[i]) + " is out of range for input " + std::to_string(i) +
                        " of rank " + std::to_string(inputs[i].ndim()),
                    true);
    int64_t size = inputs[i].shape(axes[i]);
    if (n >= 0 && size != n)
      throw OpError("vmap",
                    "inputs have different batch sizes (" + std::to_string(n) + " and " + std::to_string(size) + ")");
    n = size;
  }
  if (n < 0) throw OpError("vmap", "at least one input must be mapped over (in_axes are all None)");

  TraceLevel level("vmap");
  ValuelessLevel valueless(level, "the value of a batched array cannot be read inside the vmapped function");
  Stream s = default_stream(default_device());
  std::vector<Array> placeholders;
  std::unordered_map<Node*, Batched> batched;
  std::unordered_set<Node*> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (axes[i] < 0) {
      placeholders.push_back(inputs[i]);
      continue;
    }
    Shape one = inputs[i].shape();
    one.erase(one.begin() + axes[i]);
    Array p = Array::lazy(one, inputs[i].dtype(), std::make_shared<VmapPlaceholder>(), {}, s);
    p.node()->traced |= level.bit();
    note_traced(p.node_ptr());
    leaves.insert(p.node());
    batched.emplace(p.node(), Batched{inputs[i], axes[i]});
    placeholders.push_back(p);
  }
  std::vector<Array> outputs = fun(placeholders);
  std::vector<Node*> order = traced_order(outputs, leaves, level.bit());
  Handles handles;
  for (const Array& o : outputs) handles.add(o);
  for (Node* node : order) handles.add_inputs(node);
  std::unordered_set<Node*> done;
  for (Node* node : order) {
    if (done.count(node)) continue;
    std::vector<Array> outs = outputs_of(node, handles.map.at(node).node_ptr());
    for (const Array& o : outs) done.insert(o.node());
    std::vector<Array> ins;
    std::vector<int> in_axes;
    bool any = false;
    for (const Array& in : node->inputs) {
      auto it = batched.find(in.node());
      Batched b = it != batched.end() ? it->second : Batched{in, -1};
      ins.push_back(b.first), in_axes.push_back(b.second);
      any |= b.second >= 0;
    }
    std::vector<Array> new_outs;
    std::vector<int> out_axes(outs.size(), -1);
    if (any) {
      std::tie(new_outs, out_axes) = node->primitive->vmap(ins, in_axes, outs);
      if (new_outs.size() != outs.size() || out_axes.size() != outs.size())
        throw OpError(node->primitive->name(), "its vmap rule gave the wrong number of outputs");
    } else {
      new_outs = reapply(node, outs, ins);
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      check_rule(*node->primitive, outs[k], new_outs[k], out_axes[k], n);
      batched.emplace(outs[k].node(), Batched{new_outs[k], out_axes[k]});
    }
  }
  std::vector<Array> results;
  std::vector<int> result_axes;
  for (const Array& o : outputs) {
    auto it = batched.find(o.node());
    Batched b = it != batched.end() ? it->second : Batched{o, -1};
    results.push_back(b.first), result_axes.push_back(b.second);
  }
  return {results, result_axes};
}

}  // namespace nuvec
