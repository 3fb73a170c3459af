// A function with its own differentiation rules (custom_function, checkpoint).
// Its inputs are the primals followed by the function's outputs, computed on untraced aliases of
// the primals (so the forward graph is neither walked nor kept by transforms); evaluation
// shares those outputs' buffers. The rules are callbacks given by the front end.
#pragma once
#include <functional>

#include "core/primitive.h"

namespace nuvec {

using CustomRule = std::function<std::vector<Array>(const std::vector<Array>& primals,
                                                    const std::vector<Array>& seeds,  // cotangents or tangents
                                                    const std::vector<Array>& outputs)>;

// The outputs for primals batched along axes (-1: not batched), with their batch axes.
using CustomVmapRule = std::function<std::pair<std::vector<Array>, std::vector<int>>(const std::vector<Array>& primals,
                                                                                     const std::vector<int>& axes)>;

class Custom : public Primitive {
 public:
  Custom(int num_primals, CustomRule vjp, CustomRule jvp, CustomVmapRule vmap)
      : num_primals_(num_primals), vjp_(std::move(vjp)), jvp_(std::move(jvp)), vmap_(std::move(vmap)) {}
  const char* name() const override { return "custom_function"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  int num_primals() const { return num_primals_; }

 private:
  int num_primals_;
  CustomRule vjp_, jvp_;
  CustomVmapRule vmap_;
};

// An alias of x (sharing its data) that does not carry x's transform tracing.
Array untraced_alias(const Array& x);

// Outputs of `custom`, given the primals and the outputs computed from their untraced aliases.
std::vector<Array> apply_custom(const std::vector<Array>& primals, const std::vector<Array>& outputs, CustomRule vjp,
                                CustomRule jvp, CustomVmapRule vmap);

}  // namespace nuvec
