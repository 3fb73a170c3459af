// Gather and scatter: the primitives under integer-array indexing, take, put and `.at`.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// inputs: src, then one integer index array per entry of `axes` (broadcast together to I).
// output: I + the shape of src's other axes, in order. Negative indices count from the end;
// an index out of range raises from evaluation.
class Gather : public Primitive {
 public:
  explicit Gather(std::vector<int> axes) : axes_(std::move(axes)) {}
  const char* name() const override { return "gather"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

enum class ScatterOp { set, add, multiply, maximum, minimum };

// inputs: src, updates (shaped I + src's other axes), then the index arrays as for Gather.
// output: src with the indexed elements combined with the updates, in index order (so repeated
// indices accumulate for add/multiply/maximum/minimum and the last one wins for set).
class Scatter : public Primitive {
 public:
  Scatter(ScatterOp op, std::vector<int> axes) : op_(op), axes_(std::move(axes)) {}
  const char* name() const override;
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  ScatterOp op() const { return op_; }
  const std::vector<int>& axes() const { return axes_; }

 private:
  ScatterOp op_;
  std::vector<int> axes_;
};

inline const char* Scatter::name() const {
  switch (op_) {
    case ScatterOp::set: return "scatter";
    case ScatterOp::add: return "scatter_add";
    case ScatterOp::multiply: return "scatter_prod";
    case ScatterOp::maximum: return "scatter_max";
    case ScatterOp::minimum: return "scatter_min";
  }
  return "scatter";
}

// Joins arrays along an axis into a new contiguous array.
class Concatenate : public Primitive {
 public:
  explicit Concatenate(int axis) : axis_(axis) {}
  const char* name() const override { return "concatenate"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  int axis() const { return axis_; }

 private:
  int axis_;
};

}  // namespace nuvec
