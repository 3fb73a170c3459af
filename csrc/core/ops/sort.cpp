// Sorting ops: sort, argsort, partition, argpartition, and topk composed from partition.
#include <cstdint>
#include <limits>
#include <string>

#include "core/ops.h"
#include "core/ops/sort.h"

#include "core/primitives/sort.h"

namespace nuvec {

namespace {

// Indices are uint32, as MLX's.
void check_indexable(const Array& x, int axis, const char* op) {
  if (x.shape(axis) > int64_t(std::numeric_limits<uint32_t>::max()))
    throw OpError(op, "the axis is too long for uint32 indices (" + std::to_string(x.shape(axis)) + " elements)");
}

Array sort_along(const Array& a, std::optional<int> axis, bool indices, const char* op, Stream s) {
  auto [x, ax] = along_axis(a, axis, op, s);
  check_indexable(x, ax, op);
  return Array::lazy(x.shape(), indices ? Dtype::uint32 : x.dtype(), std::make_shared<Sort>(ax, indices), {x}, s);
}

Array partition_along(const Array& a, int64_t kth, std::optional<int> axis, bool indices, const char* op, Stream s) {
  auto [x, ax] = along_axis(a, axis, op, s);
  check_indexable(x, ax, op);
  int64_t n = x.shape(ax);
  if (kth < -n || kth >= n)
    throw OpError(op, "kth " + std::to_string(kth) + " is out of range for an axis of size " + std::to_string(n));
  if (kth < 0) kth += n;
  return Array::lazy(x.shape(), indices ? Dtype::uint32 : x.dtype(), std::make_shared<Partition>(ax, kth, indices), {x},
                     s);
}

}  // namespace

Array sort(const Array& a, std::optional<int> axis, Stream s) { return sort_along(a, axis, false, "sort", s); }
Array argsort(const Array& a, std::optional<int> axis, Stream s) { return sort_along(a, axis, true, "argsort", s); }

Array partition(const Array& a, int64_t kth, std::optional<int> axis, Stream s) {
  return partition_along(a, kth, axis, false, "partition", s);
}
Array argpartition(const Array& a, int64_t kth, std::optional<int> axis, Stream s) {
  return partition_along(a, kth, axis, true, "argpartition", s);
}

Array topk(const Array& a, int64_t k, std::optional<int> axis, Stream s) {
  auto [x, ax] = along_axis(a, axis, "topk", s);
  int64_t n = x.shape(ax);
  if (k < 0 || k > n)
    throw OpError("topk", "k " + std::to_string(k) + " is out of range for an axis of size " + std::to_string(n));
  // The last k after partitioning at n - k (no partition needed for k = 0).
  Array p = k == 0 ? x : partition_along(x, n - k, ax, false, "topk", s);
  Shape start(x.ndim(), 0), stop = x.shape(), step(x.ndim(), 1);
  start[ax] = n - k;
  return slice(p, start, stop, step, s);
}

}  // namespace nuvec
