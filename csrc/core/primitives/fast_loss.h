// nuvec.fast.cross_entropy as one primitive: per row of the logits, logsumexp minus the target's
// logit, in float32, each row alone (docs/fast.md).
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Inputs: logits (..., V) in float32, float16 or bfloat16, targets (...) int32. Output: float32
// (...). A target outside [0, V) gives NaN.
class CrossEntropy : public Primitive {
 public:
  const char* name() const override { return "cross_entropy"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const CrossEntropy*>(&o) != nullptr; }
};

// The loss per row; raises OpError as MLX's for non-floating logits, non-integer targets and
// targets whose shape is not the logits' without the last axis.
Array cross_entropy(const Array& logits, const Array& targets, Stream s);

}  // namespace nuvec
