// The base of every primitive: one class per operation, carrying its rules. Backends define
// the eval_* members in their own files (backend/cpu/<family>.cpp), so the core never sees them.
#pragma once
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/array.h"

namespace nuvec {

class Primitive : public std::enable_shared_from_this<Primitive> {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  // Fill `outputs` (unevaluated, shapes and dtypes set) from evaluated `inputs`.
  virtual void eval_cpu(const std::vector<Array>& inputs, std::vector<Array>& outputs) = 0;
  // Element-wise fusion (eval.cpp): a fusible node used once, by a fusible node of the same
  // shape, is computed inside that user, chunk by chunk, and never stored.
  virtual bool fusible() const { return false; }
  // Evaluates with the producers in `fused` computed inline (fusible primitives override it).
  virtual void eval_cpu_fused(const std::vector<Array>& inputs, std::vector<Array>& outputs,
                              const std::unordered_set<Node*>& fused) {
    eval_cpu(inputs, outputs);
  }
  // For common-subexpression elimination: same operation with the same parameters.
  virtual bool is_equivalent(const Primitive& other) const { return false; }

  // Differentiation rules, written with ops so they differentiate again.
  // vjp: the cotangents of primals[argnums[i]] given the outputs' cotangents.
  virtual std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs);
  // jvp: the outputs' tangents given tangents[i] of primals[argnums[i]].
  virtual std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs);
  // Vectorisation rule, written with ops: the outputs for `inputs` batched along axes[i] (-1: not
  // batched), with the batch axis of each output. `outputs` are one example's outputs (their
  // shapes and dtypes).
  virtual std::pair<std::vector<Array>, std::vector<int>> vmap(const std::vector<Array>& inputs,
                                                               const std::vector<int>& axes,
                                                               const std::vector<Array>& outputs);
};

// Declares a primitive's vjp and jvp rules (defined in its family's *_grad.cpp).
#define NUVEC_GRAD_RULES                                                                                    \
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,          \
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override;      \
  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,             \
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override;

// Declares a primitive's vmap rule (defined in its family's *_vmap.cpp).
#define NUVEC_VMAP_RULE                                                                                     \
  std::pair<std::vector<Array>, std::vector<int>> vmap(const std::vector<Array>& inputs,                   \
                                                       const std::vector<int>& axes,                       \
                                                       const std::vector<Array>& outputs) override;

}  // namespace nuvec
