// Differentiation rules of the layout family: each is linear, so its jvp applies the same view
// to the tangent, and its vjp puts the cotangent back where the view read it.
#include <algorithm>
#include <numeric>

#include "core/primitives/grad_util.h"
#include "core/primitives/shape.h"

namespace nuvec {
using namespace grad;

namespace {
// The same primitive applied to the tangent.
std::vector<Array> same_view(Primitive& p, const Array& t, const Array& out) {
  return {Array::lazy(out.shape(), out.dtype(), p.shared_from_this(), {astype(t, out.dtype(), out.stream())},
                      out.stream())};
}

// An index array spreading `values` (1-D) along axis `axis` of a rank-`ndim` grid.
Array along(const Array& values, int axis, int ndim) {
  Shape shape(ndim, 1);
  shape[axis] = values.size();
  return reshape(values, shape, values.stream());
}

Array range(int64_t start, int64_t step, int64_t n, Stream s) {
  return arange(double(start), double(start + n * step), double(step), Dtype::int64, s);
}

// The window's stop for a SliceUpdate's or a Slice's window of shape `window`.
Shape window_stop(const Shape& start, const Shape& step, const Shape& window) {
  Shape stop(start.size());
  for (size_t d = 0; d < start.size(); ++d) stop[d] = start[d] + (window[d] - 1) * step[d] + 1;
  return stop;
}

std::vector<int> every_axis(int n) {
  std::vector<int> axes(n);
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}
}  // namespace

std::vector<Array> Slice::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                              const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  Stream s = x.stream();
  if (std::all_of(step_.begin(), step_.end(), [](int64_t k) { return k > 0; }))
    return {
        slice_update(zeros_like(x), cotangents[0], start_, window_stop(start_, step_, outputs[0].shape()), step_, s)};
  std::vector<Array> idx;
  for (int d = 0; d < x.ndim(); ++d)
    idx.push_back(along(range(start_[d], step_[d], outputs[0].shape(d), s), d, x.ndim()));
  return {scatter(zeros_like(x), idx, cotangents[0], every_axis(x.ndim()), ScatterOp::add, s)};
}
std::vector<Array> Slice::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                              const std::vector<Array>& outputs) {
  return same_view(*this, tangents[0], outputs[0]);
}

// y = x with the window replaced by u: x' = g with the window zeroed, u' = g's window.
std::vector<Array> SliceUpdate::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array& g = cotangents[0];
  Stream s = g.stream();
  Shape stop = window_stop(start_, step_, primals[1].shape());
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 0 ? slice_update(g, zeros_like(primals[1]), start_, stop, step_, s)
                         : slice(g, start_, stop, step_, s));
  return out;
}
std::vector<Array> SliceUpdate::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  Array tx = zeros_like(outputs[0]), tu = zeros_like(primals[1]);
  for (size_t i = 0; i < argnums.size(); ++i) (argnums[i] == 0 ? tx : tu) = tangents[i];
  return {slice_update(tx, tu, start_, window_stop(start_, step_, primals[1].shape()), step_, s)};
}

// As SliceUpdate's, at the same start; the start (integers) has a zero cotangent.
std::vector<Array> DynamicSliceUpdate::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                           const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &g = cotangents[0], &u = primals[1], &start = primals[2];
  Stream s = g.stream();
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 0   ? slice_update_dynamic(g, zeros_like(u), start, axes_, s)
                  : k == 1 ? slice_dynamic(g, start, axes_, u.shape(), s)
                           : zeros_like(start));
  return out;
}
std::vector<Array> DynamicSliceUpdate::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                           const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Stream s = outputs[0].stream();
  Array tx = zeros_like(outputs[0]), tu = zeros_like(primals[1]);
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] < 2) (argnums[i] == 0 ? tx : tu) = tangents[i];
  return {slice_update_dynamic(tx, tu, primals[2], axes_, s)};
}

std::vector<Array> Transpose::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  std::vector<int> inverse(perm_.size());
  for (size_t i = 0; i < perm_.size(); ++i) inverse[perm_[i]] = int(i);
  return {transpose(cotangents[0], inverse, primals[0].stream())};
}
std::vector<Array> Transpose::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  return same_view(*this, tangents[0], outputs[0]);
}

std::vector<Array> Broadcast::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  return {unbroadcast(cotangents[0], primals[0].shape(), primals[0].dtype())};
}
std::vector<Array> Broadcast::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  return same_view(*this, tangents[0], outputs[0]);
}

std::vector<Array> BroadcastLike::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                      const std::vector<int>& argnums, const std::vector<Array>&) {
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(k == 0 ? unbroadcast(cotangents[0], primals[0].shape(), primals[0].dtype()) : zeros_like(primals[1]));
  return out;
}
std::vector<Array> BroadcastLike::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                      const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] == 0) return {broadcast_like(tangents[i], primals[1], outputs[0].stream())};
  return {zeros_like(outputs[0])};  // like's values do not reach the output
}

std::vector<Array> Reshape::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>&, const std::vector<Array>&) {
  return {reshape(cotangents[0], primals[0].shape(), primals[0].stream())};
}
std::vector<Array> Reshape::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                const std::vector<Array>& outputs) {
  return same_view(*this, tangents[0], outputs[0]);
}

std::vector<Array> AsStrided::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  Stream s = x.stream();
  const Array& out = outputs[0];
  // The flat position each output element read: offset + sum_d i_d * stride_d.
  Array flat = scalar_array(offset_, Dtype::int64);
  for (int d = 0; d < out.ndim(); ++d) flat = add(flat, along(range(0, strides_[d], out.shape(d), s), d, out.ndim()));
  Array g = scatter(zeros_like(reshape(x, {-1}, s)), {flat}, cotangents[0], {0}, ScatterOp::add, s);
  return {reshape(g, x.shape(), s)};
}
std::vector<Array> AsStrided::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  // The view reads row-major data: the tangent must be laid out the same way.
  return same_view(*this, contiguous(tangents[0], outputs[0].stream()), outputs[0]);
}

std::vector<Array> Diagonal::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>&, const std::vector<Array>& outputs) {
  const Array& x = primals[0];
  Stream s = x.stream();
  int rank = outputs[0].ndim();
  int64_t len = outputs[0].shape(rank - 1);
  std::vector<Array> idx;
  int other = 0;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == axis1_)
      idx.push_back(along(range(offset_ < 0 ? -offset_ : 0, 1, len, s), rank - 1, rank));
    else if (d == axis2_)
      idx.push_back(along(range(offset_ > 0 ? offset_ : 0, 1, len, s), rank - 1, rank));
    else
      idx.push_back(along(range(0, 1, x.shape(d), s), other++, rank));
  }
  return {scatter(zeros_like(x), idx, cotangents[0], every_axis(x.ndim()), ScatterOp::add, s)};
}
std::vector<Array> Diagonal::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                 const std::vector<Array>& outputs) {
  return same_view(*this, tangents[0], outputs[0]);
}

std::vector<Array> Contiguous::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                   const std::vector<int>&, const std::vector<Array>&) {
  return {cotangents[0]};
}
std::vector<Array> Contiguous::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                   const std::vector<int>&, const std::vector<Array>&) {
  return {tangents[0]};
}

}  // namespace nuvec
