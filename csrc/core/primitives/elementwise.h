// The element-wise family: unary, binary and ternary operations computed per element with
// broadcasting. Half types compute in float32 (`compute` dtypes differ from storage dtypes).
#pragma once
#include <array>
#include <variant>

#include "core/primitive.h"
#include "nuvec_generated/elementwise_ops.h"

namespace nuvec {

// The op lists (NUVEC_UNARY_OPS, NUVEC_BINARY_OPS, ...) are written at build time from the op
// registry, python/nuvec/_registry.py, by tools/gen_registry.py.
#define NUVEC_ENUM_ENTRY(name, ...) name,
enum class UnaryOp : int { NUVEC_UNARY_OPS(NUVEC_ENUM_ENTRY) };
enum class BinaryOp : int { NUVEC_BINARY_OPS(NUVEC_ENUM_ENTRY) };
#undef NUVEC_ENUM_ENTRY
#define NUVEC_COUNT_ENTRY(name, ...) +1
constexpr int kUnaryOps = 0 NUVEC_UNARY_OPS(NUVEC_COUNT_ENTRY);
constexpr int kBinaryOps = 0 NUVEC_BINARY_OPS(NUVEC_COUNT_ENTRY);
#undef NUVEC_COUNT_ENTRY

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);

// The parameters of the few parameterised ops, one struct per op (the registry row's `params`).
struct NoParams { bool operator==(const NoParams&) const = default; };
struct RoundParams {
  int decimals = 0;
  bool operator==(const RoundParams&) const = default;
};
struct NanToNumParams {
  double nan = 0, posinf = 0, neginf = 0;
  bool operator==(const NanToNumParams&) const = default;
};
struct IsCloseParams {
  double rtol = 0, atol = 0;
  bool equal_nan = false;
  bool operator==(const IsCloseParams&) const = default;
};
using OpParams = std::variant<NoParams, RoundParams, NanToNumParams, IsCloseParams>;

// Whether `p` holds the parameter struct `op` takes (its kernel reads it unchecked).
bool params_fit(UnaryOp op, const OpParams& p);
bool params_fit(BinaryOp op, const OpParams& p);

class Elementwise : public Primitive {
 public:
  Elementwise(std::vector<Dtype> compute, Dtype out_compute, OpParams params)
      : compute_(std::move(compute)), out_compute_(out_compute), params_(params) {}
  NUVEC_VMAP_RULE  // one rule for the family
      const std::vector<Dtype>& compute() const {
    return compute_;
  }
  Dtype out_compute() const { return out_compute_; }
  const OpParams& params() const { return params_; }

 protected:
  std::vector<Dtype> compute_;  // the dtype each input is read as
  Dtype out_compute_;           // the dtype the kernel writes (then stored as the output's)
  OpParams params_;
};

class Unary : public Elementwise {
 public:
  // `label` names ops built on another's kernel (astype and full are copies).
  Unary(UnaryOp op, Dtype in_compute, Dtype out_compute, OpParams p = {}, const char* label = nullptr)
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
  Binary(BinaryOp op, Dtype in_compute, Dtype out_compute, OpParams p = {})
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
