// Differentiation rules of the gathered and segmented products (indices get no gradient). Both
// are linear in each operand: the tangent rules apply the product to one tangent at a time, and
// the cotangents are products again (gather_mm's through its grad_b kind and a scatter-add in
// index order, so they are deterministic).
#include "core/ops/gathered.h"
#include "core/primitives/gathered.h"
#include "core/primitives/grad_util.h"

namespace nuvec {
using namespace grad;

namespace {
// The same primitive on new operands (a tangent in place of one input).
Array again(Primitive& p, const Array& like, std::vector<Array> inputs) {
  return Array::lazy(like.shape(), like.dtype(), p.shared_from_this(), std::move(inputs), like.stream());
}

// The tangent of a product linear in inputs 0 and 1: the product with each tangent in turn.
Array bilinear_tangent(Primitive& p, const std::vector<Array>& primals, const std::vector<Array>& tangents,
                       const std::vector<int>& argnums, const Array& out) {
  std::optional<Array> t;
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] > 1) continue;
    std::vector<Array> in = primals;
    in[argnums[i]] = astype(tangents[i], out.dtype(), out.stream());
    Array term = again(p, out, in);
    t = t ? add(*t, term) : term;
  }
  return t ? *t : zeros_like(out);
}
}  // namespace

std::vector<Array> GatherMM::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &x = primals[0], &y = primals[1], &li = primals[2], &ri = primals[3];
  const Array& c = cotangents[0];
  Stream s = c.stream();
  std::vector<Array> out;
  for (int k : argnums) {
    if (k > 1) {
      out.push_back(zeros_like(primals[k]));
    } else if (kind_ == Kind::product) {  // out[i] = x[li] @ y[ri]
      out.push_back(k == 0 ? gather_mm_grad_a(c, y, li, ri, x.shape(), s)
                           : gather_mm_grad_b(x, c, li, ri, y.shape(), s));
    } else {  // out[e] = sum of x[li]^T @ y[i] over ri = e
      out.push_back(k == 0 ? gather_mm_grad_a(y, c, li, ri, x.shape(), s)
                           : again(*std::make_shared<GatherMM>(Kind::product), y, {x, c, li, ri}));
    }
  }
  return out;
}

std::vector<Array> GatherMM::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  return {bilinear_tangent(*this, primals, tangents, argnums, outputs[0])};
}

namespace {
// Column j of the segments (S..., 2): (S..., 1).
Array bound(const Array& segments, int64_t j, Stream s) {
  Shape start(segments.ndim(), 0), stop = segments.shape();
  start.back() = j, stop.back() = j + 1;
  return slice(segments, start, stop, Shape(segments.ndim(), 1), s);
}

// (S..., K) true where k lies in its segment [s0, s1).
Array segment_mask(const Array& segments, int64_t k, Stream s) {
  Array lo = bound(segments, 0, s), hi = bound(segments, 1, s);
  Array ks = arange(0, double(k), 1, Dtype::uint32, s);
  return binary(BinaryOp::logical_and, binary(BinaryOp::greater_equal, ks, lo, s), binary(BinaryOp::less, ks, hi, s),
                s);
}
}  // namespace

std::vector<Array> SegmentedMM::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &x = primals[0], &y = primals[1], &seg = primals[2];
  const Array& c = cotangents[0];  // (S..., M, N)
  Stream s = c.stream();
  int lead = c.ndim() - 2;
  std::vector<int> seg_axes;
  for (int d = 0; d < lead; ++d) seg_axes.push_back(d);
  Array mask = segment_mask(seg, x.shape(1), s);  // (S..., K)
  Array zero = scalar_array(int64_t(0), c.dtype());
  std::vector<Array> out;
  for (int k : argnums) {
    if (k == 2) {
      out.push_back(zeros_like(seg));
      continue;
    }
    // a: each segment's (c @ b^T) on its columns; b: each segment's (a^T @ c) on its rows.
    Array part = k == 0 ? where(expand_dims(mask, {-2}, s), matmul(c, swapaxes(y, 0, 1, s), s), zero, s)
                        : where(expand_dims(mask, {-1}, s), matmul(swapaxes(x, 0, 1, s), c, s), zero, s);
    out.push_back(seg_axes.empty() ? part : sum(part, seg_axes, false, s));
  }
  return out;
}

std::vector<Array> SegmentedMM::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  return {bilinear_tangent(*this, primals, tangents, argnums, outputs[0])};
}

}  // namespace nuvec
