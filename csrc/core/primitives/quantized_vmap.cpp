// vmap rules of the quantization family: every operand carries its batch axis in front, which is
// one more leading (batch) axis of the packed weights, scales and biases.
#include <algorithm>

#include "core/ops/quantized.h"
#include "core/primitives/quantized.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result Quantize::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                      const std::vector<Array>& outputs) {
  Array w = to_front(inputs[0], axes[0]);
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
  for (const Array& o : outputs) shapes.push_back(with_batch(o.shape(), w.shape(0))), dtypes.push_back(o.dtype());
  auto out = Array::lazy_multi(std::move(shapes), std::move(dtypes), shared_from_this(), {w}, outputs[0].stream());
  return {out, std::vector<int>(out.size(), 0)};
}

Result Dequantize::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                        const std::vector<Array>& outputs) {
  int64_t n = batch_size(inputs, axes);
  std::vector<Array> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(front_or_repeated(inputs[i], axes[i], n));
  return {{remake(*this, with_batch(outputs[0].shape(), n), outputs[0], std::move(in))}, {0}};
}

// x batched over a shared 2-D weight: more rows. Otherwise every operand takes the batch axis in
// front of its own batch axes (aligned to one rank) and the op broadcasts them.
Result QuantizedMatmul::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                             const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Stream s = out.stream();
  int64_t n = batch_size(inputs, axes);
  if (axes[1] < 0 && axes[2] < 0 && axes[3] < 0 && inputs[1].ndim() == 2)
    return {{remake(*this, with_batch(out.shape(), n), out,
                    {to_front(inputs[0], axes[0]), inputs[1], inputs[2], inputs[3]})},
            {0}};
  int rank = 0;
  for (size_t i = 0; i < inputs.size(); ++i) rank = std::max(rank, inputs[i].ndim() - (axes[i] >= 0 ? 1 : 0));
  std::vector<Array> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Array a = front_or_repeated(inputs[i], axes[i], n);
    in.push_back(front_aligned(a, 0, rank));
  }
  Array r = quantized_matmul(in[0], in[1], in[2], in[3], transpose_, q_, s, activation_bits_);
  return {{astype(r, out.dtype(), s)}, {0}};
}

// The batch folds into the items: a batched x (or weight) becomes B times as many batch items, and
// example b's indices move by b times one example's item count.
Result GatherQmm::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                       const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Stream s = out.stream();
  int64_t n = batch_size(inputs, axes);
  // Folds operand `a` (matrices in its last two axes) and shifts its indices `idx` to match.
  auto fold = [&](const Array& a, int a_axis, const Array& idx, int idx_axis, bool batched, Array& folded) {
    // contiguous: works around a wrong element-wise add over a broadcast of a broadcast view.
    Array ix = contiguous(front_or_repeated(idx, idx_axis, n), s);
    if (!batched) {
      folded = a;
      return ix;
    }
    Array f = to_front(a, a_axis);
    int64_t per = shape_size(Shape(f.shape().begin() + 1, f.shape().end() - 2));
    folded = reshape(f, {-1, f.shape(-2), f.shape(-1)}, s);
    Shape step(size_t(ix.ndim()), 1);
    step[0] = n;
    Array shift = reshape(arange(0, double(n * per), double(per), Dtype::uint32, s), step, s);
    return binary(BinaryOp::add, ix, shift, s);
  };
  bool wb = axes[1] >= 0 || axes[2] >= 0 || axes[3] >= 0;
  Array x, w, sc, bi;
  Array lhs = fold(inputs[0], axes[0], inputs[4], axes[4], axes[0] >= 0, x);
  Array rhs = fold(wb ? front_or_repeated(inputs[1], axes[1], n) : inputs[1], 0, inputs[5], axes[5], wb, w);
  if (wb) {
    auto folded = [&](int i) {
      Array f = front_or_repeated(inputs[size_t(i)], axes[size_t(i)], n);
      return reshape(f, {-1, f.shape(-2), f.shape(-1)}, s);
    };
    sc = folded(2), bi = folded(3);
  } else {
    sc = inputs[2], bi = inputs[3];
  }
  Array r = gather_qmm(x, w, sc, bi, lhs, rhs, transpose_, q_, s, activation_bits_);
  return {{astype(r, out.dtype(), s)}, {0}};
}

}  // namespace nuvec
