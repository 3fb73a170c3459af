// The CPU backend's fusion: element-wise chains run as one pass. Producers fused into their only
// user (chosen by plan_fusion) are computed chunk by chunk into small per-thread buffers that the
// next kernel reads, so the intermediates never travel through memory.
#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/kernels.h"
#include "core/primitives/elementwise.h"
#include "core/threads.h"

namespace nuvec {
namespace cpu {
namespace {

constexpr int64_t kChunk = 2048;
constexpr size_t kMaxSteps = 8;  // kernels fused into one pass, at most
constexpr int kMaxOperands = 3;
// Smaller arrays stay in cache between ops anyway: fusing them saves nothing.
constexpr int64_t kFuseMinElements = int64_t(1) << 16;

// Element-wise primitives with a kernel to chain (copies convert while gathering: they have none).
bool fusible(const Primitive& p) {
  if (auto* u = dynamic_cast<const Unary*>(&p)) return u->op() != UnaryOp::copy && u->op() != UnaryOp::stop_gradient;
  return dynamic_cast<const Elementwise*>(&p) != nullptr;
}

// Element-wise CPU nodes used once, by another element-wise CPU node of the same shape, in this
// evaluation and by nothing else: they run inside that user and are never stored.
void plan(const std::vector<Node*>& order, const std::vector<Array>& outputs, std::unordered_set<Node*>& fused) {
  auto large = [](Node* n) { return n->size >= kFuseMinElements && n->stream.device.type == DeviceType::cpu; };
  if (std::none_of(order.begin(), order.end(), large)) return;  // nothing worth a pass
  std::unordered_set<Node*> pending, requested;
  for (Node* n : order)
    if (large(n)) pending.insert(n);
  std::unordered_map<Node*, int> uses;
  for (Node* n : order)
    for (const Array& in : n->inputs)
      if (pending.count(in.node())) ++uses[in.node()];
  for (const Array& a : outputs) requested.insert(a.node());
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
      if (pending.count(a) && !requested.count(a) && uses[a] == 1 && in.use_count() == 1 && candidate(a) &&
          a->shape == user->shape && total + steps[a] <= int(kMaxSteps)) {
        fused.insert(a);
        total += steps[a];
      }
    }
    steps[user] = total;
  }
}

struct Source {
  int step = -1;               // an earlier step's result, or
  const char* data = nullptr;  // an evaluated array (contiguous, or one element)
  bool scalar = false;
  size_t item = 0;
};

struct Step {
  EwKernel kernel;
  const OpParams* params;
  std::vector<Source> operands;
  size_t out_item;
};

EwKernel kernel_of(const Elementwise& p) {
  const KernelTable& kt = kernels();
  if (auto* u = dynamic_cast<const Unary*>(&p)) return kt.unary[int(u->op())][int(p.compute()[0])];
  if (auto* b = dynamic_cast<const Binary*>(&p)) return kt.binary[int(b->op())][int(p.compute()[0])];
  return kt.select[int(p.compute()[1])];
}

// Appends the steps computing `node` (its fused producers first); false when some operand does
// not fit the plain contiguous form, and the chain must run op by op instead.
bool build(const Array& node, const std::unordered_set<Node*>& fused, std::vector<Step>& steps) {
  auto* p = dynamic_cast<const Elementwise*>(node.primitive().get());
  if (!p || node.dtype() != p->out_compute() || steps.size() >= kMaxSteps) return false;
  EwKernel kernel = kernel_of(*p);
  if (!kernel) return false;
  int64_t n = node.size();
  const std::vector<Array>& inputs = node.inputs();
  Step step{kernel, &p->params(), {}, node.itemsize()};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Array& in = inputs[k];
    Source src;
    if (fused.count(in.node())) {
      // The producer's result is read as this op's operand: it must already be in its dtype.
      if (in.dtype() != p->compute()[k] || !build(in, fused, steps)) return false;
      src.step = int(steps.size()) - 1;
    } else {
      bool one = in.size() == 1;
      if (!in.evaluated() || in.dtype() != p->compute()[k] || !(one || (in.size() == n && in.row_contiguous())))
        return false;
      if (one && n > 1 && inputs.size() == 1) return false;  // unary kernels read n elements
      src.data = in.data_bytes();
      src.scalar = one && n > 1;
      src.item = in.itemsize();
    }
    step.operands.push_back(src);
  }
  steps.push_back(std::move(step));
  return true;
}

// The fallback: the fused producers evaluated op by op, inputs first.
void evaluate_producers(const std::vector<Array>& inputs, const std::unordered_set<Node*>& fused) {
  for (const Array& in : inputs) {
    if (!fused.count(in.node()) || in.evaluated()) continue;
    evaluate_producers(in.inputs(), fused);
    std::vector<Array> outs{in};
    const Primitive& p = *in.primitive();
    find_kernel(p, DeviceType::cpu)(p, in.inputs(), outs);
    in.node()->evaluated.store(true, std::memory_order_release);
  }
}

// Evaluates an element-wise node with the producers in `fused` computed inline.
void eval_fused(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                const std::unordered_set<Node*>& fused) {
  Array& root = out[0];
  std::vector<Step> steps;
  // The root's own step is built from the same node: a handle sharing it, with its inputs.
  Array self(std::shared_ptr<Node>(std::shared_ptr<Node>{}, root.node()));
  if (!build(self, fused, steps)) {
    evaluate_producers(in, fused);
    find_kernel(p, DeviceType::cpu)(p, in, out);
    return;
  }
  root.allocate_contiguous();
  int64_t n = root.size();
  if (n == 0) return;
  char* dst = root.data_bytes();
  int64_t pieces = (n + kChunk - 1) / kChunk;
  parallel_for(pieces, 16, [&](int64_t b, int64_t e) {
    thread_local std::vector<char> scratch(kMaxSteps * kChunk * 8);
    for (int64_t piece = b; piece < e; ++piece) {
      int64_t start = piece * kChunk, len = std::min(kChunk, n - start);
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        const void* ptrs[kMaxOperands];
        bool scalar[kMaxOperands];
        for (size_t k = 0; k < st.operands.size(); ++k) {
          const Source& src = st.operands[k];
          scalar[k] = src.scalar;
          ptrs[k] = src.step >= 0 ? scratch.data() + size_t(src.step) * kChunk * 8
                                  : src.data + (src.scalar ? 0 : start * int64_t(src.item));
        }
        void* to = i + 1 == steps.size() ? dst + start * int64_t(st.out_item) : scratch.data() + i * kChunk * 8;
        st.kernel(ptrs, scalar, to, len, *st.params);
      }
    }
  });
}

}  // namespace

Fusion fusion() { return {plan, eval_fused}; }

}  // namespace cpu
}  // namespace nuvec
