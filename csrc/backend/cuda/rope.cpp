// nuvec.fast.rope on the GPU (rope.cu); x not row-contiguous, or offsets that do not match the
// batch (the CPU kernel raises), run the CPU kernel. norm_rope still runs the CPU kernel.
#include "backend/cuda/rope.cuh"
#include "backend/cuda/runtime.h"
#include "core/primitives/rope.h"

namespace nuvec::cuda {
namespace {

void eval_rope(const Rope& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const RopeParams& p = prim.params();
  Array& y = out[0];
  size_t k = 1;
  const Array* offsets = p.has_offsets ? &in[k++] : nullptr;
  const Array* freqs = p.has_freqs ? &in[k] : nullptr;
  bool per_batch = offsets && offsets->ndim() == 1;
  bool direct = in[0].row_contiguous() && (!offsets || offsets->row_contiguous()) &&
                (!freqs || freqs->row_contiguous()) && (!offsets || offsets->size() == (per_batch ? y.shape(0) : 1));
  if (!direct) return backend_for(DeviceType::cpu)->kernel(prim.kernel_slot())(prim, in, out);
  allocate(y);
  int64_t d = y.shape(-1), rows = d ? y.size() / d : 0;
  if (rows == 0) return;
  RopeRows r{};
  r.x = device_address(in[0]), r.y = y.buffer()->device_data(), r.type = y.dtype();
  r.rows = rows, r.d = d, r.t = y.shape(-2), r.rows_per_batch = rows / y.shape(0), r.half = p.dims / 2;
  if (offsets) r.offsets = static_cast<const int32_t*>(device_address(*offsets)), r.per_batch_offsets = per_batch;
  r.offset = p.offset;
  if (freqs) r.freqs = static_cast<const float*>(device_address(*freqs));
  r.base = p.base, r.scale = p.scale, r.traditional = p.traditional, r.inverse = p.inverse;
  rope_rows(r, stream());
  check_launch("in rope");
}

}  // namespace

void register_rope_kernels(Backend& b) { b.add<Rope, eval_rope>(); }

}  // namespace nuvec::cuda
