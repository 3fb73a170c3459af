// vjp and jvp rules of the real symmetric eigendecomposition, the SVD and QR (MLX 0.32 has none:
// nuvec goes further, docs/linalg.md). Written with ops, so they differentiate again. Each is the
// derivative of what the kernel computes:
// - eigh reads one triangle as the symmetric matrix it stands for, so its gradient lies on that
//   triangle (the off-diagonal entries count twice);
// - the SVD's full U and Vt hold, beyond the first K = min(M, N) columns, a basis of a subspace
//   that the matrix does not pin down; the rules take the basis that turns least (its tangent
//   orthogonal to itself), the convention of a minimal rotation;
// - QR's derivative is defined for M >= N (a tall or square matrix), as in JAX and PyTorch.
// Equal eigenvalues or singular values make the derivative of the vectors infinite, as everywhere.
#include "core/ops.h"
#include "core/ops/linalg.h"
#include "core/ops/linalg_spectral.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/linalg_grad_util.h"

namespace nuvec {

using namespace grad;

namespace {

// F[i, j] = 1 / (e[j] - e[i]) off the diagonal, 0 on it (e: (..., k)).
Array gaps_inverse(const Array& e) {
  Stream s = e.stream();
  Array d = sub(expand_dims(e, {-2}, s), expand_dims(e, {-1}, s));
  Array diagonal = eye(e.shape(-1), e.shape(-1), 0, Dtype::bool_, s);
  return where(diagonal, zeros_like(d), div(lit(1.0, d), d), s);
}

Array diag_embed(const Array& v) {
  Array row = expand_dims(v, {-2}, v.stream());
  return mul(row, eye_like(row));
}
Array diagonal_of(const Array& x) { return diagonal(x, 0, -2, -1, x.stream()); }
Array columns(const Array& x, int64_t from, int64_t to) { return slice_axis(x, -1, from, to); }
Array rows_of(const Array& x, int64_t from, int64_t to) { return slice_axis(x, -2, from, to); }

// The factorisation's outputs, recomputed: an output no user kept reaches a rule as zeros, and the
// rules need every factor whichever outputs were used.
std::vector<Array> factors(const Array& a, Decomposition kind, bool upper) {
  Decomposition full = kind == Decomposition::svd_values ? Decomposition::svd
                       : kind == Decomposition::eigvalsh ? Decomposition::eigh
                                                         : kind;
  return decompose(a, full, upper, a.stream());
}

void real_only(const Array& a, const char* op) {
  if (a.dtype() == Dtype::complex64) throw OpError(op, "derivatives are defined for real matrices only");
}

// ---------------------------------------------------------------- eigh

// The gradient on the read triangle of the symmetric matrix's gradient g.
Array fold(const Array& g, bool upper) {
  Array gt = mT(g);
  return upper ? add(triu(g, 0, g.stream()), triu(gt, 1, g.stream()))
               : add(tril(g, 0, g.stream()), tril(gt, -1, g.stream()));
}

// The symmetric matrix a tangent of the read triangle stands for.
Array unfold(const Array& t, bool upper) {
  Array tt = mT(t);
  return upper ? add(triu(t, 0, t.stream()), tril(tt, -1, t.stream()))
               : add(tril(t, 0, t.stream()), triu(tt, 1, t.stream()));
}

// ---------------------------------------------------------------- SVD

struct Svd {
  Array u1, s, v1, u2, v2;  // thin factors, and the extra bases (empty when square or absent)
  bool tall, wide;
};

Svd split_svd(const Array& u, const Array& s, const Array& vt) {
  int64_t m = u.shape(-1), n = vt.shape(-1), k = s.shape(-1);
  Svd r{columns(u, 0, k), s, mT(rows_of(vt, 0, k)), u, vt, m > k, n > k};
  if (r.tall) r.u2 = columns(u, k, m);
  if (r.wide) r.v2 = mT(rows_of(vt, k, n));
  return r;
}

// d (..., k) as the matrix that scales columns: x * d[None, :].
Array scale_columns(const Array& x, const Array& d) { return mul(x, expand_dims(d, {-2}, x.stream())); }
Array scale_rows(const Array& x, const Array& d) { return mul(x, expand_dims(d, {-1}, x.stream())); }

}  // namespace

std::vector<Array> Decompose::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& a = primals[0];
  Stream st = a.stream();
  real_only(a, name());
  switch (kind_) {
    case Decomposition::eigh:
    case Decomposition::eigvalsh: {
      // G = V (diag(w') + F o (V^T V')) V^T, F from the eigenvalue gaps.
      std::vector<Array> f = factors(a, kind_, upper_);
      const Array &w = f[0], &v = f[1];
      Array inner = diag_embed(cotangents[0]);
      if (kind_ == Decomposition::eigh) inner = add(inner, mul(gaps_inverse(w), mm(mT(v), cotangents[1])));
      return {fold(mm(mm(v, inner), mT(v)), upper_)};
    }
    case Decomposition::svd:
    case Decomposition::svd_values: {
      std::vector<Array> f = factors(a, kind_, upper_);
      Svd d = split_svd(f[0], f[1], f[2]);
      Array inner = diag_embed(cotangents[kind_ == Decomposition::svd ? 1 : 0]);
      Array g = zeros_like(a);
      if (kind_ == Decomposition::svd) {
        int64_t k = d.s.shape(-1);
        Array ubar = cotangents[0], vbar = mT(cotangents[2]);
        Array ubar1 = columns(ubar, 0, k), vbar1 = columns(vbar, 0, k);
        Array f2 = gaps_inverse(mul(d.s, d.s));
        Array j = mul(f2, mm(mT(d.u1), ubar1)), kk = mul(f2, mm(mT(d.v1), vbar1));
        inner = add(inner, add(scale_columns(add(j, mT(j)), d.s), scale_rows(add(kk, mT(kk)), d.s)));
        Array sinv = div(lit(1.0, d.s), d.s);
        // (I - U1 U1^T) U1' S^-1 V1^T + U1 S^-1 V1'^T (I - V1 V1^T)
        Array pu = sub(ubar1, mm(d.u1, mm(mT(d.u1), ubar1)));
        Array pv = sub(vbar1, mm(d.v1, mm(mT(d.v1), vbar1)));
        g = add(mm(scale_columns(pu, sinv), mT(d.v1)), mm(d.u1, mT(scale_columns(pv, sinv))));
        // The extra bases: -U2 U2'^T U1 S^-1 V1^T and -U1 S^-1 V1^T V2' V2^T.
        if (d.tall) {
          Array t = mm(mm(d.u2, mT(columns(ubar, k, ubar.shape(-1)))), d.u1);
          g = sub(g, mm(scale_columns(t, sinv), mT(d.v1)));
        }
        if (d.wide) {
          Array t = mm(mm(d.v2, mT(columns(vbar, k, vbar.shape(-1)))), d.v1);
          g = sub(g, mm(d.u1, mT(scale_columns(t, sinv))));
        }
      }
      return {add(g, mm(mm(d.u1, inner), mT(d.v1)))};
    }
    case Decomposition::qr: {
      // a' = (Q' + Q copyltu(M)) R^-T, M = R R'^T - Q'^T Q.
      if (a.shape(-2) < a.shape(-1)) throw OpError(name(), "derivatives are defined for M >= N only");
      std::vector<Array> f = factors(a, kind_, upper_);
      const Array &q = f[0], &r = f[1];
      Array m = sub(mm(r, mT(cotangents[1])), mm(mT(cotangents[0]), q));
      Array sym = add(tril(m, 0, st), mT(tril(m, -1, st)));
      Array x = add(cotangents[0], mm(q, sym));
      return {mT(linalg::triangular_solve(r, mT(x), true, false, false, st))};
    }
    default: break;
  }
  return Primitive::vjp(primals, cotangents, {0}, outputs);
}

std::vector<Array> Decompose::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                  const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& a = primals[0];
  Stream st = a.stream();
  real_only(a, name());
  const Array& da = tangents[0];
  switch (kind_) {
    case Decomposition::eigh:
    case Decomposition::eigvalsh: {
      std::vector<Array> f = factors(a, kind_, upper_);
      const Array& v = f[1];
      Array p = mm(mT(v), mm(unfold(da, upper_), v));  // V^T dS V
      Array dw = diagonal_of(p);
      if (kind_ == Decomposition::eigvalsh) return {dw};
      return {dw, mm(v, mul(gaps_inverse(f[0]), p))};
    }
    case Decomposition::svd:
    case Decomposition::svd_values: {
      std::vector<Array> f = factors(a, kind_, upper_);
      Svd d = split_svd(f[0], f[1], f[2]);
      Array p = mm(mT(d.u1), mm(da, d.v1));  // U1^T dA V1
      Array ds = diagonal_of(p);
      if (kind_ == Decomposition::svd_values) return {ds};
      Array f2 = gaps_inverse(mul(d.s, d.s));
      Array sinv = div(lit(1.0, d.s), d.s);
      Array su = add(scale_columns(p, d.s), scale_rows(mT(p), d.s));  // dP S + S dP^T
      Array sv = add(scale_rows(p, d.s), scale_columns(mT(p), d.s));  // S dP + dP^T S
      Array au = scale_columns(mm(da, d.v1), sinv), av = scale_columns(mm(mT(da), d.u1), sinv);
      Array du = add(mm(d.u1, mul(f2, su)), sub(au, mm(d.u1, mm(mT(d.u1), au))));
      Array dv = add(mm(d.v1, mul(f2, sv)), sub(av, mm(d.v1, mm(mT(d.v1), av))));
      // The extra bases turn least: dU2 = -U1 S^-1 V1^T dA^T U2, dV2 = -V1 S^-1 U1^T dA V2.
      if (d.tall) du = concatenate({du, neg(mm(d.u1, mm(mT(au), d.u2)))}, -1, st);
      if (d.wide) dv = concatenate({dv, neg(mm(d.v1, mm(mT(av), d.v2)))}, -1, st);
      return {du, ds, mT(dv)};
    }
    case Decomposition::qr: {
      if (a.shape(-2) < a.shape(-1)) throw OpError(name(), "derivatives are defined for M >= N only");
      std::vector<Array> f = factors(a, kind_, upper_);
      const Array &q = f[0], &r = f[1];
      Array dar = mT(linalg::triangular_solve(r, mT(da), true, true, false, st));  // dA R^-1
      Array c = mm(mT(q), dar);
      Array low = tril(c, -1, st);
      Array x = sub(c, sub(low, mT(low)));  // C - Omega, upper triangular
      return {sub(dar, mm(q, x)), mm(x, r)};
    }
    default: break;
  }
  return Primitive::jvp(primals, tangents, argnums, outputs);
}

}  // namespace nuvec
