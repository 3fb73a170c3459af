// Differentiation rules of sort and partition: the values are a permutation of the input, so
// cotangents go back through the same permutation; the indices get no gradient.
#include "core/ops.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/sort.h"

namespace nuvec {
using namespace grad;

namespace {
Array permutation(const Array& x, int axis, std::optional<int64_t> kth) {
  return kth ? argpartition(x, *kth, axis, x.stream()) : argsort(x, axis, x.stream());
}
Array values_vjp(const Array& x, const Array& g, int axis, std::optional<int64_t> kth) {
  Array idx = permutation(x, axis, kth);
  return put_along_axis(zeros_like(x), idx, astype(g, x.dtype(), x.stream()), axis, x.stream());
}
Array values_jvp(const Array& x, const Array& t, int axis, std::optional<int64_t> kth) {
  return take_along_axis(astype(t, x.dtype(), x.stream()), permutation(x, axis, kth), axis, x.stream());
}
}  // namespace

std::vector<Array> Sort::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                             const std::vector<int>&, const std::vector<Array>&) {
  if (indices_) return {zeros_like(primals[0])};
  return {values_vjp(primals[0], cotangents[0], axis_, std::nullopt)};
}
std::vector<Array> Sort::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                             const std::vector<int>&, const std::vector<Array>& outputs) {
  if (indices_) return {zeros_like(outputs[0])};
  return {values_jvp(primals[0], tangents[0], axis_, std::nullopt)};
}

std::vector<Array> Partition::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  if (indices_) return {zeros_like(primals[0])};
  return {values_vjp(primals[0], cotangents[0], axis_, kth_)};
}
std::vector<Array> Partition::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>& outputs) {
  if (indices_) return {zeros_like(outputs[0])};
  return {values_jvp(primals[0], tangents[0], axis_, kth_)};
}

}  // namespace nuvec
