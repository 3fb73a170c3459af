// Creation primitives on the GPU (full and the _like functions are element-wise copies).
#include "core/primitives/creation.h"
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/runtime.h"

namespace nuvec::cuda {
namespace {

void eval_arange(const Arange& prim, const std::vector<Array>&, std::vector<Array>& out) {
  Array& o = out[0];
  allocate(o);
  if (o.size() > 0) launch_arange(o.dtype(), device_out<char>(o), o.size(), prim.start(), prim.step());
}

}  // namespace

void register_creation_kernels(Backend& b) { b.add<Arange, eval_arange>(); }

}  // namespace nuvec::cuda
