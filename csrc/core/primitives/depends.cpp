#include "core/primitives/depends.h"

#include "core/backend.h"
#include "core/ops.h"
#include "core/primitives/grad_util.h"

namespace nuvec {

namespace {
// On every device: output i shares input i's buffer.
void share_inputs(const Depends&, const std::vector<Array>& in, std::vector<Array>& out) {
  for (size_t i = 0; i < out.size(); ++i) out[i].set_data(in[i].buffer(), in[i].strides(), in[i].offset());
}
const bool registered = add_device_free_kernel<Depends, share_inputs>();
}  // namespace

std::vector<Array> depends(const std::vector<Array>& inputs, const std::vector<Array>& dependencies) {
  if (inputs.empty()) return {};
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
  for (const Array& x : inputs) shapes.push_back(x.shape()), dtypes.push_back(x.dtype());
  std::vector<Array> all = inputs;
  all.insert(all.end(), dependencies.begin(), dependencies.end());
  auto prim = std::make_shared<Depends>(int(inputs.size()));
  Stream s = inputs.front().stream();
  if (inputs.size() == 1) return {Array::lazy(shapes[0], dtypes[0], prim, all, s)};
  return Array::lazy_multi(shapes, dtypes, prim, all, s);
}

std::vector<Array> Depends::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<Array>&) {
  std::vector<Array> out;
  for (int k : argnums) out.push_back(k < num_inputs_ ? cotangents[k] : grad::zeros_like(primals[k]));
  return out;
}

std::vector<Array> Depends::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                const std::vector<int>& argnums, const std::vector<Array>&) {
  std::vector<Array> out;
  for (int k = 0; k < num_inputs_; ++k) out.push_back(grad::zeros_like(primals[k]));
  for (size_t i = 0; i < argnums.size(); ++i)
    if (argnums[i] < num_inputs_) out[argnums[i]] = tangents[i];
  return out;
}

std::pair<std::vector<Array>, std::vector<int>> Depends::vmap(const std::vector<Array>& inputs,
                                                              const std::vector<int>& axes, const std::vector<Array>&) {
  std::vector<Array> in(inputs.begin(), inputs.begin() + num_inputs_);
  std::vector<Array> deps(inputs.begin() + num_inputs_, inputs.end());
  return {depends(in, deps), std::vector<int>(axes.begin(), axes.begin() + num_inputs_)};
}

}  // namespace nuvec
