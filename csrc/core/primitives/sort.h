// Sorting primitives: each moves whole rows along one axis, so neither composes from others.
// topk is composed (partition, then a slice).
#pragma once
#include "core/primitive.h"

namespace nuvec {

// A stable sort along `axis` with NaNs last (NumPy's order; complex lexicographic). Gives the
// sorted values, or with `indices` the uint32 positions that sort them (argsort).
class Sort : public Primitive {
 public:
  Sort(int axis, bool indices) : axis_(axis), indices_(indices) {}
  const char* name() const override { return indices_ ? "argsort" : "sort"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Sort*>(&o);
    return p && p->axis_ == axis_ && p->indices_ == indices_;
  }
  int axis() const { return axis_; }
  bool indices() const { return indices_; }

 private:
  int axis_;
  bool indices_;
};

// Puts the element that sorts to position `kth` there, with no larger element before it and no
// smaller one after (in sort's order). Gives the values, or with `indices` their uint32 positions.
class Partition : public Primitive {
 public:
  Partition(int axis, int64_t kth, bool indices) : axis_(axis), kth_(kth), indices_(indices) {}
  const char* name() const override { return indices_ ? "argpartition" : "partition"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Partition*>(&o);
    return p && p->axis_ == axis_ && p->kth_ == kth_ && p->indices_ == indices_;
  }
  int axis() const { return axis_; }
  int64_t kth() const { return kth_; }
  bool indices() const { return indices_; }

 private:
  int axis_;
  int64_t kth_;
  bool indices_;
};

}  // namespace nuvec
