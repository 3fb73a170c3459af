// The CUDA backend's fusion (core/backend.h's Fusion): float32 element-wise chains run as one
// kernel (fused.cu), each element through every step in registers. Producers fused into a user
// (core/fusion.h's plan) are computed with it; those also wanted (asked for, or held from Python)
// are stored as they are computed. A chain that does not fit (other dtypes, strided operands, more
// inputs than the kernel takes) runs op by op; so do compile's fused groups.
#include "backend/cuda/fused.cuh"
#include "backend/cuda/runtime.h"
#include "core/eval.h"
#include "core/fusion.h"
#include "core/primitives/compiled.h"
#include "core/primitives/elementwise.h"

namespace nuvec::cuda {
namespace {

constexpr int64_t kFuseMinElements = int64_t(1) << 16;  // smaller chains cost launches, not memory

void plan(const std::vector<Node*>& order, const std::vector<Array>&, std::unordered_set<Node*>& fused) {
  plan_elementwise_chains(order, DeviceType::gpu, kFuseMinElements, kFusedMaxSteps, fused);
}

struct Chain {
  FusedArgs args{};
  Dtype dtype;
  std::vector<Node*> stored;       // the stored producers, finished after the launch
  std::vector<const Array*> read;  // the evaluated inputs of the steps so far
  int inputs = 0;
};

// Appends the steps computing `node` (its fused producers first); false when the chain does not
// fit the kernel.
bool build(const Array& node, bool store, const std::unordered_set<Node*>& fused, Chain& c) {
  auto* p = dynamic_cast<const Elementwise*>(node.primitive().get());
  auto* u = dynamic_cast<const Unary*>(p);
  auto* b = dynamic_cast<const Binary*>(p);
  if ((!u && !b) || node.dtype() != c.dtype || p->out_compute() != c.dtype || c.args.steps >= kFusedMaxSteps)
    return false;
  if (u ? !unary_has_kernel(int(u->op()), c.dtype) : !binary_has_kernel(int(b->op()), c.dtype)) return false;
  const std::vector<Array>& inputs = node.inputs();
  FusedStep step{int(inputs.size()), u ? int(u->op()) : int(b->op()), {0, 0}, nullptr, kernel_params(p->params())};
  std::vector<const Array*> mine;  // this step's evaluated inputs
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Array& in = inputs[k];
    if (in.dtype() != c.dtype) return false;
    if (fused.count(in.node())) {
      if (!build(in, in.use_count() > 1, fused, c)) return false;
      step.src[k] = c.args.steps - 1;
      continue;
    }
    const bool one = in.size() == 1;
    if (!in.evaluated() || !(one || (in.size() == node.size() && in.row_contiguous())) || c.inputs == kFusedMaxInputs)
      return false;
    c.args.scalar[c.inputs] = one;
    if (one && in.buffer()->on_host())  // float32 (fused_dtype)
      c.args.value[c.inputs] = *reinterpret_cast<const float*>(in.data_bytes());
    else
      c.args.in[c.inputs] = device_address(in);
    step.src[k] = -(++c.inputs);
    mine.push_back(&in);
  }
  // This step's inputs join those of the steps before it only now: an input an outer step reads
  // (collected before its producers were built) is read after this step.
  c.read.insert(c.read.end(), mine.begin(), mine.end());
  if (store) {
    // A dead input's buffer when donate() allows it: every step that reads it is at or before this
    // one (its single handle is one operand), and a thread reads an element before it writes it.
    // A donated buffer is then shared, so donate() refuses it to later steps.
    Array out(std::shared_ptr<Node>(std::shared_ptr<Node>{}, node.node()));  // non-owning alias
    bool donated = false;
    for (const Array* in : c.read)
      if (!donated) donated = donate(*in, out);
    if (!donated) allocate(out);
    step.out = out.buffer()->device_data();
    c.stored.push_back(node.node());
  }
  c.args.step[c.args.steps++] = step;
  return true;
}

void eval_fused(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                const std::unordered_set<Node*>& fused) {
  Array& root = out[0];
  Chain c;
  c.dtype = root.dtype();
  if (!fused_dtype(c.dtype) || !build(root, true, fused, c)) {
    evaluate_producers(in, fused, DeviceType::gpu);
    find_kernel(p, DeviceType::gpu)(p, in, out);
    return;
  }
  c.args.n = root.size();
  if (c.args.n > 0) launch_fused(c.dtype, c.args);
  check_launch("in a fused element-wise chain");
  // The stored producers are done (the root is finished by the caller).
  for (Node* n : c.stored)
    if (n != root.node()) finish_node(n);
}

// compile's fused groups: the program's ops one at a time on the GPU, so a compiled function has
// the bits of the uncompiled one there.
void eval_compiled(const Compiled& c, const std::vector<Array>& in, std::vector<Array>& out) {
  run_unfused(c, in, out, DeviceType::gpu);
}

}  // namespace

Fusion fusion() { return {plan, eval_fused}; }

void register_compiled_kernels(Backend& b) { b.add<Compiled, eval_compiled>(); }

}  // namespace nuvec::cuda
