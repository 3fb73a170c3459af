// Random bits on the GPU: MLX's counter-based Threefry-2x32 stream, one thread per counter pair,
// and the float32 samplers fused onto it with the CPU's exact steps (backend/cpu/simd/random.cpp):
// the same rounding at each step and the same logf, so the GPU gives the CPU's bits.
#include "backend/cuda/runtime.h"
#include "core/mlx_constants.h"
#include "core/primitives/random.h"

namespace nuvec::cuda {
namespace {

__device__ inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32 with 20 rounds: five groups of four, a key injection after each.
__device__ inline void threefry(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
#pragma unroll
  for (int g = 0; g < 5; ++g) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      x0 += x1;
      x1 = rotl(x1, rot[g % 2][j]);
      x1 ^= x0;
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + uint32_t(g + 1);
  }
}

// glibc's logf for normal positive floats (the algorithm of backend/cpu/simd/logf.h: a 16-entry
// table, a cubic in double with fused multiply-adds, one rounding to float).
__constant__ double kInvC[16] = {NUVEC_LOGF_INV_C};
__constant__ double kLogC[16] = {NUVEC_LOGF_LOG_C};

__device__ inline float logf_positive(float x) {
  constexpr double kLn2 = NUVEC_LOGF_LN2;
  constexpr double kA0 = NUVEC_LOGF_A0, kA1 = NUVEC_LOGF_A1, kA2 = NUVEC_LOGF_A2;
  uint32_t ix = __float_as_uint(x);
  uint32_t tmp = ix - 0x3f330000u;
  int i = int((tmp >> 19) & 15u);
  int k = int(tmp) >> 23;
  double z = double(__uint_as_float(ix - (tmp & 0xff800000u)));
  double r = fma(z, kInvC[i], -1.0);
  double y0 = fma(double(k), kLn2, kLogC[i]);
  double r2 = r * r;
  double y = fma(kA1, r, kA2);
  y = fma(kA0, r2, y);
  y = fma(y, r2, y0 + r);
  return float(y);
}

// MLX's float32 erfinv (backend/cpu/simd/erfinv.h), for |a| < 1.
__device__ inline float erfinv(float a) {
  const float tail[] = {NUVEC_ERFINV_TAIL};
  const float center[] = {NUVEC_ERFINV_CENTER};
  float t = logf_positive(fmaf(a, 0.0f - a, 1.0f));
  float p;
  if (fabsf(t) > NUVEC_ERFINV_SPLIT) {
    p = tail[0];
    for (int k = 1; k < 9; ++k) p = fmaf(p, t, tail[k]);
  } else {
    p = center[0];
    for (int k = 1; k < 10; ++k) p = fmaf(p, t, center[k]);
  }
  return a * p;
}

__device__ inline uint32_t transform(RandomKind kind, uint32_t b) {
  if (kind == RandomKind::bits) return b;
  constexpr float kUpper = 0x1.fffffep-1f, kLow = -0x1.fffffep-1f, kSqrt2 = 1.41421356237309515f;
  float u = __fmul_rn(__uint2float_rn(b), 0x1p-32f);
  u = u < kUpper ? u : kUpper;
  if (kind == RandomKind::uniform) return __float_as_uint(u);
  float e = erfinv(__fadd_rn(__fmul_rn(u, 2.0f), kLow));
  return __float_as_uint(kind == RandomKind::erfinv ? e : __fmul_rn(e, kSqrt2));
}

// Words i and i + h come from counters (i, i + h); for an odd count the middle word is the first
// output of counters (pairs, 0).
__global__ void fill(RandomKind kind, const uint32_t* key, int64_t key_stride, uint32_t* w, int64_t pairs, int64_t h,
                     bool odd) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > pairs || (i == pairs && !odd)) return;
  uint32_t k0 = key[0], k1 = key[key_stride];
  uint32_t x0 = uint32_t(i), x1 = i == pairs ? 0u : uint32_t(i + h);
  threefry(k0, k1, x0, x1);
  w[i] = transform(kind, x0);
  if (i < pairs) w[i + h] = transform(kind, x1);
}

void eval_random_bits(const RandomBits& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& key = in[0];
  Array& o = out[0];
  // Whole words: a partial last word is written in full into the buffer's padding.
  int64_t words = (int64_t(o.nbytes()) + 3) / 4, pairs = words / 2, h = words - pairs;
  o.set_contiguous_data(Buffer::allocate_device(size_t(words) * 4));
  if (words == 0) return;
  int64_t threads = pairs + 1, block = 256;
  fill<<<unsigned((threads + block - 1) / block), unsigned(block), 0, stream()>>>(
      prim.kind(), device_in<uint32_t>(key), key.strides()[0], device_out<uint32_t>(o), pairs, h, words % 2 == 1);
  check_launch("random bits");
}

}  // namespace

void register_random_kernels(Backend& b) { b.add<RandomBits, eval_random_bits>(); }

}  // namespace nuvec::cuda
