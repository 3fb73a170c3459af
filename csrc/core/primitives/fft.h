// The discrete Fourier transform over some axes (docs/fft.md).
#pragma once
#include <vector>

#include "core/primitive.h"

namespace nuvec {

// scale * the unnormalised DFT over `axes` (sign -1, or +1 when `inverse`). Kinds: complex to
// complex (complex64 in and out); real forward (float32 in; the last of `axes` keeps its first
// n / 2 + 1 outputs); real inverse (complex64 in, the last of `axes` read as the first n / 2 + 1
// values of a Hermitian sequence whose length n is the output's; float32 out).
class FFT : public Primitive {
 public:
  FFT(std::vector<int> axes, bool inverse, bool real, double scale)
      : axes_(std::move(axes)), inverse_(inverse), real_(real), scale_(scale) {}
  const char* name() const override { return "fft"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  bool is_equivalent(const Primitive& o) const override {
    auto* f = dynamic_cast<const FFT*>(&o);
    return f && f->axes_ == axes_ && f->inverse_ == inverse_ && f->real_ == real_ && f->scale_ == scale_;
  }
  const std::vector<int>& axes() const { return axes_; }
  bool inverse() const { return inverse_; }
  bool real() const { return real_; }
  double scale() const { return scale_; }

 private:
  std::vector<int> axes_;  // non-negative, distinct
  bool inverse_, real_;
  double scale_;
};

}  // namespace nuvec
