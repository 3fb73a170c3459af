// The convolution family: one primitive for every convolution, transposed ones included
// (docs/design.md, "Convolutions").
#pragma once
#include "core/primitive.h"

namespace nuvec {

// Per spatial axis: the input dilated by input_dilation (input_dilation - 1 zeros between values),
// padded by pad_lo / pad_hi zeros (negative padding crops), then correlated with the kernel
// dilated by kernel_dilation at steps of stride; flip reverses the kernel's spatial axes.
struct ConvParams {
  Shape stride, pad_lo, pad_hi, kernel_dilation, input_dilation;
  int64_t groups = 1;
  bool flip = false;
  bool operator==(const ConvParams&) const = default;
};

// Inputs: x (N, *spatial, C_in) and w (C_out, *kernel, C_in / groups) of one floating dtype;
// output (N, *spatial_out, C_out) of that dtype. Output channel o sees input channels of group
// o / (C_out / groups).
class Convolution : public Primitive {
 public:
  explicit Convolution(ConvParams p) : p_(std::move(p)) {}
  const char* name() const override { return "convolution"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* c = dynamic_cast<const Convolution*>(&o);
    return c && c->p_ == p_;
  }
  const ConvParams& params() const { return p_; }

 private:
  ConvParams p_;
};

}  // namespace nuvec
