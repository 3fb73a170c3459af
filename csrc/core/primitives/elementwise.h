// The element-wise family: unary, binary and ternary operations computed per element with
// broadcasting. Half types compute in float32 (`compute` dtypes differ from storage dtypes).
#pragma once
#include <array>

#include "core/primitive.h"

namespace nuvec {

#define NUVEC_UNARY_OPS(X)                                                                          \
  X(abs) X(negative) X(sign) X(sqrt) X(rsqrt) X(square) X(reciprocal) X(exp) X(expm1) X(log)        \
  X(log1p) X(log2) X(log10) X(sin) X(cos) X(tan) X(arcsin) X(arccos) X(arctan) X(sinh) X(cosh)      \
  X(tanh) X(arcsinh) X(arccosh) X(arctanh) X(erf) X(erfinv) X(sigmoid) X(floor) X(ceil) X(round)    \
  X(isnan) X(isinf) X(isposinf) X(isneginf) X(isfinite) X(logical_not) X(bitwise_invert)             \
  X(conjugate) X(real) X(imag) X(nan_to_num) X(stop_gradient) X(copy)

#define NUVEC_BINARY_OPS(X)                                                                         \
  X(add) X(subtract) X(multiply) X(divide) X(floor_divide) X(remainder) X(power) X(maximum)         \
  X(minimum) X(equal) X(not_equal) X(less) X(less_equal) X(greater) X(greater_equal) X(logical_and) \
  X(logical_or) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(left_shift) X(right_shift) X(arctan2)  \
  X(logaddexp) X(isclose) X(equal_nan)

#define NUVEC_ENUM_ENTRY(name) name,
enum class UnaryOp : int { NUVEC_UNARY_OPS(NUVEC_ENUM_ENTRY) };
enum class BinaryOp : int { NUVEC_BINARY_OPS(NUVEC_ENUM_ENTRY) };
#undef NUVEC_ENUM_ENTRY
#define NUVEC_COUNT_ENTRY(name) +1
constexpr int kUnaryOps = 0 NUVEC_UNARY_OPS(NUVEC_COUNT_ENTRY);
constexpr int kBinaryOps = 0 NUVEC_BINARY_OPS(NUVEC_COUNT_ENTRY);
#undef NUVEC_COUNT_ENTRY

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);

// Scalar parameters of the few parameterised ops (round's decimals, nan_to_num's values,
// isclose's tolerances).
struct EwParams {
  double a = 0, b = 0, c = 0;
  int i = 0;
  bool operator==(const EwParams& o) const { return a == o.a && b == o.b && c == o.c && i == o.i; }
};

class Elementwise : public Primitive {
 public:
  Elementwise(std::vector<Dtype> compute, Dtype out_compute, EwParams params)
      : compute_(std::move(compute)), out_compute_(out_compute), params_(params) {}
  NUVEC_VMAP_RULE  // one rule for the family
  const std::vector<Dtype>& compute() const { return compute_; }
  Dtype out_compute() const { return out_compute_; }
  const EwParams& params() const { return params_; }

 protected:
  std::vector<Dtype> compute_;  // the dtype each input is read as
  Dtype out_compute_;           // the dtype the kernel writes (then stored as the output's)
  EwParams params_;
};

class Unary : public Elementwise {
 public:
  // `label` names ops built on another's kernel (astype and full are copies).
  Unary(UnaryOp op, Dtype in_compute, Dtype out_compute, EwParams p = {}, const char* label = nullptr)
      : Elementwise({in_compute}, out_compute, p), op_(op), label_(label) {}
  const char* name() const override { return label_ ? label_ : op_name(op_); }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  bool is_equivalent(const Primitive& o) const override;
  UnaryOp op() const { return op_; }

 private:
  UnaryOp op_;
  const char* label_;
};

class Binary : public Elementwise {
 public:
  Binary(BinaryOp op, Dtype in_compute, Dtype out_compute, EwParams p = {})
      : Elementwise({in_compute, in_compute}, out_compute, p), op_(op) {}
  const char* name() const override { return op_name(op_); }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  bool is_equivalent(const Primitive& o) const override;
  BinaryOp op() const { return op_; }

 private:
  BinaryOp op_;
};

// where(cond, x, y)
class Select : public Elementwise {
 public:
  explicit Select(Dtype compute) : Elementwise({Dtype::bool_, compute, compute}, compute, {}) {}
  const char* name() const override { return "where"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  bool is_equivalent(const Primitive& o) const override;
};

}  // namespace nuvec
