// RMS norm, layer norm and the residual add + RMS norm on the GPU (fast_norms.cu); operands that
// are not row-contiguous run the CPU kernel.
#include "backend/cuda/fast_norms.cuh"
#include "backend/cuda/runtime.h"
#include "core/primitives/fast_norms.h"

namespace nuvec::cuda {
namespace {

void eval_norm(const RowNorm& p, const std::vector<Array>& in, std::vector<Array>& out) {
  for (const Array& a : in)
    if (!a.row_contiguous()) return backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
  for (Array& o : out) allocate(o);
  int64_t d = in[0].shape(-1), rows = d ? in[0].size() / d : 0;
  if (rows == 0) return;
  bool add = p.kind() == NormKind::add_rms;
  NormRows n{};
  n.x = device_address(in[0]), n.x_type = in[0].dtype();
  if (add) {
    n.res = device_address(in[1]), n.res_type = in[1].dtype();
    n.h = out[1].buffer()->device_data(), n.h_type = out[1].dtype();
  }
  if (p.weighted()) n.w = static_cast<const float*>(device_address(in[size_t(p.weight_index())]));
  if (p.biased()) n.b = static_cast<const float*>(device_address(in[size_t(p.bias_index())]));
  n.y = out[0].buffer()->device_data(), n.y_type = out[0].dtype();
  n.rows = rows, n.d = d, n.layer = p.kind() == NormKind::layer, n.add = add, n.eps = p.eps();
  norm_rows(n, stream());
  check_launch("in a row norm");
}

}  // namespace

void register_fast_norm_kernels(Backend& b) { b.add<RowNorm, eval_norm>(); }

}  // namespace nuvec::cuda
