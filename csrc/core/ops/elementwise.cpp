// Element-wise ops: the dtype rules of each op, then one node.
#include <cmath>
#include <string>

#include "core/ops.h"
#include "core/ops_reduce.h"

namespace nuvec {
namespace {

[[noreturn]] void unsupported(const char* op, Dtype d) {
  throw OpError(op, std::string("not supported for arrays of dtype ") + name_of(d));
}

enum class Rule {
  same,          // output dtype = input dtype
  float_out,     // integers compute in float32 (at_least_float)
  bool_out,      // predicate
  real_of,       // complex -> float32, others unchanged
};

struct UnaryRule {
  Rule rule;
  bool bool_ok, int_ok, complex_ok;
};

UnaryRule unary_rule(UnaryOp op) {
  switch (op) {
    case UnaryOp::abs: return {Rule::real_of, true, true, true};
    case UnaryOp::negative: return {Rule::same, false, true, true};
    case UnaryOp::sign: return {Rule::same, true, true, true};
    case UnaryOp::square: return {Rule::same, true, true, true};
    case UnaryOp::erf:
    case UnaryOp::erfinv: return {Rule::float_out, true, true, false};
    case UnaryOp::floor:
    case UnaryOp::ceil: return {Rule::same, true, true, false};
    case UnaryOp::round: return {Rule::same, true, true, true};
    case UnaryOp::expm1:
    case UnaryOp::sigmoid: return {Rule::float_out, true, true, false};
    case UnaryOp::isnan:
    case UnaryOp::isinf:
    case UnaryOp::isposinf:
    case UnaryOp::isneginf:
    case UnaryOp::isfinite: return {Rule::bool_out, true, true, true};
    case UnaryOp::logical_not: return {Rule::bool_out, true, true, true};
    case UnaryOp::bitwise_invert: return {Rule::same, true, true, false};
    case UnaryOp::conjugate:
    case UnaryOp::nan_to_num:
    case UnaryOp::stop_gradient:
    case UnaryOp::copy: return {Rule::same, true, true, true};
    case UnaryOp::real:
    case UnaryOp::imag: return {Rule::real_of, true, true, true};
    default: return {Rule::float_out, true, true, true};  // transcendental functions
  }
}

}  // namespace

Array unary(UnaryOp op, const Array& x, Stream s, EwParams p) {
  const char* name = op_name(op);
  Dtype in = x.dtype();
  UnaryRule r = unary_rule(op);
  if ((in == Dtype::bool_ && !r.bool_ok) || (is_integer(in) && !r.int_ok) || (is_complex(in) && !r.complex_ok) ||
      (op == UnaryOp::bitwise_invert && is_inexact(in)))
    unsupported(name, in);
  Dtype out;
  switch (r.rule) {
    case Rule::same: out = in; break;
    case Rule::float_out: out = at_least_float(in); break;
    case Rule::bool_out: out = Dtype::bool_; break;
    case Rule::real_of: out = is_complex(in) ? Dtype::float32 : in; break;
  }
  // Inputs convert to the output's compute type, except where the output is of another kind.
  Dtype in_compute = (r.rule == Rule::bool_out || r.rule == Rule::real_of) ? compute_type(in) : compute_type(out);
  return Array::lazy(x.shape(), out, std::make_shared<Unary>(op, in_compute, compute_type(out), p), {x}, s);
}

namespace {
struct BinaryRule {
  Rule rule;
  bool bool_ok, float_ok, complex_ok;
};

BinaryRule binary_rule(BinaryOp op) {
  switch (op) {
    case BinaryOp::divide: return {Rule::float_out, true, true, true};
    case BinaryOp::floor_divide:
    case BinaryOp::remainder: return {Rule::same, true, true, false};
    case BinaryOp::equal:
    case BinaryOp::not_equal:
    case BinaryOp::less:
    case BinaryOp::less_equal:
    case BinaryOp::greater:
    case BinaryOp::greater_equal:
    case BinaryOp::isclose:
    case BinaryOp::equal_nan: return {Rule::bool_out, true, true, true};
    case BinaryOp::logical_and:
    case BinaryOp::logical_or: return {Rule::bool_out, true, true, true};
    case BinaryOp::bitwise_and:
    case BinaryOp::bitwise_or:
    case BinaryOp::bitwise_xor: return {Rule::same, true, false, false};
    case BinaryOp::left_shift:
    case BinaryOp::right_shift: return {Rule::same, false, false, false};
    case BinaryOp::arctan2:
    case BinaryOp::logaddexp: return {Rule::float_out, true, true, false};
    default: return {Rule::same, true, true, true};  // add, subtract, multiply, power, maximum, minimum
  }
}
}  // namespace

Array binary(BinaryOp op, const Array& a, const Array& b, Stream s, EwParams p) {
  const char* name = op_name(op);
  Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
  Dtype common = promote(a.dtype(), b.dtype());
  bool shift = op == BinaryOp::left_shift || op == BinaryOp::right_shift;
  if (shift && common == Dtype::bool_) common = Dtype::uint8;  // as MLX
  BinaryRule r = binary_rule(op);
  bool logical = op == BinaryOp::logical_and || op == BinaryOp::logical_or;
  if ((common == Dtype::bool_ && !r.bool_ok) || (is_floating(common) && !r.float_ok) ||
      (is_complex(common) && !r.complex_ok))
    unsupported(name, common);
  Dtype out;
  switch (r.rule) {
    case Rule::float_out: out = at_least_float(common); break;
    case Rule::bool_out: out = Dtype::bool_; break;
    default: out = common; break;
  }
  Dtype in_compute = logical ? Dtype::bool_ : compute_type(r.rule == Rule::bool_out ? common : out);
  return Array::lazy(std::move(shape), out, std::make_shared<Binary>(op, in_compute, compute_type(out), p), {a, b},
                     s);
}

std::pair<Array, Array> divmod(const Array& a, const Array& b, Stream s) {
  if (is_complex(promote(a.dtype(), b.dtype()))) unsupported("divmod", Dtype::complex64);
  return {binary(BinaryOp::floor_divide, a, b, s), binary(BinaryOp::remainder, a, b, s)};
}

Array where(const Array& cond, const Array& x, const Array& y, Stream s) {
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), "where"), y.shape(), "where");
  Dtype out = promote(x.dtype(), y.dtype());
  return Array::lazy(std::move(shape), out, std::make_shared<Select>(compute_type(out)), {cond, x, y}, s);
}

Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi, Stream s) {
  if (!lo && !hi) throw OpError("clip", "a_min and a_max cannot both be None");
  Array r = x;
  if (lo) r = binary(BinaryOp::maximum, r, *lo, s);
  if (hi) r = binary(BinaryOp::minimum, r, *hi, s);
  return r;
}

Array round(const Array& x, int decimals, Stream s) {
  EwParams p;
  p.i = decimals;
  return unary(UnaryOp::round, x, s, p);
}

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Stream s) {
  // Defaults are the largest finite values of the array's own type.
  double big;
  switch (x.dtype()) {
    case Dtype::float16: big = 65504.0; break;
    case Dtype::bfloat16: big = 3.3895313892515355e38; break;
    case Dtype::float64: big = 1.7976931348623157e308; break;
    default: big = 3.4028234663852886e38; break;
  }
  EwParams p;
  p.a = nan;
  p.b = posinf.value_or(big);
  p.c = neginf.value_or(-big);
  return unary(UnaryOp::nan_to_num, x, s, p);
}

Array degrees(const Array& x, Stream s) {
  Array f = is_inexact(x.dtype()) ? x : astype(x, Dtype::float32, s);
  return binary(BinaryOp::multiply, f, weak_scalar(180.0 / M_PI, f.dtype(), "degrees"), s);
}

Array radians(const Array& x, Stream s) {
  Array f = is_inexact(x.dtype()) ? x : astype(x, Dtype::float32, s);
  return binary(BinaryOp::multiply, f, weak_scalar(M_PI / 180.0, f.dtype(), "radians"), s);
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s) {
  EwParams p;
  p.a = rtol;
  p.b = atol;
  p.i = equal_nan;
  return binary(BinaryOp::isclose, a, b, s, p);
}

Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s) {
  return all(isclose(a, b, rtol, atol, equal_nan, s), s);
}

Array array_equal(const Array& a, const Array& b, bool equal_nan, Stream s) {
  if (a.shape() != b.shape()) return scalar_array(false);
  return all(binary(equal_nan ? BinaryOp::equal_nan : BinaryOp::equal, a, b, s), s);
}

Array astype(const Array& x, Dtype dtype, Stream s) {
  if (x.dtype() == dtype) return x;
  // A copy converts each element straight from the input's dtype to the output's.
  return Array::lazy(x.shape(), dtype, std::make_shared<Unary>(UnaryOp::copy, x.dtype(), dtype, EwParams{}, "astype"), {x}, s);
}

}  // namespace nuvec
