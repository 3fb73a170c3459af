// Primitives that make arrays from parameters alone.
#pragma once
#include "core/primitive.h"

namespace nuvec {

// out[i] = start + i * step, computed in double and cast.
class Arange : public Primitive {
 public:
  Arange(double start, double step) : start_(start), step_(step) {}
  const char* name() const override { return "arange"; }
  NUVEC_KERNEL_SLOT
  double start() const { return start_; }
  double step() const { return step_; }

 private:
  double start_, step_;
};

}  // namespace nuvec
