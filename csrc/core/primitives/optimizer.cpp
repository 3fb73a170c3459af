#include "core/primitives/optimizer.h"

#include <string>

namespace nuvec {

std::vector<Array> adam_update(const Array& p, const Array& g, const Array& m, const Array& v, const Array& lr,
                               const std::optional<Array>& correction, const std::optional<Array>& decay,
                               AdamConstants c, Stream s) {
  for (const Array* x : {&p, &g, &m, &v}) {
    if (x->dtype() != Dtype::float32) throw OpError("adam_update", "p, g, m and v must be float32");
    if (x->shape() != p.shape()) throw OpError("adam_update", "p, g, m and v must have one shape");
  }
  std::vector<Array> inputs{p, g, m, v, lr};
  if (correction) inputs.push_back(*correction);
  if (decay) inputs.push_back(*decay);
  for (size_t k = 4; k < inputs.size(); ++k)
    if (inputs[k].dtype() != Dtype::float32 || inputs[k].ndim() != 0)
      throw OpError("adam_update", "the scalar factors must be 0-d float32 arrays");
  auto prim = std::make_shared<AdamUpdate>(c, correction.has_value(), decay.has_value());
  return Array::lazy_multi({p.shape(), p.shape(), p.shape()}, {Dtype::float32, Dtype::float32, Dtype::float32},
                           std::move(prim), std::move(inputs), s);
}

}  // namespace nuvec
