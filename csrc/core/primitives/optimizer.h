// adam_update: one Adam (or AdamW) step of a float32 parameter as a single primitive with three
// outputs (the new parameter and moments), so a backend can run the whole rule in one pass.
// The optimizers use it where all operands fit; it computes exactly the op path's float32
// operations in their order, so both paths give the same bits. It has no derivative.
#pragma once
#include <optional>

#include "core/primitive.h"

namespace nuvec {

// The rule's Python-float constants, rounded to float32 as the op path rounds them.
struct AdamConstants {
  float b1, one_minus_b1, b2, one_minus_b2, eps;
  bool operator==(const AdamConstants&) const = default;
};

// Inputs: p, g, m, v, then 0-d float32 scalars: lr (with bias correction: lr / (1 - b1^t)), the
// bias correction's rsqrt(1 - b2^t) when `corrected`, and AdamW's (1 - lr * wd) when `decayed`.
//   p *= decay (AdamW); m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*(g*g);
//   p = p - lr*m / (sqrt(v) + eps), or p - lr*m / (sqrt(v)*c2 + eps) when corrected.
class AdamUpdate : public Primitive {
 public:
  AdamUpdate(AdamConstants c, bool corrected, bool decayed) : c_(c), corrected_(corrected), decayed_(decayed) {}
  const char* name() const override { return "adam_update"; }
  NUVEC_KERNEL_SLOT
  bool is_equivalent(const Primitive& o) const override {
    auto* p = dynamic_cast<const AdamUpdate*>(&o);
    return p && p->c_ == c_ && p->corrected_ == corrected_ && p->decayed_ == decayed_;
  }
  const AdamConstants& constants() const { return c_; }
  bool corrected() const { return corrected_; }
  bool decayed() const { return decayed_; }

 private:
  AdamConstants c_;
  bool corrected_, decayed_;
};

// The new (p, m, v). Raises OpError unless p, g, m, v are float32 of one shape and the scalars
// 0-d float32 arrays.
std::vector<Array> adam_update(const Array& p, const Array& g, const Array& m, const Array& v, const Array& lr,
                               const std::optional<Array>& correction, const std::optional<Array>& decay,
                               AdamConstants c, Stream s);

}  // namespace nuvec
