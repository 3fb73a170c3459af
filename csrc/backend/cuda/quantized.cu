// MLX's affine quantized products on the GPU. The one-row kernel: each warp computes kRows
// adjacent outputs of one row of x (of one batch item); each lane takes chunks of 32 codes (`bits`
// words, so a warp's loads of a weight row are contiguous), chunk lane, lane + 32, ... of the row,
// keeping x's 32 values in registers for its kRows weight rows. Per chunk: d = the codes times x,
// fused multiply-added in order, s = x's values added in order, then acc = fma(scale, d, acc) and
// acc = fma(bias, s, acc); the lanes' accumulators are then added by a fixed butterfly. That
// sequence depends on k alone, so each row of x gets the bits of its one-row product.
#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/quantized.cuh"
#include "core/quant_bits.h"

namespace nuvec::cuda {
namespace {

constexpr int kChunk = 32;  // codes a lane takes at once: `bits` words
constexpr int kRows = 4;    // weight rows a warp computes
constexpr int kWarps = 4;   // warps a block holds

// Code i (0 to 31) of a chunk of B words, a compile-time position once unrolled.
template <int B> __device__ __forceinline__ float code(const uint32_t (&w)[B], int i) {
  const int bit = i * B, word = bit / 32, off = bit % 32;
  uint32_t v = w[word] >> off;
  if (off + B > 32) v |= w[word + 1] << (32 - off);
  return float(v & ((1u << B) - 1));
}

template <int B> __device__ __forceinline__ void load_chunk(const uint32_t* p, uint32_t (&w)[B]) {
#pragma unroll
  for (int j = 0; j < B; ++j) w[j] = __ldg(p + j);
}

template <int B> __global__ void __launch_bounds__(kWarps * 32) rows_kernel(QuantizedRows q) {
  const int lane = threadIdx.x % 32;
  const int64_t n0 = (int64_t(blockIdx.x) * kWarps + threadIdx.x / 32) * kRows;
  if (n0 >= q.n) return;
  const int64_t words = q.k * B / 32, chunks = q.k / kChunk, groups = q.k / q.group;
  for (int64_t z = blockIdx.z; z < q.items; z += gridDim.z) {
    const int64_t xz = q.lhs ? q.lhs[z] : z, wz = q.rhs ? q.rhs[z] : z;
    const uint32_t* w = q.w + wz * q.w_item;
    const int64_t p0 = wz * q.p_item;
    for (int64_t m = blockIdx.y; m < q.m; m += gridDim.y) {
      const float* x = q.x + xz * q.x_item + m * q.k;
      float acc[kRows] = {};
      for (int64_t c = lane; c < chunks; c += 32) {
        // Every row's words first, so their loads are in flight together (a row past n rereads
        // the last row and is not stored).
        uint32_t wc[kRows][B];
#pragma unroll
        for (int r = 0; r < kRows; ++r) load_chunk<B>(w + (n0 + r < q.n ? n0 + r : q.n - 1) * words + c * B, wc[r]);
        float xv[kChunk], s = 0.0f;
        const float4* x4 = reinterpret_cast<const float4*>(x + c * kChunk);
#pragma unroll
        for (int i = 0; i < kChunk / 4; ++i) {
          float4 v = __ldg(x4 + i);
          xv[4 * i] = v.x, xv[4 * i + 1] = v.y, xv[4 * i + 2] = v.z, xv[4 * i + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < kChunk; ++i) s = __fadd_rn(s, xv[i]);
        const int64_t g = c * kChunk / q.group;
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const int64_t n = n0 + r < q.n ? n0 + r : q.n - 1;
          float d = 0.0f;
#pragma unroll
          for (int i = 0; i < kChunk; ++i) d = __fmaf_rn(code<B>(wc[r], i), xv[i], d);
          acc[r] = __fmaf_rn(load_float(q.scales, q.s_type, p0 + n * groups + g), d, acc[r]);
          acc[r] = __fmaf_rn(load_float(q.biases, q.b_type, p0 + n * groups + g), s, acc[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float v = acc[r];
        for (int off = 16; off > 0; off /= 2) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
        if (lane == 0 && n0 + r < q.n) store_float(q.y, q.y_type, (z * q.m + m) * q.n + n0 + r, v);
      }
    }
  }
}

// One thread per chunk of 32 codes of W: scale * code + bias (a multiply, then an add, as MLX).
template <int B> __global__ void dequantize_kernel(QuantizedRows q, float* out) {
  const int64_t chunks = q.n * (q.k / kChunk), groups = q.k / q.group;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = c / (q.k / kChunk), e = c % (q.k / kChunk) * kChunk, g = e / q.group;
    uint32_t w[B];
    load_chunk<B>(q.w + n * (q.k * B / 32) + e / 32 * B, w);
    const float sc = load_float(q.scales, q.s_type, n * groups + g),
                bi = load_float(q.biases, q.b_type, n * groups + g);
#pragma unroll
    for (int i = 0; i < kChunk; ++i) out[n * q.k + e + i] = __fadd_rn(__fmul_rn(code<B>(w, i), sc), bi);
  }
}

__global__ void store_kernel(const float* src, void* dst, Dtype t, int64_t count) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    store_float(dst, t, i, src[i]);
}

unsigned blocks_for(int64_t items, int threads) {
  int64_t b = (items + threads - 1) / threads;
  return unsigned(b < 65535 * 16 ? b : 65535 * 16);
}

}  // namespace

bool quantized_rows_supported(int bits, int group) {
  return ((bits >= 1 && bits <= 6) || bits == 8) && group % kChunk == 0;
}

void quantized_rows(const QuantizedRows& q, cudaStream_t stream) {
  const int64_t per_block = int64_t(kWarps) * kRows;
  dim3 grid(unsigned((q.n + per_block - 1) / per_block), unsigned(q.m < 65535 ? q.m : 65535),
            unsigned(q.items < 65535 ? q.items : 65535));
  with_bits(q.bits, [&](auto b) { rows_kernel<b.value><<<grid, kWarps * 32, 0, stream>>>(q); });
}

void dequantize_rows(const QuantizedRows& q, float* out, cudaStream_t stream) {
  const int64_t chunks = q.n * (q.k / kChunk);
  with_bits(q.bits, [&](auto b) { dequantize_kernel<b.value><<<blocks_for(chunks, 256), 256, 0, stream>>>(q, out); });
}

void store_floats(const float* src, void* dst, Dtype dst_type, int64_t count, cudaStream_t stream) {
  store_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(src, dst, dst_type, count);
}

}  // namespace nuvec::cuda
