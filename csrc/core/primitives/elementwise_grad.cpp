// Differentiation rules of the element-wise family: each unary op's derivative is one line of
// a table (vjp = g * f'(x), jvp = t * f'(x)); binary ops give both partials.
#include <cmath>

#include "core/primitives/elementwise.h"
#include "core/primitives/grad_util.h"

namespace nuvec {
using namespace grad;

namespace {

// f'(x), given x and out = f(x); nothing for ops whose derivative is zero.
std::optional<Array> derivative(UnaryOp op, const Array& x, const Array& out) {
  Stream s = x.stream();
  auto u = [&](UnaryOp o, const Array& a) { return unary(o, a, s); };
  auto one = [&] { return lit(1.0, x); };
  switch (op) {
    case UnaryOp::abs: return u(UnaryOp::sign, x);
    case UnaryOp::negative: return neg(one());
    case UnaryOp::sqrt: return div(lit(0.5, x), out);
    case UnaryOp::rsqrt: return mul(lit(-0.5, x), div(out, x));
    case UnaryOp::square: return mul(lit(2.0, x), x);
    case UnaryOp::reciprocal: return neg(mul(out, out));
    case UnaryOp::exp: return out;
    case UnaryOp::expm1: return add(out, one());
    case UnaryOp::log: return u(UnaryOp::reciprocal, x);
    case UnaryOp::log1p: return u(UnaryOp::reciprocal, add(x, one()));
    case UnaryOp::log2: return u(UnaryOp::reciprocal, mul(x, lit(M_LN2, x)));
    case UnaryOp::log10: return u(UnaryOp::reciprocal, mul(x, lit(M_LN10, x)));
    case UnaryOp::sin: return u(UnaryOp::cos, x);
    case UnaryOp::cos: return neg(u(UnaryOp::sin, x));
    case UnaryOp::tan: return add(one(), mul(out, out));
    case UnaryOp::arcsin: return u(UnaryOp::rsqrt, sub(one(), mul(x, x)));
    case UnaryOp::arccos: return neg(u(UnaryOp::rsqrt, sub(one(), mul(x, x))));
    case UnaryOp::arctan: return u(UnaryOp::reciprocal, add(one(), mul(x, x)));
    case UnaryOp::sinh: return u(UnaryOp::cosh, x);
    case UnaryOp::cosh: return u(UnaryOp::sinh, x);
    case UnaryOp::tanh: return sub(one(), mul(out, out));
    case UnaryOp::arcsinh: return u(UnaryOp::rsqrt, add(mul(x, x), one()));
    case UnaryOp::arccosh: return u(UnaryOp::rsqrt, sub(mul(x, x), one()));
    case UnaryOp::arctanh: return u(UnaryOp::reciprocal, sub(one(), mul(x, x)));
    case UnaryOp::erf: return mul(lit(M_2_SQRTPI, x), u(UnaryOp::exp, neg(mul(x, x))));
    case UnaryOp::erfinv: return mul(lit(std::sqrt(M_PI) / 2, x), u(UnaryOp::exp, mul(out, out)));
    case UnaryOp::sigmoid: return mul(out, sub(one(), out));
    case UnaryOp::nan_to_num: return astype(u(UnaryOp::isfinite, x), x.dtype(), s);
    default: return std::nullopt;  // piecewise constant, predicates, bitwise: derivative zero
  }
}

bool linear(UnaryOp op) {
  return op == UnaryOp::copy || op == UnaryOp::conjugate || op == UnaryOp::real || op == UnaryOp::imag;
}

}  // namespace

std::vector<Array> Unary::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                              const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& g = cotangents[0];
  Stream s = x.stream();
  if (op_ == UnaryOp::stop_gradient) return {zeros_like(x)};
  if (linear(op_)) {
    Array r = g;
    if (op_ == UnaryOp::conjugate) r = unary(UnaryOp::conjugate, g, s);
    if (op_ == UnaryOp::imag && is_complex(x.dtype()))
      r = binary(BinaryOp::multiply, astype(g, Dtype::complex64, s),
                 scalar_array(std::complex<double>(0, -1)), s);
    if (op_ == UnaryOp::imag && !is_complex(x.dtype())) return {zeros_like(x)};
    // copy may broadcast (full) and convert (astype): sum back and convert back.
    return {unbroadcast(r, x.shape(), x.dtype())};
  }
  std::optional<Array> d = derivative(op_, astype(x, outputs[0].dtype(), s), outputs[0]);
  if (!d) return {zeros_like(x)};
  return {astype(mul(g, *d), x.dtype(), s)};
}

std::vector<Array> Unary::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                              const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  const Array& out = outputs[0];
  Stream s = x.stream();
  if (op_ == UnaryOp::stop_gradient) return {zeros_like(out)};
  // A linear op maps the tangent as it maps the input.
  if (linear(op_)) return {Array::lazy(out.shape(), out.dtype(), shared_from_this(), {tangents[0]}, s)};
  std::optional<Array> d = derivative(op_, astype(x, out.dtype(), s), out);
  if (!d) return {zeros_like(out)};
  return {mul(astype(tangents[0], out.dtype(), s), *d)};
}

namespace {

// The partial derivatives (d out / d a, d out / d b) of a binary op, or nothing when both vanish.
std::optional<std::pair<Array, Array>> partials(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  Stream s = a.stream();
  auto u = [&](UnaryOp o, const Array& x) { return unary(o, x, s); };
  auto mask = [&](BinaryOp cmp, const Array& x, const Array& y) { return astype(binary(cmp, x, y, s), a.dtype(), s); };
  Array one = lit(1.0, a), zero = lit(0.0, a);
  switch (op) {
    case BinaryOp::add: return std::pair{one, one};
    case BinaryOp::subtract: return std::pair{one, neg(one)};
    case BinaryOp::multiply: return std::pair{b, a};
    case BinaryOp::divide: return std::pair{u(UnaryOp::reciprocal, b), neg(div(out, b))};
    case BinaryOp::remainder: return std::pair{one, neg(binary(BinaryOp::floor_divide, a, b, s))};
    case BinaryOp::power: {
      Array da = mul(b, binary(BinaryOp::power, a, sub(b, one), s));
      // out * log(a), taken as 0 where a <= 0 (where the real power has no derivative in b).
      Array safe = where(binary(BinaryOp::greater, a, zero, s), a, one, s);
      Array db = where(binary(BinaryOp::greater, a, zero, s), mul(out, u(UnaryOp::log, safe)), zero, s);
      return std::pair{da, db};
    }
    case BinaryOp::maximum: return std::pair{mask(BinaryOp::greater_equal, a, b), mask(BinaryOp::less, a, b)};
    case BinaryOp::minimum: return std::pair{mask(BinaryOp::less_equal, a, b), mask(BinaryOp::greater, a, b)};
    case BinaryOp::arctan2: {
      Array r = u(UnaryOp::reciprocal, add(mul(a, a), mul(b, b)));
      return std::pair{mul(b, r), neg(mul(a, r))};
    }
    case BinaryOp::logaddexp:
      return std::pair{u(UnaryOp::exp, sub(a, out)), u(UnaryOp::exp, sub(b, out))};
    default: return std::nullopt;  // floor_divide, comparisons, logical and bitwise ops
  }
}

}  // namespace

std::vector<Array> Binary::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = primals[0].stream();
  Dtype d = outputs[0].dtype();
  Array a = astype(primals[0], d, s), b = astype(primals[1], d, s);
  auto p = partials(op_, a, b, outputs[0]);
  std::vector<Array> out;
  for (int k : argnums) {
    const Array& x = primals[k];
    if (!p) {
      out.push_back(zeros_like(x));
      continue;
    }
    out.push_back(unbroadcast(mul(cotangents[0], k == 0 ? p->first : p->second), x.shape(), x.dtype()));
  }
  return out;
}

std::vector<Array> Binary::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = primals[0].stream();
  const Array& out = outputs[0];
  Array a = astype(primals[0], out.dtype(), s), b = astype(primals[1], out.dtype(), s);
  auto p = partials(op_, a, b, out);
  if (!p) return {zeros_like(out)};
  std::optional<Array> t;
  for (size_t i = 0; i < argnums.size(); ++i) {
    Array term = mul(astype(tangents[i], out.dtype(), s), argnums[i] == 0 ? p->first : p->second);
    t = t ? add(*t, term) : term;
  }
  return {broadcast_to(*t, out.shape(), s)};
}

std::vector<Array> Select::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>&) {
  Stream s = primals[0].stream();
  const Array& cond = primals[0];
  const Array& g = cotangents[0];
  Array zero = lit(0.0, g);
  std::vector<Array> out;
  for (int k : argnums) {
    const Array& x = primals[k];
    if (k == 0) out.push_back(zeros_like(x));
    else out.push_back(unbroadcast(k == 1 ? where(cond, g, zero, s) : where(cond, zero, g, s), x.shape(), x.dtype()));
  }
  return out;
}

std::vector<Array> Select::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = primals[0].stream();
  const Array& out = outputs[0];
  Array tx = zeros_like(out), ty = zeros_like(out);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 1) tx = astype(tangents[i], out.dtype(), s);
    if (argnums[i] == 2) ty = astype(tangents[i], out.dtype(), s);
  }
  return {where(primals[0], tx, ty, s)};
}

}  // namespace nuvec
