// vmap rules of the reduction family: the reduced axes shift past the batch axis, which stays
// where it is (no copy), except for the row-wise fused ops when it is their row.
#include <algorithm>

#include "core/primitives/reduce.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

namespace {
// Where the batch axis lands in the output of a reduction over `reduced` (one example's axes)
// of an array batched at `b`: behind the kept axes before it, or unmoved with keepdims.
int reduced_batch_axis(const std::vector<int>& reduced, int b, bool keepdims) {
  if (keepdims) return b;
  return b - int(std::count_if(reduced.begin(), reduced.end(), [&](int a) { return a < b; }));
}
}  // namespace

Result Reduce::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  const Array& out = outputs[0];
  int b = axes[0];
  std::vector<int> reduced;
  for (int a : axes_) reduced.push_back(shifted(a, b));
  int ob = reduced_batch_axis(axes_, b, out.ndim() == x.ndim() - 1);
  return {{Array::lazy(with_batch(out.shape(), x.shape(b), ob), out.dtype(), std::make_shared<Reduce>(op_, reduced),
                       {x}, x.stream())},
          {ob}};
}

Result ArgReduce::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  const Array& out = outputs[0];
  int b = axes[0];
  int ob = reduced_batch_axis({axis_}, b, out.ndim() == x.ndim() - 1);
  return {{Array::lazy(with_batch(out.shape(), x.shape(b), ob), out.dtype(),
                       std::make_shared<ArgReduce>(is_max_, shifted(axis_, b)), {x}, x.stream())},
          {ob}};
}

Result Count::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>& outputs) {
  // Every example has the same count: over the shifted axes of the batched input, unbatched.
  std::vector<int> moved;
  for (int a : axes_) moved.push_back(shifted(a, axes[0]));
  const Array& out = outputs[0];
  return {{Array::lazy({}, out.dtype(), std::make_shared<Count>(moved, ddof_, dtype_), {inputs[0]}, out.stream())},
          {-1}};
}

namespace {
// x with its batch axis moved off the last axis (the row the fused ops work on), and where it is.
std::pair<Array, int> off_last(const Array& x, int b) {
  if (b == x.ndim() - 1) return {to_front(x, b), 0};
  return {x, b};
}
}  // namespace

Result Softmax::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                     const std::vector<Array>& outputs) {
  auto [x, b] = off_last(inputs[0], axes[0]);
  return {{remake(*this, x.shape(), outputs[0], {x})}, {b}};
}

Result LogSumExp::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  auto [x, b] = off_last(inputs[0], axes[0]);
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  return {{remake(*this, shape, outputs[0], {x})}, {b}};
}

}  // namespace nuvec
