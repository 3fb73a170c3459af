// Element-wise ops: the dtype rules of each op, then one node.
#include "core/ops/elementwise.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/ops.h"
#include "core/ops/reduce.h"

namespace nuvec {
namespace {

[[noreturn]] void unsupported(const char* op, Dtype d) {
  throw OpError(op, std::string("not supported for arrays of dtype ") + name_of(d));
}

// The result dtype rules and accepted dtypes of the registry (python/nuvec/_registry.py); a rule
// without its case below fails the build.
#pragma GCC diagnostic error "-Wswitch"
enum class Rule { same, float_, bool_, logical, real_part, shift };
enum class Accepts { all, no_bool, no_complex, integers };

struct EwRule {
  Rule rule;
  Accepts accepts;
};

#define NUVEC_RULE_ENTRY(name, rule, accepts, ...) {Rule::rule, Accepts::accepts},
constexpr EwRule kUnaryRules[] = {NUVEC_UNARY_OPS(NUVEC_RULE_ENTRY)};
constexpr EwRule kBinaryRules[] = {NUVEC_BINARY_OPS(NUVEC_RULE_ENTRY)};
#undef NUVEC_RULE_ENTRY

bool accepted(Accepts a, Dtype d) {
  switch (a) {
    case Accepts::all: return true;
    case Accepts::no_bool: return d != Dtype::bool_;
    case Accepts::no_complex: return !is_complex(d);
    case Accepts::integers: return !is_inexact(d);
  }
  return false;
}

// The output dtype of `rule` for inputs of (promoted) dtype `in`.
Dtype result_dtype(Rule rule, Dtype in) {
  switch (rule) {
    case Rule::same:
    case Rule::shift: return in;
    case Rule::float_: return at_least_float(in);
    case Rule::bool_:
    case Rule::logical: return Dtype::bool_;
    case Rule::real_part: return is_complex(in) ? Dtype::float32 : in;
  }
  return in;
}

void check_params(const char* name, bool fit) {
  if (!fit) throw std::logic_error(std::string(name) + ": parameters of another op");
}

}  // namespace

Array unary(UnaryOp op, const Array& x, Stream s, OpParams p) {
  const char* name = op_name(op);
  Dtype in = x.dtype();
  const EwRule& r = kUnaryRules[int(op)];
  check_params(name, params_fit(op, p));
  if (!accepted(r.accepts, in)) unsupported(name, in);
  Dtype out = result_dtype(r.rule, in);
  // Inputs convert to the output's compute type, except where the output is of another kind.
  Dtype in_compute = (r.rule == Rule::bool_ || r.rule == Rule::real_part) ? compute_type(in) : compute_type(out);
  return Array::lazy(x.shape(), out, std::make_shared<Unary>(op, in_compute, compute_type(out), p), {x}, s);
}

Array binary(BinaryOp op, const Array& a, const Array& b, Stream s, OpParams p) {
  const char* name = op_name(op);
  Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
  Dtype common = promote(a.dtype(), b.dtype());
  const EwRule& r = kBinaryRules[int(op)];
  check_params(name, params_fit(op, p));
  if (r.rule == Rule::shift && common == Dtype::bool_) common = Dtype::uint8;  // as MLX
  if (!accepted(r.accepts, common)) unsupported(name, common);
  Dtype out = result_dtype(r.rule, common);
  Dtype in_compute = r.rule == Rule::logical ? Dtype::bool_ : compute_type(r.rule == Rule::bool_ ? common : out);
  return Array::lazy(std::move(shape), out, std::make_shared<Binary>(op, in_compute, compute_type(out), p), {a, b}, s);
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

Array round(const Array& x, int decimals, Stream s) { return unary(UnaryOp::round, x, s, RoundParams{decimals}); }

Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Stream s) {
  // Defaults are the largest finite values of the array's own type.
  double big;
  switch (x.dtype()) {
    case Dtype::float16: big = 65504.0; break;
    case Dtype::bfloat16: big = 3.3895313892515355e38; break;
    case Dtype::float64: big = 1.7976931348623157e308; break;
    default: big = 3.4028234663852886e38; break;
  }
  return unary(UnaryOp::nan_to_num, x, s, NanToNumParams{nan, posinf.value_or(big), neginf.value_or(-big)});
}

Array degrees(const Array& x, Stream s) {
  Array f = is_inexact(x.dtype()) ? x : astype(x, Dtype::float32, s);
  return binary(BinaryOp::multiply, f, weak_scalar(180.0 / M_PI, f.dtype(), "degrees"), s);
}

Array radians(const Array& x, Stream s) {
  Array f = is_inexact(x.dtype()) ? x : astype(x, Dtype::float32, s);
  return binary(BinaryOp::multiply, f, weak_scalar(M_PI / 180.0, f.dtype(), "radians"), s);
}

Array positive(const Array& x, Stream) { return x; }

Array trunc(const Array& x, Stream s) {
  if (is_complex(x.dtype())) unsupported("trunc", x.dtype());
  if (!is_inexact(x.dtype())) return x;
  // Toward zero: ceil below zero, floor elsewhere (NaN stays NaN through floor).
  Array negative = binary(BinaryOp::less, x, weak_scalar(0.0, x.dtype(), "trunc"), s);
  return where(negative, unary(UnaryOp::ceil, x, s), unary(UnaryOp::floor, x, s), s);
}

Array logical_xor(const Array& a, const Array& b, Stream s) {
  return binary(BinaryOp::not_equal, astype(a, Dtype::bool_, s), astype(b, Dtype::bool_, s), s);
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s) {
  return binary(BinaryOp::isclose, a, b, s, IsCloseParams{rtol, atol, equal_nan});
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
  return Array::lazy(x.shape(), dtype, std::make_shared<Unary>(UnaryOp::copy, x.dtype(), dtype, OpParams{}, "astype"),
                     {x}, s);
}

}  // namespace nuvec
