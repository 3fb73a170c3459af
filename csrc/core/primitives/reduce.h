// The reduction family: reductions over a set of axes, arg-reductions over one axis, and the
// fused softmax / logsumexp over the last axis. Backends compute each in an order fixed by the
// shapes alone, so results never depend on the thread count.
#pragma once
#include <vector>

#include "core/primitive.h"

namespace nuvec {

enum class ReduceOp : int { sum, prod, max, min, all, any };
constexpr int kReduceOps = 6;

inline const char* op_name(ReduceOp op) {
  constexpr const char* names[] = {"sum", "prod", "max", "min", "all", "any"};
  return names[int(op)];
}

// MLX's result dtype of sum and prod: bool and small integers widen to 32 bits.
constexpr Dtype sum_dtype(Dtype in) {
  switch (in) {
    case Dtype::bool_:
    case Dtype::int8:
    case Dtype::int16: return Dtype::int32;
    case Dtype::uint8:
    case Dtype::uint16: return Dtype::uint32;
    default: return in;
  }
}

// Reduces `axes` (sorted, distinct, at least one); the output holds the kept axes in order
// (with or without size-1 placeholders: the layout is the same).
class Reduce : public Primitive {
 public:
  Reduce(ReduceOp op, std::vector<int> axes) : op_(op), axes_(std::move(axes)) {}
  const char* name() const override { return op_name(op_); }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* r = dynamic_cast<const Reduce*>(&o);
    return r && r->op_ == op_ && r->axes_ == axes_;
  }
  ReduceOp op() const { return op_; }
  const std::vector<int>& axes() const { return axes_; }

 private:
  ReduceOp op_;
  std::vector<int> axes_;
};

// argmax / argmin over one axis: the first index of the extreme (NaN counts as the extreme,
// as in NumPy), as uint32.
class ArgReduce : public Primitive {
 public:
  ArgReduce(bool is_max, int axis) : is_max_(is_max), axis_(axis) {}
  const char* name() const override { return is_max_ ? "argmax" : "argmin"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* r = dynamic_cast<const ArgReduce*>(&o);
    return r && r->is_max_ == is_max_ && r->axis_ == axis_;
  }
  bool is_max() const { return is_max_; }
  int axis() const { return axis_; }

 private:
  bool is_max_;
  int axis_;
};

// A primitive of its own because fused it reads each row once from memory (composed, it
// takes five passes); floating inputs only, half types computed in float32.
class Softmax : public Primitive {
 public:
  const char* name() const override { return "softmax"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const Softmax*>(&o); }
};

// Fused for the same reason: log(sum(exp(x - max))) + max per row of the last axis.
// The number of elements over `axes` of its input, less `ddof`, as a scalar of `dtype` (mean's and
// var's divisor). Its input's values are not read: compile records it in place of a constant so
// that a shapeless replay counts the new shape (MLX's NumberOfElements).
class Count : public Primitive {
 public:
  Count(std::vector<int> axes, int64_t ddof, Dtype dtype) : axes_(std::move(axes)), ddof_(ddof), dtype_(dtype) {}
  const char* name() const override { return "count"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* c = dynamic_cast<const Count*>(&o);
    return c && c->axes_ == axes_ && c->ddof_ == ddof_ && c->dtype_ == dtype_;
  }
  // The count for an input of this shape.
  double value(const Shape& shape) const;
  const std::vector<int>& axes() const { return axes_; }
  int64_t ddof() const { return ddof_; }
  Dtype dtype() const { return dtype_; }

 private:
  std::vector<int> axes_;
  int64_t ddof_;
  Dtype dtype_;
};

class LogSumExp : public Primitive {
 public:
  const char* name() const override { return "logsumexp"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const LogSumExp*>(&o); }
};

}  // namespace nuvec
