// scaled_dot_product_attention on the GPU: one warp per query row, over its keys in blocks of 32
// from key 0. Lane t scores key j0 + t (q pre-scaled, as the CPU; its D products fused
// multiply-added in order), the block's maximum and exponential sum go by a fixed butterfly, and
// lane c keeps output elements c, c + 32, ..., each the block's weighted values added in key
// order onto the running sum rescaled by exp(old max - new max). A causal row stops after its last
// visible key (keys past it would add exact zeros); a row that sees no key weighs every key with
// float32's lowest score, as MLX. The head's sink joins at the end, as the CPU's. The sequence
// depends on the row's own keys alone: row independence, and a causal row has the bits of the
// one-query call over its prefix.
#include <cfloat>

#include "backend/cuda/attention.cuh"
#include "backend/cuda/dtypes.cuh"

namespace nuvec::cuda {
namespace {

constexpr int kWarps = 4;  // query rows a block computes
constexpr int kPerLane = kAttentionMaxDim / 32;

// exp(x - ref), with an infinite maximum's reference taken as 0 (so -inf - -inf is not NaN).
__device__ __forceinline__ float ref_of(float m) { return isinf(m) ? 0.0f : m; }

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off /= 2) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

__global__ void __launch_bounds__(kWarps * 32) rows_kernel(AttentionRows a) {
  __shared__ float qs[kWarps][kAttentionMaxDim];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t row = int64_t(blockIdx.x) * kWarps + warp;
  if (row >= a.B * a.Hq * a.Lq) return;
  const int64_t i = row % a.Lq, h = row / a.Lq % a.Hq, b = row / a.Lq / a.Hq, g = h / (a.Hq / a.Hkv);
  const float* q = a.q + b * a.qst[0] + h * a.qst[1] + i * a.qst[2];
  for (int64_t d = lane; d < a.D; d += 32) qs[warp][d] = __fmul_rn(q[d], a.scale);
  __syncwarp();
  const int64_t k_row0 = b * a.kst[0] + g * a.kst[1], v_row0 = b * a.vst[0] + g * a.vst[1];
  // Keys [0, end): a causal row's visible ones; every key, masked, when it sees none.
  int64_t end = a.Lk;
  bool all_masked = false;
  if (a.mask == 1) {
    int64_t last = i + a.Lk - a.Lq;
    if (last < 0)
      all_masked = true;
    else
      end = last + 1 < a.Lk ? last + 1 : a.Lk;
  }
  const char* mrow = static_cast<const char*>(a.mask_data);
  int64_t moff = b * a.mask_strides[0] + h * a.mask_strides[1] + i * a.mask_strides[2];
  float m = -INFINITY, l = 0.0f, acc[kPerLane] = {};
  for (int64_t j0 = 0; j0 < end; j0 += 32) {
    const int64_t j = j0 + lane;
    const bool present = j < end;
    float s = -INFINITY;
    if (present) {
      if (all_masked) {
        s = -FLT_MAX;
      } else {
        const int64_t kr = k_row0 + j * a.kst[2];
        float dot = 0.0f;
        for (int64_t d = 0; d < a.D; ++d) dot = __fmaf_rn(qs[warp][d], load_float(a.k, a.kv, kr + d), dot);
        s = dot;
        if (a.mask == 2) s = __fadd_rn(s, reinterpret_cast<const float*>(mrow)[moff + j * a.mask_strides[3]]);
        if (a.mask == 3 && !reinterpret_cast<const bool*>(mrow)[moff + j * a.mask_strides[3]]) s = -FLT_MAX;
      }
    }
    const float m2 = fmaxf(m, warp_max(s)), r = ref_of(m2);
    const float p = present ? expf(s - r) : 0.0f, fa = expf(m - r);
    l = __fadd_rn(__fmul_rn(l, fa), warp_sum(p));
    m = m2;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) acc[c] = __fmul_rn(acc[c], fa);
    const int64_t n = end - j0 < 32 ? end - j0 : 32;
    for (int t = 0; t < n; ++t) {
      const float pt = __shfl_sync(0xffffffffu, p, t);
      const int64_t vr = v_row0 + (j0 + t) * a.vst[2];
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) {
        const int64_t d = lane + 32 * c;
        if (d < a.Dv) acc[c] = __fmaf_rn(pt, load_float(a.v, a.kv, vr + d), acc[c]);
      }
    }
  }
  if (a.sinks) {
    const float s = a.sinks[h], m2 = fmaxf(m, s), r = ref_of(m2), fa = expf(m - r);
    l = __fadd_rn(__fmul_rn(l, fa), expf(s - r));
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) acc[c] = __fmul_rn(acc[c], fa);
  }
  float* out = a.out + row * a.Dv;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int64_t d = lane + 32 * c;
    if (d < a.Dv) out[d] = __fdiv_rn(acc[c], l);
  }
}

}  // namespace

void attention_rows(const AttentionRows& a, cudaStream_t stream) {
  const int64_t rows = a.B * a.Hq * a.Lq;
  rows_kernel<<<unsigned((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(a);
}

}  // namespace nuvec::cuda
