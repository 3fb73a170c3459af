// Rules of the Hadamard transform: it is linear, so its tangent is the transform of the tangent
// and its cotangent the transposed transform of the cotangent; rows are independent, so a
// vmapped axis just becomes another row axis.
#include "core/primitives/hadamard.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

namespace {
Array transform(const Array& x, float scale, bool transposed, const Array& like) {
  Array in = x.dtype() == like.dtype() ? x : astype(x, like.dtype(), like.stream());
  return Array::lazy(x.shape(), like.dtype(), std::make_shared<Hadamard>(scale, transposed), {in}, like.stream());
}
}  // namespace

std::vector<Array> Hadamard::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                 const std::vector<int>&, const std::vector<Array>& outputs) {
  return {transform(cotangents[0], scale_, !transposed_, outputs[0])};
}

std::vector<Array> Hadamard::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                                 const std::vector<Array>& outputs) {
  return {transform(tangents[0], scale_, transposed_, outputs[0])};
}

std::pair<std::vector<Array>, std::vector<int>> Hadamard::vmap(const std::vector<Array>& inputs,
                                                               const std::vector<int>& axes,
                                                               const std::vector<Array>& outputs) {
  const Array& x = inputs[0];
  int ax = axes[0];
  if (ax == x.ndim() - 1) {  // the batch axis is last: move it out of the transformed axis
    Array moved = moveaxis(x, ax, 0, x.stream());
    return {{transform(moved, scale_, transposed_, outputs[0])}, {0}};
  }
  return {{transform(x, scale_, transposed_, outputs[0])}, {ax}};
}

}  // namespace nuvec
