// Rules of the FFT node. It is linear, so its tangent is the node applied to the tangent; its
// cotangent is the adjoint, as MLX's: the opposite-sign transform with the same scale; for a real
// forward transform the real part of that over the zero-padded cotangent; for a real inverse the
// forward real transform of the cotangent with the bins that stand for two (all but the first and,
// for even lengths, the last) doubled. vmap puts the batch axis in front.
#include "core/primitives/fft.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

namespace {
Array node(const Array& x, std::vector<int> axes, bool inverse, bool real, double scale, Shape shape, Dtype out) {
  Dtype in = real && !inverse ? Dtype::float32 : Dtype::complex64;
  Array v = x.dtype() == in ? x : astype(x, in, x.stream());
  return Array::lazy(std::move(shape), out, std::make_shared<FFT>(std::move(axes), inverse, real, scale), {v},
                     x.stream());
}
}  // namespace

std::vector<Array> FFT::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                            const std::vector<int>&, const std::vector<Array>&) {
  const Array& x = primals[0];
  const Array& ct = cotangents[0];
  Stream s = ct.stream();
  if (!real_) return {node(ct, axes_, !inverse_, false, scale_, x.shape(), Dtype::complex64)};
  int last = axes_.back();
  if (!inverse_) {
    std::vector<std::pair<int64_t, int64_t>> widths(size_t(ct.ndim()), {0, 0});
    widths[size_t(last)].second = x.shape(last) - ct.shape(last);
    Array padded = pad(astype(ct, Dtype::complex64, s), widths, "constant", scalar_array(0.0, Dtype::complex64), s);
    return {unary(UnaryOp::real, node(padded, axes_, true, false, scale_, x.shape(), Dtype::complex64), s)};
  }
  int64_t n = ct.shape(last), m = x.shape(last);
  Array mask = Array::allocate({m}, Dtype::float32);
  for (int64_t k = 0; k < m; ++k) mask.data<float>()[k] = (k == 0 || (n % 2 == 0 && k == m - 1)) ? 1.0f : 2.0f;
  Shape mshape(size_t(x.ndim()), 1);
  mshape[size_t(last)] = m;
  Array y = node(ct, axes_, false, true, scale_, x.shape(), Dtype::complex64);
  return {binary(BinaryOp::multiply, y, reshape(mask, mshape, s), s)};
}

std::vector<Array> FFT::jvp(const std::vector<Array>&, const std::vector<Array>& tangents, const std::vector<int>&,
                            const std::vector<Array>& outputs) {
  return {node(tangents[0], axes_, inverse_, real_, scale_, outputs[0].shape(), outputs[0].dtype())};
}

std::pair<std::vector<Array>, std::vector<int>> FFT::vmap(const std::vector<Array>& inputs,
                                                          const std::vector<int>& axes,
                                                          const std::vector<Array>& outputs) {
  Array x = batching::to_front(inputs[0], axes[0]);
  std::vector<int> shifted;
  for (int a : axes_) shifted.push_back(a + 1);
  Shape shape = batching::with_batch(outputs[0].shape(), x.shape(0));
  return {{node(x, shifted, inverse_, real_, scale_, shape, outputs[0].dtype())}, {0}};
}

}  // namespace nuvec
