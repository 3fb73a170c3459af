// Differentiation rules of the element-wise family: each unary op's derivative is one line of
// a table (vjp = g * f'(x), jvp = t * f'(x)); binary ops give both partials. The table's lines are
// the registry rows' `derivative` (python/nuvec/_registry.py), written in at build time.
#include <cmath>
#include <stdexcept>

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
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"  // every op has its case (generated from the registry)
  switch (op) {
#define NUVEC_UNARY_DERIVATIVES
#include "nuvec_generated/elementwise_derivatives.inc"
#undef NUVEC_UNARY_DERIVATIVES
  }
#pragma GCC diagnostic pop
  throw std::logic_error("derivative: not a UnaryOp");
}

// The registry's LINEAR rows: the op maps tangents as it maps values.
enum class GradKind { formula, zero, linear };
#define NUVEC_LINEAR_ENTRY(name, rule, accepts, params, kind) GradKind::kind == GradKind::linear,
constexpr bool kLinear[] = {NUVEC_UNARY_OPS(NUVEC_LINEAR_ENTRY)};
#undef NUVEC_LINEAR_ENTRY
bool linear(UnaryOp op) { return kLinear[int(op)]; }

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
      r = binary(BinaryOp::multiply, astype(g, Dtype::complex64, s), scalar_array(std::complex<double>(0, -1)), s);
    if (op_ == UnaryOp::imag && !is_complex(x.dtype())) return {zeros_like(x)};
    // copy may broadcast (full) and convert (astype): sum back and convert back.
    return {unbroadcast(r, x.shape(), x.dtype())};
  }
  std::optional<Array> d = derivative(op_, astype(x, outputs[0].dtype(), s), outputs[0]);
  if (!d) return {zeros_like(x)};
  return {astype(mul(g, *d), x.dtype(), s)};
}

// As MLX: a comparison's tangent is zeros in its input's tangent dtype, not the bool of its
// output; a logical op's too when its input is already bool (MLX casts other inputs to bool,
// and their tangents with them).
bool compares(UnaryOp op) { return op == UnaryOp::isnan || op == UnaryOp::isposinf || op == UnaryOp::isneginf; }
bool compares(BinaryOp op) {
  return op == BinaryOp::equal || op == BinaryOp::not_equal || op == BinaryOp::greater ||
         op == BinaryOp::greater_equal || op == BinaryOp::less || op == BinaryOp::less_equal;
}
bool logical(UnaryOp op) { return op == UnaryOp::logical_not; }
bool logical(BinaryOp op) { return op == BinaryOp::logical_and || op == BinaryOp::logical_or; }
template <class Op> Array zero_tangent(Op op, const Array& out, const Array& input, const Array& tangent) {
  bool like_tangent = compares(op) || (logical(op) && input.dtype() == Dtype::bool_);
  Dtype dt = like_tangent ? tangent.dtype() : out.dtype();
  return filled_like(out, scalar_array(int64_t(0), dt), out.stream());
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
  if (!d) return {zero_tangent(op_, out, x, tangents[0])};
  return {mul(astype(tangents[0], out.dtype(), s), *d)};
}

namespace {

// The partial derivatives (d out / d a, d out / d b) of a binary op, or nothing when both vanish.
std::optional<std::pair<Array, Array>> partials(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  Stream s = a.stream();
  auto u = [&](UnaryOp o, const Array& x) { return unary(o, x, s); };
  auto mask = [&](BinaryOp cmp, const Array& x, const Array& y) { return astype(binary(cmp, x, y, s), a.dtype(), s); };
  auto bin = [&](BinaryOp o, const Array& x, const Array& y) { return binary(o, x, y, s); };
  Array one = lit(1.0, a), zero = lit(0.0, a);
  auto positive = [&](const Array& x) { return binary(BinaryOp::greater, x, zero, s); };
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"  // every op has its case (generated from the registry)
  switch (op) {
#include "nuvec_generated/elementwise_derivatives.inc"
  }
#pragma GCC diagnostic pop
  throw std::logic_error("partials: not a BinaryOp");
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
  if (!p) return {zero_tangent(op_, out, primals[argnums[0]], tangents[0])};
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
    if (k == 0)
      out.push_back(zeros_like(x));
    else
      out.push_back(unbroadcast(k == 1 ? where(cond, g, zero, s) : where(cond, zero, g, s), x.shape(), x.dtype()));
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
