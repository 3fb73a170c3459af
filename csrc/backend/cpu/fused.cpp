// The CPU backend's fusion: element-wise chains run as one pass. Producers fused into a user
// (chosen by plan) are computed with it chunk by chunk; each step writes a small per-thread buffer
// that later steps read, or, when its result is also wanted (asked for, or held from Python), that
// result's own array. Stored results take over dead inputs' buffers, so a chain such as an Adam
// update reads and writes each array once, in place.
#include <algorithm>
#include <memory>
#include <unordered_set>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "core/eval.h"
#include "core/fusion.h"
#include "core/primitives/elementwise.h"
#include "core/threads.h"

namespace nuvec {
namespace cpu {
namespace {

constexpr int64_t kChunk = 1024;  // elements per step and chunk: a group's buffers stay in L1/L2
constexpr size_t kMaxSteps = 16;  // kernels fused into one pass, at most
constexpr int kMaxOperands = 3;
// Smaller arrays stay in cache between ops anyway: fusing them saves nothing.
constexpr int64_t kFuseMinElements = int64_t(1) << 16;

// The chains of large element-wise CPU nodes (core/fusion.h).
void plan(const std::vector<Node*>& order, const std::vector<Array>&, std::unordered_set<Node*>& fused) {
  plan_elementwise_chains(order, DeviceType::cpu, kFuseMinElements, int(kMaxSteps), fused);
}

struct Source {
  int step = -1;                 // an earlier step's result, or
  const Array* array = nullptr;  // an evaluated array (contiguous, or one element)
  const char* data = nullptr;
  bool scalar = false;
  size_t item = 0;
};

struct Step {
  EwKernel kernel;
  const OpParams* params;
  Source operands[kMaxOperands];
  int num_operands;
  size_t item;            // of the result
  Node* stored;           // the node whose array receives the result, or null: it stays in scratch
  char* out = nullptr;    // that array's data
  bool in_place = false;  // out is a donated input's buffer
  size_t slot = 0;        // else: its place in the scratch (bytes)
};

// Appends the steps computing `node` (its fused producers first); false when some operand does
// not fit the plain contiguous form, and the chain must run op by op instead.
bool build(const Array& node, bool store, const std::unordered_set<Node*>& fused, std::vector<Step>& steps) {
  auto* p = dynamic_cast<const Elementwise*>(node.primitive().get());
  if (!p || node.dtype() != p->out_compute() || steps.size() >= kMaxSteps) return false;
  EwKernel kernel = elementwise_kernel(*p);
  const std::vector<Array>& inputs = node.inputs();
  if (!kernel || inputs.size() > size_t(kMaxOperands)) return false;
  int64_t n = node.size();
  Step step{kernel, &p->params(), {}, int(inputs.size()), node.itemsize(), store ? node.node() : nullptr};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Array& in = inputs[k];
    Source& src = step.operands[k];
    if (fused.count(in.node())) {
      // The producer's result is read as this op's operand: it must already be in its dtype.
      // Held by more than this handle (asked for, or referenced from Python), it is also stored.
      if (in.dtype() != p->compute()[k] || !build(in, in.use_count() > 1, fused, steps)) return false;
      src.step = int(steps.size()) - 1;
    } else {
      bool one = in.size() == 1;
      if (!in.evaluated() || in.dtype() != p->compute()[k] || !(one || (in.size() == n && in.row_contiguous())))
        return false;
      if (one && n > 1 && inputs.size() == 1) return false;  // unary kernels read n elements
      src.array = &in;
      src.data = in.data_bytes();
      src.scalar = one && n > 1;
      src.item = in.itemsize();
    }
  }
  steps.push_back(step);
  return true;
}

// Gives each stored step its array: an input's buffer when donate() allows it (nothing else uses
// it) and the group reads that input at or before the step (its single handle is one operand), so
// chunk by chunk every element is read before it is overwritten; else fresh memory. A donated
// buffer is then shared, so donate() refuses it to later steps. Each other step gets a scratch
// slot, free again once its one reader has run: a chain cycles through a few slots that stay in
// the L1 cache.
void place_results(std::vector<Step>& steps) {
  std::vector<size_t> free_slots;
  size_t next_slot = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& st = steps[i];
    if (!st.stored) {
      if (free_slots.empty()) {
        st.slot = next_slot;
        next_slot += size_t(kChunk) * 8;
      } else {
        st.slot = free_slots.back();
        free_slots.pop_back();
      }
    } else {
      Array out(std::shared_ptr<Node>(std::shared_ptr<Node>{}, st.stored));  // non-owning alias
      bool donated = false;
      for (size_t j = 0; j <= i && !donated; ++j)
        for (int k = 0; k < steps[j].num_operands && !donated; ++k)
          if (const Array* in = steps[j].operands[k].array) donated = donate(*in, out);
      if (!donated) out.allocate_contiguous();
      st.out = out.data_bytes();
      st.in_place = donated;
    }
    // This step is its operands' one reader: their slots are free for the steps after it.
    for (int k = 0; k < st.num_operands; ++k)
      if (int from = st.operands[k].step; from >= 0 && !steps[size_t(from)].stored)
        free_slots.push_back(steps[size_t(from)].slot);
  }
}

// Evaluates an element-wise node with the producers in `fused` computed inline.
void eval_fused(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out,
                const std::unordered_set<Node*>& fused) {
  Array& root = out[0];
  std::vector<Step> steps;
  if (!build(root, true, fused, steps)) {
    evaluate_producers(in, fused, DeviceType::cpu);
    find_kernel(p, DeviceType::cpu)(p, in, out);
    return;
  }
  place_results(steps);
  std::vector<std::pair<const char*, size_t>> streams;  // the arrays read element by element
  for (const Step& st : steps)
    for (int k = 0; k < st.num_operands; ++k)
      if (const Source& src = st.operands[k]; src.array && !src.scalar) streams.emplace_back(src.data, src.item);
  int64_t n = root.size();
  int64_t pieces = (n + kChunk - 1) / kChunk;
  const bool stream_root = !steps.back().in_place && stream_output(size_t(n) * root.itemsize());
  // The scratch's last slot: the steps not stored (all but the root at most) take the others.
  const size_t root_slot = (kMaxSteps - 1) * kChunk * 8;
  parallel_for(pieces, 16, [&](int64_t b, int64_t e) {
    thread_local std::vector<char> buffer(kMaxSteps * kChunk * 8 + 64);
    char* scratch = buffer.data() + (64 - reinterpret_cast<uintptr_t>(buffer.data()) % 64) % 64;
    auto at = [&](const Step& st, int64_t start) {
      return st.stored ? st.out + start * int64_t(st.item) : scratch + st.slot;
    };
    for (int64_t piece = b; piece < e; ++piece) {
      int64_t start = piece * kChunk, len = std::min(kChunk, n - start);
      int64_t next = std::min(kChunk, n - start - kChunk);
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        // A share of the next chunk's input lines per step, so the loads spread over the compute.
        if (next > 0) {
          int64_t lo = next * int64_t(i) / int64_t(steps.size()), hi = next * int64_t(i + 1) / int64_t(steps.size());
          for (auto [data, item] : streams) prefetch_elements(data, item, start + kChunk + lo, hi - lo);
        }
        const void* ptrs[kMaxOperands];
        bool scalar[kMaxOperands];
        for (int k = 0; k < st.num_operands; ++k) {
          const Source& src = st.operands[k];
          scalar[k] = src.scalar;
          ptrs[k] = src.step >= 0 ? at(steps[size_t(src.step)], start)
                                  : src.data + (src.scalar ? 0 : start * int64_t(src.item));
        }
        if (i + 1 == steps.size() && stream_root) {
          st.kernel(ptrs, scalar, scratch + root_slot, len, *st.params);
          stream_copy(st.out + start * int64_t(st.item), scratch + root_slot, size_t(len) * st.item);
        } else {
          st.kernel(ptrs, scalar, at(st, start), len, *st.params);
        }
      }
    }
    if (stream_root) stream_fence();
  });
  // The stored producers are done (the root is finished by the caller).
  for (size_t i = 0; i + 1 < steps.size(); ++i)
    if (steps[i].stored) finish_node(steps[i].stored);
}

}  // namespace

EwKernel elementwise_kernel(const Elementwise& p) {
  const KernelTable& kt = kernels();
  if (auto* u = dynamic_cast<const Unary*>(&p)) return kt.unary[int(u->op())][int(p.compute()[0])];
  if (auto* b = dynamic_cast<const Binary*>(&p)) return kt.binary[int(b->op())][int(p.compute()[0])];
  return kt.select[int(p.compute()[1])];
}

Fusion fusion() { return {plan, eval_fused}; }

}  // namespace cpu
}  // namespace nuvec
