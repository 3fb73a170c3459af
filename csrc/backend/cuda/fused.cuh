// An element-wise chain as the CUDA fused kernel sees it: backend/cuda/fused.cpp builds the steps,
// fused.cu runs them. Kernel files include no core header but these.
#pragma once
#include <cstdint>

#include "backend/cuda/elementwise_launch.h"

namespace nuvec::cuda {

constexpr int kFusedMaxSteps = 16;
constexpr int kFusedMaxInputs = 16;

// Step s computes op (a UnaryOp when arity is 1, a BinaryOp when 2) of its operands: operand k is
// step src[k]'s result when src[k] >= 0, else input -src[k] - 1. Its result is stored at out when
// out is set. Every step computes and yields the compute dtype.
struct FusedStep {
  int arity, op;
  int src[2];
  void* out;
  KernelParams params;
};

// n elements; input j is contiguous (n elements) or, when scalar[j], one element; a one-element
// input the host holds comes by value (in[j] null, value[j]), so a constant is not copied over.
struct FusedArgs {
  int steps;
  FusedStep step[kFusedMaxSteps];
  const void* in[kFusedMaxInputs];
  bool scalar[kFusedMaxInputs];
  float value[kFusedMaxInputs];
  int64_t n;
};

// Whether chains computing in dtype d run fused (float32: half types compute in float32, so their
// ops convert at every step), and the launch.
bool fused_dtype(Dtype d);
void launch_fused(Dtype d, const FusedArgs& a);

}  // namespace nuvec::cuda
