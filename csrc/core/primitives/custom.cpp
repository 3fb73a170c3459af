#include "core/primitives/custom.h"

#include "core/backend.h"
#include "core/ops.h"

namespace nuvec {

namespace {
// On every device: the outputs share the buffers of the outputs computed on the primals' aliases.
void share_outputs(const Custom& p, const std::vector<Array>& in, std::vector<Array>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    const Array& o = in[size_t(p.num_primals()) + i];
    out[i].set_data(o.buffer(), o.strides(), o.offset());
  }
}
const bool registered = add_device_free_kernel<Custom, share_outputs>();
}  // namespace

std::vector<Array> Custom::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> p(primals.begin(), primals.begin() + num_primals_);
  std::vector<Array> grads = vjp_(p, cotangents, outputs);
  if (int(grads.size()) != num_primals_)
    throw OpError(name(), "the vjp returned " + std::to_string(grads.size()) + " cotangents for " +
                              std::to_string(num_primals_) + " inputs");
  std::vector<Array> out;
  for (int k : argnums) {
    if (k >= num_primals_) {  // the hidden outputs are untraced: never asked for
      out.push_back(filled_like(primals[k], scalar_array(int64_t(0), primals[k].dtype()), primals[k].stream()));
      continue;
    }
    if (grads[k].shape() != primals[k].shape())
      throw OpError(name(), "the vjp's cotangent " + std::to_string(k) + " has the wrong shape");
    out.push_back(astype(grads[k], primals[k].dtype(), primals[k].stream()));
  }
  return out;
}

std::vector<Array> Custom::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> p(primals.begin(), primals.begin() + num_primals_);
  std::vector<Array> t;
  for (int k = 0; k < num_primals_; ++k)
    t.push_back(full(p[k].shape(), scalar_array(int64_t(0), p[k].dtype()), std::nullopt, p[k].stream()));
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] < num_primals_) t[argnums[i]] = tangents[i];
  return jvp_(p, t, outputs);
}

Array untraced_alias(const Array& x) {
  Array a =
      Array::lazy(x.shape(), x.dtype(), std::make_shared<Unary>(UnaryOp::copy, x.dtype(), x.dtype()), {x}, x.stream());
  a.node()->traced = 0;
  return a;
}

std::vector<Array> apply_custom(const std::vector<Array>& primals, const std::vector<Array>& outputs, CustomRule vjp,
                                CustomRule jvp, CustomVmapRule vmap) {
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
  for (const Array& o : outputs) shapes.push_back(o.shape()), dtypes.push_back(o.dtype());
  std::vector<Array> inputs = primals;
  inputs.insert(inputs.end(), outputs.begin(), outputs.end());
  auto prim = std::make_shared<Custom>(int(primals.size()), std::move(vjp), std::move(jvp), std::move(vmap));
  Stream s = default_stream(default_device());
  if (outputs.size() == 1) return {Array::lazy(shapes[0], dtypes[0], prim, inputs, s)};
  return Array::lazy_multi(shapes, dtypes, prim, inputs, s);
}

}  // namespace nuvec
