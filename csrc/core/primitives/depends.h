// depends(inputs, dependencies): outputs equal to the inputs (sharing their buffers) whose nodes
// also take the dependencies, so evaluating an output evaluates the dependencies first. The
// dependencies get no gradient; the inputs' cotangents and tangents pass through.
#pragma once
#include "core/primitive.h"

namespace nuvec {

class Depends : public Primitive {
 public:
  explicit Depends(int num_inputs) : num_inputs_(num_inputs) {}
  const char* name() const override { return "depends"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive&) const override { return false; }  // never merged away
  int num_inputs() const { return num_inputs_; }

 private:
  int num_inputs_;
};

std::vector<Array> depends(const std::vector<Array>& inputs, const std::vector<Array>& dependencies);

}  // namespace nuvec
