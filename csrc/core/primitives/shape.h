// Layout primitives: their outputs share the input's buffer with new strides and offset
// (a copy only where strides cannot express the result, e.g. reshaping a transposed array).
#pragma once
#include "core/primitive.h"

namespace nuvec {

class Slice : public Primitive {
 public:
  Slice(Shape start, Shape step) : start_(std::move(start)), step_(std::move(step)) {}
  const char* name() const override { return "slice"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Slice*>(&o);
    return p && p->start_ == start_ && p->step_ == step_;
  }
  const Shape& start() const { return start_; }
  const Shape& step() const { return step_; }

 private:
  Shape start_, step_;
};

// x with the window x[start : start + n * step : step] (n the update's shape) replaced by the
// update (inputs: x, update of the window's shape and x's dtype). Writes into x's buffer when
// nothing else holds it (a KV cache's decode step writes one position, not the whole buffer).
class SliceUpdate : public Primitive {
 public:
  SliceUpdate(Shape start, Shape step) : start_(std::move(start)), step_(std::move(step)) {}
  const char* name() const override { return "slice_update"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const SliceUpdate*>(&o);
    return p && p->start_ == start_ && p->step_ == step_;
  }
  const Shape& start() const { return start_; }
  const Shape& step() const { return step_; }

 private:
  Shape start_, step_;
};

// slice_update with an array-valued start: x with the window of the update's shape at `start`
// (inputs: x, the update, of x's rank and dtype, and an integer array with one entry per axis of
// `axes`; the other axes' windows start at 0) replaced by the update. A negative start counts
// from the axis' end; a window that does not fit raises an index error. Writes into x's buffer
// when nothing else holds it, as SliceUpdate (a decode step's cache position comes as an array,
// so one trace serves every step).
class DynamicSliceUpdate : public Primitive {
 public:
  explicit DynamicSliceUpdate(std::vector<int> axes) : axes_(std::move(axes)) {}
  const char* name() const override { return "dynamic_slice_update"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const DynamicSliceUpdate*>(&o);
    return p && p->axes_ == axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

class Transpose : public Primitive {
 public:
  explicit Transpose(std::vector<int> perm) : perm_(std::move(perm)) {}
  const char* name() const override { return "transpose"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const Transpose*>(&o);
    return p && p->perm_ == perm_;
  }
  const std::vector<int>& perm() const { return perm_; }

 private:
  std::vector<int> perm_;
};

class Broadcast : public Primitive {
 public:
  const char* name() const override { return "broadcast_to"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  // No parameter but the output shape, which compile's merging compares.
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const Broadcast*>(&o); }
};

// x broadcast to its shape broadcast with like's (like's values are not read). compile records
// it for broadcasts to an input's shape, so a shapeless replay works the shape out again.
class BroadcastLike : public Primitive {
 public:
  const char* name() const override { return "broadcast_like"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const BroadcastLike*>(&o); }
};

// Strides that read `x` in row-major order with `shape`, when its strides allow (NumPy's
// no-copy reshape): each run of new axes must map onto a run of old axes that is contiguous.
bool reshape_strides(const Array& x, const Shape& shape, Strides& out);
// The window of SliceUpdate's output `out` (its data set) that the update is written into.
Array slice_update_window(const SliceUpdate& p, const Array& out, const Array& update);
// Where DynamicSliceUpdate's window of shape `window` starts in `out` (an element offset, out's own
// included), for its evaluated start values `start`: KernelError when the window does not fit (a
// negative start counts from the end).
int64_t slice_update_offset(const DynamicSliceUpdate& p, const Array& out, const Shape& window, const Array& start);

class Reshape : public Primitive {
 public:
  const char* name() const override { return "reshape"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override { return dynamic_cast<const Reshape*>(&o); }  // as Broadcast
};

// Reinterprets the bytes of a row-contiguous array as another dtype.
class ViewDtype : public Primitive {
 public:
  const char* name() const override { return "view"; }
  NUVEC_KERNEL_SLOT
  NUVEC_VMAP_RULE
};

// Row-contiguous data read with explicit strides and offset (elements), checked in bounds.
class AsStrided : public Primitive {
 public:
  AsStrided(Strides strides, int64_t offset) : strides_(std::move(strides)), offset_(offset) {}
  const char* name() const override { return "as_strided"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }

 private:
  Strides strides_;
  int64_t offset_;
};

// The diagonal of two axes, moved last: a view.
class Diagonal : public Primitive {
 public:
  Diagonal(int64_t offset, int axis1, int axis2) : offset_(offset), axis1_(axis1), axis2_(axis2) {}
  const char* name() const override { return "diagonal"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  int64_t offset() const { return offset_; }
  int axis1() const { return axis1_; }
  int axis2() const { return axis2_; }

 private:
  int64_t offset_;
  int axis1_, axis2_;
};

// The input itself when row-contiguous, else a row-major copy.
class Contiguous : public Primitive {
 public:
  const char* name() const override { return "contiguous"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
};

}  // namespace nuvec
