// Differentiation rules of the row normalizations, in float32 ops (cast back to each input's
// dtype). With r = 1/sqrt(mean(x^2) + eps) (RMS) or xhat = (x - mean) * r (layer):
//   rms:   dx = r*gw - x * r^3 * mean(gw * x),      dw = sum(g * x * r)
//   layer: dx = r*(gw - mean(gw) - xhat*mean(gw * xhat)), dw = sum(g * xhat), db = sum(g)
// where gw = g * w. add_rms differentiates through h = x + residual (its second output).
#include "core/ops/fast_norms.h"
#include "core/primitives/fast_norms.h"
#include "core/primitives/grad_util.h"

namespace nuvec {
using namespace grad;

namespace {

Array f32(const Array& a) { return astype(a, Dtype::float32, a.stream()); }
Array row_mean(const Array& a) { return mean(a, std::vector<int>{-1}, true, a.stream()); }
// Sum over every axis but the last: a weight's or bias's gradient.
Array lead_sum(const Array& a) {
  std::vector<int> axes;
  for (int i = 0; i + 1 < a.ndim(); ++i) axes.push_back(i);
  return axes.empty() ? a : sum(a, axes, false, a.stream());
}

// The normalized row (x*r for RMS, xhat for layer) and r, in float32.
struct Normed { Array xn, r; };
Normed normalize(NormKind kind, Array x, float eps) {
  if (kind == NormKind::layer) x = sub(x, row_mean(x));
  Array r = unary(UnaryOp::rsqrt, add(row_mean(mul(x, x)), lit(eps, x)), x.stream());
  return {mul(x, r), r};
}

// The normalization's input: x, or h = x + residual (add_rms's second output).
Array norm_input(const RowNorm& p, const std::vector<Array>& primals, const std::vector<Array>& outputs) {
  return f32(p.kind() == NormKind::add_rms ? outputs[1] : primals[0]);
}

}  // namespace

std::vector<Array> RowNorm::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Array x = norm_input(*this, primals, outputs), g = f32(cotangents[0]);
  auto [xn, r] = normalize(kind_, x, eps_);
  Array gw = weighted_ ? mul(g, primals[size_t(weight_index())]) : g;
  Array dx = kind_ == NormKind::layer ? mul(r, sub(sub(gw, row_mean(gw)), mul(xn, row_mean(mul(gw, xn)))))
                                      : sub(mul(r, gw), mul(mul(xn, mul(r, r)), row_mean(mul(gw, x))));
  if (kind_ == NormKind::add_rms) dx = add(dx, f32(cotangents[1]));
  std::vector<Array> out;
  for (int a : argnums) {
    const Array& p = primals[size_t(a)];
    if (a == 0 || (kind_ == NormKind::add_rms && a == 1))
      out.push_back(astype(dx, p.dtype(), p.stream()));
    else if (weighted_ && a == weight_index())
      out.push_back(lead_sum(mul(g, xn)));
    else
      out.push_back(lead_sum(g));
  }
  return out;
}

// dy = w * (r*dx - xn * r * mean(xn * dx)) + dw * xn + db, dx centred first for layer norm.
std::vector<Array> RowNorm::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Array x = norm_input(*this, primals, outputs);
  auto [xn, r] = normalize(kind_, x, eps_);
  std::optional<Array> dx, dw, db;
  auto plus = [](std::optional<Array>& acc, const Array& t) { acc = acc ? add(*acc, t) : t; };
  for (size_t k = 0; k < argnums.size(); ++k) {
    int a = argnums[k];
    Array t = f32(tangents[k]);
    if (a == 0 || (kind_ == NormKind::add_rms && a == 1))
      plus(dx, t);
    else if (weighted_ && a == weight_index())
      dw = t;
    else
      db = t;
  }
  std::optional<Array> dy;
  std::vector<Array> out;
  if (dx) {
    Array c = kind_ == NormKind::layer ? sub(*dx, row_mean(*dx)) : *dx;
    dy = mul(r, sub(c, mul(xn, row_mean(mul(xn, c)))));
    if (weighted_) dy = mul(*dy, primals[size_t(weight_index())]);
  }
  if (dw) plus(dy, mul(xn, *dw));
  if (db) plus(dy, broadcast_to(*db, x.shape(), x.stream()));
  const Array& y = outputs[0];
  out.push_back(astype(*dy, y.dtype(), y.stream()));
  if (kind_ == NormKind::add_rms) {
    Array dh = dx ? *dx : zeros_like(outputs[1]);
    out.push_back(astype(dh, outputs[1].dtype(), outputs[1].stream()));
  }
  return out;
}

}  // namespace nuvec
