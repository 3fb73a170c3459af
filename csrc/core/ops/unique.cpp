// One stable argsort: a run of equal sorted values is one element; the counts are a scatter-add
// of the runs, and their exclusive cumulative sum points at each run's first (lowest) index.
#include "core/ops/unique.h"

#include <algorithm>

#include "core/errors.h"
#include "core/ops.h"

namespace nuvec {

namespace {

Array zeros(const Shape& shape, Dtype dtype, Stream s) { return full(shape, scalar_array(int64_t(0)), dtype, s); }

}  // namespace

std::vector<Array> unique(const Array& a, int64_t size, const std::optional<Array>& fill_value, Stream s) {
  if (size < 0) throw OpError("unique", "received negative size " + std::to_string(size));
  std::optional<Array> fill;
  if (fill_value) {
    if (fill_value->size() != 1)
      throw OpError("unique", "fill value must have one element, not shape " + shape_str(fill_value->shape()));
    fill = astype(reshape(*fill_value, {}, s), a.dtype(), s);
  }
  const int64_t n = a.size();
  if (n == 0) {
    if (size && !fill) throw OpError("unique", "a fill value is required for an empty input with a non-zero size");
    return {full({size}, fill ? *fill : scalar_array(int64_t(0)), a.dtype(), s), zeros({size}, Dtype::uint32, s),
            zeros(a.shape(), Dtype::uint32, s), zeros({size}, Dtype::int32, s)};
  }
  auto B = [&](BinaryOp op, const Array& x, const Array& y) { return binary(op, x, y, s); };
  auto I32 = [](int64_t v) { return scalar_array(v, Dtype::int32); };
  auto cumsum = [&](const Array& x) { return scan(ScanOp::sum, x, 0, false, true, std::nullopt, s); };
  const Array flat = reshape(a, {-1}, s);
  const Array order = argsort(flat, 0, s);
  const Array sorted = take(flat, order, std::nullopt, s);
  const Array changed = B(BinaryOp::not_equal, slice(sorted, {1}, {n}, {1}, s), slice(sorted, {0}, {n - 1}, {1}, s));
  const Array first = concatenate({full({1}, scalar_array(true), Dtype::bool_, s), changed}, 0, s);
  const Array group = B(BinaryOp::subtract, cumsum(astype(first, Dtype::int32, s)), I32(1));
  Array counts = put_along_axis(zeros({size + 1}, Dtype::int32, s), B(BinaryOp::minimum, group, I32(size)),
                                full({n}, I32(1), Dtype::int32, s), 0, s, ScatterOp::add);
  counts = slice(counts, {0}, {size}, {1}, s);
  const Array present = B(BinaryOp::greater, counts, I32(0));
  const Array start = where(present, B(BinaryOp::subtract, cumsum(counts), counts), I32(0), s);
  const Array index = astype(take(order, start, std::nullopt, s), Dtype::uint32, s);
  Array values = take(sorted, start, std::nullopt, s);
  if (fill) values = where(present, values, *fill, s);
  const Array inv = astype(B(BinaryOp::minimum, group, I32(std::max<int64_t>(size - 1, 0))), Dtype::uint32, s);
  const Array inverse = put_along_axis(zeros({n}, Dtype::uint32, s), order, inv, 0, s);
  return {values, index, reshape(inverse, a.shape(), s), counts};
}

}  // namespace nuvec
