// fast.scaled_dot_product_attention on the GPU (attention.cu; docs/cuda.md, "Attention"). Heads
// wider than kAttentionMaxDim run the CPU kernel; paged attention runs the CPU kernel.
#include <algorithm>

#include "backend/cuda/attention.cuh"
#include "backend/cuda/copy.h"
#include "backend/cuda/runtime.h"
#include "core/primitives/attention.h"

namespace nuvec::cuda {
namespace {

// `x` itself when it is row-contiguous, else a row-contiguous copy on the device.
Array row_major(const Array& x) { return x.row_contiguous() ? x : row_major_copy(x); }

// `x` itself when its rows have unit stride (a slice of a key cache, heads transposed out of
// (B, L, H, D)), else a copy.
Array unit_rows(const Array& x) { return x.shape(3) == 1 || x.strides()[3] == 1 ? x : row_major(x); }

void eval_attention(const ScaledDotProductAttention& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  if (in[0].shape(3) > kAttentionMaxDim || in[2].shape(3) > kAttentionMaxDim)
    return backend_for(DeviceType::cpu)->kernel(prim.kernel_slot())(prim, in, out);
  const AttentionParams& p = prim.params();
  Array& o = out[0];
  allocate(o);
  if (o.size() == 0) return;
  Array q = unit_rows(in[0]), k = unit_rows(in[1]), v = unit_rows(in[2]);
  if (k.shape(2) == 0) {  // no keys: zeros, as MLX
    check(cudaMemsetAsync(o.buffer()->device_data(), 0, o.nbytes(), stream()), "zeroing an attention without keys");
    return;
  }
  AttentionRows a{};
  a.q = static_cast<const float*>(device_address(q)), a.k = device_address(k), a.v = device_address(v);
  a.out = static_cast<float*>(o.buffer()->device_data());
  a.B = q.shape(0), a.Hq = q.shape(1), a.Hkv = k.shape(1), a.Lq = q.shape(2), a.Lk = k.shape(2);
  a.D = q.shape(3), a.Dv = v.shape(3);
  for (auto [x, st] : {std::pair{&q, a.qst}, {&k, a.kst}, {&v, a.vst}}) std::copy_n(x->strides().begin(), 3, st);
  a.scale = p.scale, a.kv = k.dtype(), a.mask = int(p.mask);
  if (p.mask == AttentionMask::additive || p.mask == AttentionMask::boolean) {
    a.mask_data = device_address(in[3]);
    std::copy_n(in[3].strides().begin(), 4, a.mask_strides);
  }
  Array sinks;
  if (p.sinks) sinks = row_major(in.back()), a.sinks = static_cast<const float*>(device_address(sinks));
  attention_rows(a, stream());
  check_launch("in scaled_dot_product_attention");
}

}  // namespace

void register_attention_kernels(Backend& b) { b.add<ScaledDotProductAttention, eval_attention>(); }

}  // namespace nuvec::cuda
