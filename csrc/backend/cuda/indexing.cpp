// The indexing family on the GPU: concatenate, a copy of each input into its window of the output
// (gather and scatter still run their CPU kernels: docs/cuda.md).
#include "core/primitives/indexing.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/runtime.h"

namespace nuvec::cuda {
namespace {

void eval_concatenate(const Concatenate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& o = out[0];
  allocate(o);
  int64_t offset = 0;
  for (const Array& x : in) {
    if (x.size() > 0) {
      // A strided window of the output for this input, filled by the copy kernel.
      Array window = Array::from_buffer(x.shape(), o.dtype(), o.buffer(), o.strides(), offset);
      copy_into(x, window);
    }
    offset += x.shape(prim.axis()) * o.strides()[prim.axis()];
  }
}

}  // namespace

void register_indexing_kernels(Backend& b) { b.add<Concatenate, eval_concatenate>(); }

}  // namespace nuvec::cuda
