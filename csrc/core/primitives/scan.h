// Scans: cumulative sum, product, maximum, minimum and logaddexp along one axis. A primitive
// because a scan's output element depends on a whole prefix of the row.
#pragma once
#include "core/primitive.h"

namespace nuvec {

enum class ScanOp { sum, prod, max, min, logaddexp };

inline const char* scan_name(ScanOp op) {
  switch (op) {
    case ScanOp::sum: return "cumsum";
    case ScanOp::prod: return "cumprod";
    case ScanOp::max: return "cummax";
    case ScanOp::min: return "cummin";
    case ScanOp::logaddexp: return "logcumsumexp";
  }
  return "";  // unreachable: the switch names every op (-Werror=switch)
}

// The input already has the output's dtype (the op converts it). Elements combine strictly in
// order along the axis (first to last, or last to first with `reverse`), so every output equals
// the plain sequential scan whatever the threads or instruction set.
class Scan : public Primitive {
 public:
  Scan(ScanOp op, int axis, bool reverse, bool inclusive)
      : op_(op), axis_(axis), reverse_(reverse), inclusive_(inclusive) {}
  const char* name() const override { return scan_name(op_); }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Scan*>(&o);
    return p && p->op_ == op_ && p->axis_ == axis_ && p->reverse_ == reverse_ && p->inclusive_ == inclusive_;
  }
  ScanOp op() const { return op_; }
  int axis() const { return axis_; }
  bool reverse() const { return reverse_; }
  bool inclusive() const { return inclusive_; }

 private:
  ScanOp op_;
  int axis_;
  bool reverse_, inclusive_;
};

}  // namespace nuvec
