// Differentiation rules of the convolution: both gradients are convolutions again (docs/design.md,
// "Convolutions", derives the paddings); it is linear in each argument, so the jvp convolves the
// tangents.
#include <algorithm>
#include <numeric>

#include "core/ops.h"
#include "core/ops/conv.h"
#include "core/primitives/conv.h"
#include "core/primitives/grad_util.h"

namespace nuvec {
using namespace grad;

namespace {

// (G * A, *mid, B) -> (G * B, *mid, A): swaps the first and last axes within each of G groups.
Array group_swap(const Array& a, int64_t groups, Stream s) {
  int nd = a.ndim();
  Shape split{groups, a.shape(0) / groups};
  split.insert(split.end(), a.shape().begin() + 1, a.shape().end());
  std::vector<int> perm{0, nd};  // (G, A, *mid, B) -> (G, B, *mid, A)
  for (int i = 2; i < nd; ++i) perm.push_back(i);
  perm.push_back(1);
  Shape out{a.shape(-1) * groups};
  out.insert(out.end(), a.shape().begin() + 1, a.shape().end() - 1);
  out.push_back(a.shape(0) / groups);
  return reshape(transpose(reshape(a, split, s), perm, s), out, s);
}

// `shape` with its last axis (the channels) set to c.
Shape with_channels(Shape shape, int64_t c) {
  shape.back() = c;
  return shape;
}

// Gradient with respect to the input: the cotangent, dilated by the stride, correlated with the
// group-transposed, flipped kernel at steps of the input dilation.
Array input_grad(const ConvParams& p, const Array& x, const Array& w, const Array& g) {
  Stream s = g.stream();
  int dims = x.ndim() - 2;
  ConvParams q{p.input_dilation, Shape(dims), Shape(dims), p.kernel_dilation, p.stride, p.groups, !p.flip};
  for (int i = 0; i < dims; ++i) {
    int64_t span = (w.shape(i + 1) - 1) * p.kernel_dilation[i];
    q.pad_lo[i] = span - p.pad_lo[i];
    q.pad_hi[i] = (x.shape(i + 1) - 1) * p.input_dilation[i] + span - q.pad_lo[i] - (g.shape(i + 1) - 1) * p.stride[i];
  }
  return convolution(g, group_swap(w, p.groups, s), std::move(q), s);
}

// The weight gradient of a depthwise convolution (one channel per group, no input dilation): per
// tap, the cotangent times the input window it saw, summed over batch and positions. As a
// grouped convolution it would fill one of each register tile's columns.
Array depthwise_weight_grad(const ConvParams& p, const Array& x, const Array& w, const Array& g) {
  Stream s = g.stream();
  int dims = x.ndim() - 2;
  std::vector<std::pair<int64_t, int64_t>> widths{{0, 0}};
  for (int i = 0; i < dims; ++i)
    widths.emplace_back(std::max<int64_t>(p.pad_lo[i], 0), std::max<int64_t>(p.pad_hi[i], 0));
  widths.emplace_back(0, 0);
  Array xp = pad(x, widths, "constant", scalar_array(int64_t(0), x.dtype()), s);
  Shape crop(size_t(x.ndim()), 0);  // where the negative padding starts the padded input
  for (int i = 0; i < dims; ++i) crop[i + 1] = std::max<int64_t>(-p.pad_lo[i], 0);
  std::vector<int> reduce_axes(size_t(dims + 1));
  std::iota(reduce_axes.begin(), reduce_axes.end(), 0);
  std::vector<Array> taps;
  Shape k(w.shape().begin() + 1, w.shape().end() - 1), t(size_t(dims), 0);
  for (int64_t index = 0; index < shape_size(k); ++index) {
    Shape start = crop, stop = xp.shape(), step(size_t(x.ndim()), 1);
    for (int i = 0; i < dims; ++i) {
      start[i + 1] += t[i] * p.kernel_dilation[i];
      stop[i + 1] = start[i + 1] + (g.shape(i + 1) - 1) * p.stride[i] + 1;
      step[i + 1] = p.stride[i];
    }
    taps.push_back(sum(mul(g, slice(xp, start, stop, step, s)), reduce_axes, false, s));
    for (int i = dims - 1; i >= 0 && ++t[i] == k[i]; --i) t[i] = 0;  // the next tap, row-major
  }
  Shape out{w.shape(0)};
  out.insert(out.end(), k.begin(), k.end());
  out.push_back(1);
  Array r = reshape(transpose(stack(taps, 0, s), {1, 0}, s), out, s);
  if (!p.flip) return r;
  std::vector<int> spatial(dims);
  std::iota(spatial.begin(), spatial.end(), 1);
  return flip(r, spatial, s);
}

// Gradient with respect to the weight: the input's channels become the batch and its batch the
// channels, correlated with the cotangent as the kernel (dilated by the stride); the result's
// taps are the kernel's, at steps of its dilation.
Array weight_grad(const ConvParams& p, const Array& x, const Array& w, const Array& g) {
  auto all = [](const Shape& v, int64_t value) {
    return std::all_of(v.begin(), v.end(), [&](int64_t a) { return a == value; });
  };
  if (w.shape(-1) == 1 && w.shape(0) == p.groups && p.groups > 1 && all(p.input_dilation, 1))
    return depthwise_weight_grad(p, x, w, g);
  Stream s = g.stream();
  bool one_to_one = w.size() == w.shape(0) * w.shape(-1) && all(p.stride, 1) && all(p.pad_lo, 0) &&
                    all(p.input_dilation, 1) && g.shape() == with_channels(x.shape(), w.shape(0));
  if (one_to_one && p.groups == 1) {
    // A 1x1 convolution that keeps every position: the cotangent's rows against the input's, one
    // product with no copy of the input.
    Array gm = reshape(g, {-1, w.shape(0)}, s), xm = reshape(x, {-1, x.shape(-1)}, s);
    return reshape(matmul(swapaxes(gm, 0, 1, s), xm, s), w.shape(), s);
  }
  int dims = x.ndim() - 2, nd = x.ndim();
  int64_t n = x.shape(0), cig = w.shape(-1);
  // x (N, *S, G * Cig) -> (Cig, *S, G * N), copied: measured faster than a view the kernel
  // reads through strides (rows of one input channel stay close in memory).
  Shape split(x.shape().begin(), x.shape().end() - 1);
  split.insert(split.end(), {p.groups, cig});
  std::vector<int> perm{nd};
  for (int i = 1; i < nd - 1; ++i) perm.push_back(i);
  perm.insert(perm.end(), {nd - 1, 0});
  Shape xs{cig};
  xs.insert(xs.end(), x.shape().begin() + 1, x.shape().end() - 1);
  xs.push_back(p.groups * n);
  Array xt = reshape(contiguous(transpose(reshape(x, split, s), perm, s), s), xs, s);
  Array gt = swapaxes(g, 0, -1, s);  // (C_out, *O, N): a view, packed through its strides
  ConvParams q{p.kernel_dilation, p.pad_lo, Shape(dims), p.stride, p.input_dilation, p.groups, false};
  for (int i = 0; i < dims; ++i)
    q.pad_hi[i] = (w.shape(i + 1) - 1) * p.kernel_dilation[i] + (g.shape(i + 1) - 1) * p.stride[i] -
                  (x.shape(i + 1) - 1) * p.input_dilation[i] - p.pad_lo[i];
  Array r = swapaxes(convolution(xt, gt, std::move(q), s), 0, -1, s);  // (C_out, *K, Cig)
  if (!p.flip) return r;
  std::vector<int> spatial(dims);
  std::iota(spatial.begin(), spatial.end(), 1);
  return flip(r, spatial, s);
}

}  // namespace

std::vector<Array> Convolution::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array &x = primals[0], &w = primals[1], &g = cotangents[0];
  std::vector<Array> out;
  for (int k : argnums) {
    const Array& target = k == 0 ? x : w;
    if (x.size() == 0 || w.size() == 0 || g.size() == 0)
      out.push_back(zeros_like(target));
    else
      out.push_back(k == 0 ? input_grad(p_, x, w, g) : weight_grad(p_, x, w, g));
  }
  return out;
}

std::vector<Array> Convolution::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::optional<Array> t;
  Stream s = outputs[0].stream();
  for (size_t i = 0; i < argnums.size(); ++i) {
    Array term =
        argnums[i] == 0 ? convolution(tangents[i], primals[1], p_, s) : convolution(primals[0], tangents[i], p_, s);
    t = t ? add(*t, term) : term;
  }
  return {*t};
}

}  // namespace nuvec
