// The element-wise kernels' launch interface, in plain data: elementwise.cpp plans a launch (dtypes,
// donation, collapsed strides) and elementwise.cu runs it. No CUDA or Array type crosses it.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cuda {

constexpr int kMaxInputs = 3;
constexpr int kMaxDims = 8;  // axes one launch indexes; the host loops over any further leading ones

// The collapsed iteration space of one launch; operand 0 is the output, 1 + k input k.
struct Layout {
  int ndim = 1;
  bool narrow = false;  // fewer than 2^32 elements: index math in 32 bits
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxInputs + 1][kMaxDims] = {};  // in elements
};

// The parameterised ops' parameters (core/primitives/elementwise.h's structs, as kernel data).
struct KernelParams {
  int decimals = 0;                        // round
  double round_scale = 1;                  // round: 10^|decimals|, computed on the host as the CPU does
  double nan = 0, posinf = 0, neginf = 0;  // nan_to_num
  double rtol = 0, atol = 0;               // isclose
  bool equal_nan = false;
};

struct EwArgs {
  int op = 0;  // a UnaryOp or BinaryOp
  const void* in[kMaxInputs] = {};
  Dtype in_dtype[kMaxInputs] = {};
  void* out = nullptr;
  Dtype out_dtype = Dtype::float32;
  int64_t size = 0;
  Layout layout;
  KernelParams params;
};

enum class EwKind { unary, binary, select, copy };
// Runs `kind`'s kernel computing in dtype `compute` (select: the values'; copy: the output's).
void launch_elementwise(EwKind kind, Dtype compute, const EwArgs& args);
// Whether the op has a kernel for compute dtype d (the CPU backend's set).
bool unary_has_kernel(int op, Dtype d);
bool binary_has_kernel(int op, Dtype d);
// The hot float ops (add, subtract, multiply, divide, maximum, minimum) on n contiguous elements of
// dtype d (float32, float16, bfloat16), 16-byte aligned, or single broadcast elements; false when
// op is not one of them.
bool launch_binary_vec(int op, Dtype d, const void* a, const void* b, void* out, int64_t n, bool a_scalar,
                       bool b_scalar);
// out[i] = start + i * step in double, converted to dtype d as the CPU converts.
void launch_arange(Dtype d, void* out, int64_t n, double start, double step);

}  // namespace nuvec::cuda
