// median and searchsorted, composed of sorts and element-wise ops.
#include "core/ops/sort_composed.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/ops.h"

namespace nuvec {

Array median(const Array& a, const std::optional<std::vector<int>>& axes_in, bool keepdims, Stream s) {
  int nd = a.ndim();
  std::vector<int> axes;
  for (int i = 0; i < nd; ++i) axes.push_back(i);
  if (axes_in) {
    axes.clear();
    for (int ax : *axes_in) {
      int n = normalize_axis(ax, nd, "median");
      if (std::find(axes.begin(), axes.end(), n) != axes.end()) throw OpError("median", "repeated axis");
      axes.push_back(n);
    }
  }
  std::vector<int> perm;
  Shape rest;
  for (int d = 0; d < nd; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d), rest.push_back(a.shape(d));
  int64_t n = 1;
  for (int ax : axes) n *= a.shape(ax);
  if (n == 0) throw OpError("median", "cannot take the median along an empty axis");
  perm.insert(perm.end(), axes.begin(), axes.end());
  Array x = is_inexact(a.dtype()) ? a : astype(a, Dtype::float32, s);
  Shape rows = rest;
  rows.push_back(n);
  x = reshape(transpose(x, perm, s), rows, s);
  Array sorted = sort(x, -1, s);
  // The element at position i of the last axis, that axis dropped.
  auto at = [&](int64_t i) {
    Shape start(rows.size(), 0), stop = rows, step(rows.size(), 1);
    start.back() = i, stop.back() = i + 1;
    return reshape(slice(sorted, start, stop, step, s), rest, s);
  };
  Dtype d = x.dtype();
  Array m = binary(BinaryOp::multiply, binary(BinaryOp::add, at((n - 1) / 2), at(n / 2), s),
                   weak_scalar(0.5, d, "median"), s);
  Array has_nan = any(unary(UnaryOp::isnan, x, s), std::vector<int>{int(rows.size()) - 1}, false, s);
  m = where(has_nan, weak_scalar(double(NAN), d, "median"), m, s);
  if (!keepdims) return m;
  std::sort(axes.begin(), axes.end());
  return expand_dims(m, axes, s);
}

Array searchsorted(const Array& sorted, const Array& values, bool right, Stream s) {
  if (sorted.ndim() != 1)
    throw OpError("searchsorted", "the sorted sequence must be 1-D, not " + std::to_string(sorted.ndim()) + "-D");
  // One stable sort of both together: a value's position there, less its position among the
  // values, counts the elements before it (ties put the values first for left, last for right).
  Array flat = reshape(values, {-1}, s);
  int64_t m = flat.size(), k = sorted.size();
  Array both = right ? concatenate({sorted, flat}, 0, s) : concatenate({flat, sorted}, 0, s);
  Array rank = argsort(argsort(both, 0, s), 0, s);
  Array mine = right ? slice(rank, {k}, {k + m}, {1}, s) : slice(rank, {0}, {m}, {1}, s);
  Array among = argsort(argsort(flat, 0, s), 0, s);
  return reshape(binary(BinaryOp::subtract, mine, among, s), values.shape(), s);
}

}  // namespace nuvec
