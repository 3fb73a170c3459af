// vjp and jvp rules of nuvec.linalg's LU / triangular / Cholesky primitives, written with ops
// (triangular solves and products) so they differentiate again. Each is the derivative of what
// the kernel computes: a primitive that reads one triangle of its input has a gradient on that
// triangle alone (Cholesky's reads the lower one as the symmetric matrix it stands for).
#include "core/ops.h"
#include "core/ops/linalg.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/linalg.h"
#include "core/primitives/linalg_grad_util.h"

namespace nuvec {

namespace {

using grad::add;
using grad::eye_like;
using grad::mm;
using grad::mT;
using grad::mul;
using grad::neg;
using grad::sub;
using grad::zeros_like;

Array lower(const Array& x, int64_t k = 0) { return tril(x, k, x.stream()); }
Array upper(const Array& x, int64_t k = 0) { return triu(x, k, x.stream()); }
Array tsolve(const Array& t, const Array& b, bool up, bool trans, bool unit = false) {
  return linalg::triangular_solve(t, b, up, trans, unit, b.stream());
}

// The rows of x taken in the order `idx` (uint32, one per row).
Array rows(const Array& x, const Array& idx) {
  Stream s = x.stream();
  return take_along_axis(x, broadcast_to(expand_dims(idx, {-1}, s), x.shape(), s), -2, s);
}

// The part of x that a triangular primitive reads (strict when its diagonal is implied).
Array triangle(const Array& x, bool up, bool unit = false) {
  return up ? upper(x, unit ? 1 : 0) : lower(x, unit ? -1 : 0);
}

// Lower triangle with the diagonal halved (Cholesky's Phi).
Array phi(const Array& x) { return sub(lower(x), mul(mul(x, eye_like(x)), grad::lit(0.5, x))); }

// Gradient rules of the lower Cholesky factor L of the symmetric matrix of a's lower triangle.
Array cholesky_lower_vjp(const Array& l, const Array& g) {
  Array z = tsolve(l, phi(mm(mT(l), g)), false, true);  // L^-T Phi(L^T G)
  Array sbar = mT(tsolve(l, mT(z), false, true));       // ... L^-1
  return add(lower(sbar), lower(mT(sbar), -1));
}

Array cholesky_lower_jvp(const Array& l, const Array& da) {
  Array ds = add(lower(da), mT(lower(da, -1)));
  Array z = tsolve(l, ds, false, false);         // L^-1 dS
  Array f = mT(tsolve(l, mT(z), false, false));  // ... L^-T
  return mm(l, phi(f));
}

// The factorisation's outputs for a rule: recomputed, since an output no user kept reaches a rule
// as zeros (the rules need the factors and the permutation whichever outputs were used).
std::vector<Array> factors(const Array& a) {
  if (a.shape(-1) != a.shape(-2)) throw OpError("linalg.lu_factor", "derivatives are defined for square matrices only");
  return linalg::lu_factor_all(a, a.stream());
}

}  // namespace

// a = Pm L U (Pm X = X[perm]). With F = L^-1 Pm^T da U^-1: dL = L tril(F, -1), dU = triu(F) U.
std::vector<Array> LUFactor::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>&, const std::vector<Array>&) {
  std::vector<Array> fac = factors(primals[0]);
  const Array& lu = fac[0];
  const Array& g = cotangents[0];
  Array l = add(lower(lu, -1), eye_like(lu)), u = upper(lu);
  Array m = add(lower(mm(mT(l), lower(g, -1)), -1), upper(mm(upper(g), mT(u))));
  Array z = tsolve(lu, m, false, true, true);    // L^-T M
  Array y = mT(tsolve(lu, mT(z), true, false));  // ... U^-T
  return {rows(y, fac[2])};
}

std::vector<Array> LUFactor::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                 const std::vector<int>&, const std::vector<Array>& outputs) {
  std::vector<Array> fac = factors(primals[0]);
  const Array& lu = fac[0];
  Stream s = lu.stream();
  Array l = add(lower(lu, -1), eye_like(lu)), u = upper(lu);
  Array w = rows(tangents[0], argsort(fac[2], -1, s));  // Pm^T da
  Array z = tsolve(lu, w, false, false, true);          // L^-1 ...
  Array f = mT(tsolve(lu, mT(z), true, true));          // ... U^-1
  return {add(mm(l, lower(f, -1)), mm(upper(f), u)), zeros_like(outputs[1]), zeros_like(outputs[2])};
}

// x = a^-1 b (a^-T b): b' = a^-T x' (a^-1 x'), a' = -b' x^T (-x b'^T).
std::vector<Array> Solve::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                              const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  Array bbar = linalg::solve_matrix(primals[0], cotangents[0], !transpose_, x.stream());
  std::vector<Array> out;
  for (int k : argnums) out.push_back(k == 1 ? bbar : neg(transpose_ ? mm(x, mT(bbar)) : mm(bbar, mT(x))));
  return out;
}

std::vector<Array> Solve::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                              const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  Array rhs = zeros_like(x);
  for (size_t i = 0; i < argnums.size(); ++i)
    rhs = argnums[i] == 1 ? add(rhs, tangents[i]) : sub(rhs, mm(transpose_ ? mT(tangents[i]) : tangents[i], x));
  return {linalg::solve_matrix(primals[0], rhs, transpose_, x.stream())};
}

// x = op(T)^-1 b: b' = op(T)^-T x', T' = the read triangle of -b' x^T (or of -x b'^T).
std::vector<Array> TriangularSolve::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                        const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  Array bbar = tsolve(primals[0], cotangents[0], upper_, !transpose_, unit_);
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 1 ? bbar : triangle(neg(transpose_ ? mm(x, mT(bbar)) : mm(bbar, mT(x))), upper_, unit_));
  return out;
}

std::vector<Array> TriangularSolve::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                        const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  Array rhs = zeros_like(x);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 1) {
      rhs = add(rhs, tangents[i]);
    } else {
      Array dt = triangle(tangents[i], upper_, unit_);
      rhs = sub(rhs, mm(transpose_ ? mT(dt) : dt, x));
    }
  }
  return {tsolve(primals[0], rhs, upper_, transpose_, unit_)};
}

// x = a^-1: a' = -x^T g x^T, dx = -x da x (on the read triangle for tri_inv).
std::vector<Array> Inverse::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  Array g = neg(mm(mm(mT(x), cotangents[0]), mT(x)));
  return {triangular_ ? triangle(g, upper_) : g};
}

std::vector<Array> Inverse::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                const std::vector<Array>& outputs) {
  const Array& x = outputs[0];
  return {neg(mm(mm(x, triangular_ ? triangle(tangents[0], upper_) : tangents[0]), x))};
}

// The upper factor of a is the transposed lower factor of a^T.
std::vector<Array> Cholesky::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                 const std::vector<int>&, const std::vector<Array>& outputs) {
  if (!upper_) return {cholesky_lower_vjp(outputs[0], cotangents[0])};
  return {mT(cholesky_lower_vjp(mT(outputs[0]), mT(cotangents[0])))};
}

std::vector<Array> Cholesky::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                 const std::vector<Array>& outputs) {
  if (!upper_) return {cholesky_lower_jvp(outputs[0], tangents[0])};
  return {mT(cholesky_lower_jvp(mT(outputs[0]), mT(tangents[0])))};
}

}  // namespace nuvec
