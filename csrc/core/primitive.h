// The base of every primitive: one class per operation, carrying its rules. Its kernels are not
// here: each backend registers one per primitive class (core/backend.h), so the core never sees them.
#pragma once
#include <memory>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "core/array.h"

namespace nuvec {

class Primitive : public std::enable_shared_from_this<Primitive> {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  // The index of this primitive's class in every backend's kernel table (NUVEC_KERNEL_SLOT).
  virtual int kernel_slot() const = 0;
  // For common-subexpression elimination: same operation with the same parameters.
  virtual bool is_equivalent(const Primitive& other) const { return false; }

  // Whether its kernel runs other primitives' kernels and times them for the profile itself (a
  // compiled call): the evaluator then leaves its node untimed.
  virtual bool profiles_inside() const { return false; }

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

// The kernel slot of a primitive class, numbered at its first use in the process. Keyed by the
// class's type_info (equal across shared objects), so the Python extension, libnuvec and C callers,
// each with its own copy of kernel_slot_of's static, all get one slot per class.
int kernel_slot_for(const std::type_info& type);

// Each primitive class's slot: kernel lookups index by it, never by name.
template <class P> int kernel_slot_of() {
  static const int slot = kernel_slot_for(typeid(P));
  return slot;
}

// Declares that a concrete primitive class has kernels of its own (one slot per class).
#define NUVEC_KERNEL_SLOT \
  int kernel_slot() const override { return kernel_slot_of<std::remove_cvref_t<decltype(*this)>>(); }

// Declares a primitive's vjp and jvp rules (defined in its family's *_grad.cpp).
#define NUVEC_GRAD_RULES                                                                               \
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,      \
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override; \
  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,        \
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override;

// Declares a primitive's vmap rule (defined in its family's *_vmap.cpp).
#define NUVEC_VMAP_RULE                                                                                                \
  std::pair<std::vector<Array>, std::vector<int>> vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, \
                                                       const std::vector<Array>& outputs) override;

}  // namespace nuvec
