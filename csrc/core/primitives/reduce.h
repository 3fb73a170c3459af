// Reductions.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Reduction of every element to one (all / any); issue "reductions" generalises the axes.
enum class ReduceOp { all, any };
class ReduceAll : public Primitive {
 public:
  explicit ReduceAll(ReduceOp op) : op_(op) {}
  const char* name() const override { return op_ == ReduceOp::all ? "all" : "any"; }
  void eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) override;
  ReduceOp op() const { return op_; }

 private:
  ReduceOp op_;
};

}  // namespace nuvec
