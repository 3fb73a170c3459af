// scaled_dot_product_attention on the GPU. A query row's keys go in blocks of 32 from its first key
// that the mask lets through (key 0 without a mask; the hidden keys before it weigh exactly 0, and
// starting there gives a left-padded row the blocks, so the bits, of the same row alone): lane t
// scores key j0 + t (q pre-scaled, as the CPU; its D products fused multiply-added in order), the
// block's maximum and exponential sum go by a fixed butterfly, and lane c keeps output elements c,
// c + 32, ..., each the block's weighted values added in key order onto the running sum rescaled
// by exp(old max - new max). A causal row stops after its last visible key (keys past it would add
// exact zeros); a row that sees no key weighs every key with float32's lowest score, as MLX. The
// head's sink joins at the end, as the CPU's.
//
// Decode (at most kDecodeRows query rows): a block per row; its warps take parts of kPart keys in
// turn (warp w parts w, w + kDecodeWarps, ...), and their states merge in warp order. Prefill:
// a block per kPrefillRows rows of a head, which share each block of keys and values staged in
// shared memory. Either way a row's sequence depends on its own keys alone: row independence, and
// a causal decode row has the bits of the one-query call over its prefix (the serial rule).
#include <cfloat>

#include "backend/cuda/attention.cuh"
#include "backend/cuda/dtypes.cuh"

namespace nuvec::cuda {
namespace {

constexpr int kPerLane = kAttentionMaxDim / 32;
constexpr int kDecodeRows = 8;
constexpr int kDecodeWarps = 8;
constexpr int kPart = 64;            // keys a decode warp takes at once
constexpr int kPrefillRows = 8;      // query rows (warps) a prefill block computes
constexpr int kPrefillMaxDim = 128;  // D and Dv the prefill kernel stages
constexpr int kSimpleWarps = 4;

__device__ __forceinline__ float as_float(float v) { return v; }
__device__ __forceinline__ float as_float(f16 v) { return __half2float(v); }
__device__ __forceinline__ float as_float(bf16 v) { return bf16_to_float(v); }

// exp's reference: an infinite maximum counts as 0 (so -inf - -inf is not NaN).
__device__ __forceinline__ float ref_of(float m) { return isinf(m) ? 0.0f : m; }

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off /= 2) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// A row's running softmax: maximum, exponential sum, and lane c's output elements c + 32 i.
struct State { float m = -INFINITY, l = 0.0f, acc[kPerLane] = {}; };

// Where a row's operands lie.
struct RowAt {
  int64_t b, h, g, i, begin, end;  // keys [begin, end): begin is its first visible key
  bool all_masked;
  const char* mask;  // the row's mask elements at stride mask_step, or null
  int64_t mask_step;
};

__device__ RowAt row_at(const AttentionRows& a, int64_t row) {
  RowAt r;
  r.i = row % a.Lq, r.h = row / a.Lq % a.Hq, r.b = row / a.Lq / a.Hq, r.g = r.h / (a.Hq / a.Hkv);
  r.end = a.Lk, r.all_masked = false;
  if (a.mask == 1) {
    const int64_t last = r.i + a.Lk - a.Lq;
    if (last < 0)
      r.all_masked = true;
    else
      r.end = last + 1 < a.Lk ? last + 1 : a.Lk;
  }
  r.mask = nullptr, r.mask_step = 0;
  if (a.mask >= 2) {
    const int64_t off = r.b * a.mask_strides[0] + r.h * a.mask_strides[1] + r.i * a.mask_strides[2];
    r.mask = static_cast<const char*>(a.mask_data) + off * (a.mask == 2 ? 4 : 1);
    r.mask_step = a.mask_strides[3];
  }
  r.begin = 0;
  return r;
}

// Sets r.begin to the row's first key that its mask does not hide (a boolean false or an additive
// -inf); 0 when there is none, as then every key counts (MLX's average, or its NaN). The warp's
// lanes look at 32 keys at a time.
__device__ void find_begin(const AttentionRows& a, RowAt& r) {
  if (!r.mask) return;
  for (int64_t j0 = 0; j0 < r.end; j0 += 32) {
    const int64_t j = j0 + threadIdx.x % 32;
    bool open = false;
    if (j < r.end)
      open = a.mask == 3 ? reinterpret_cast<const bool*>(r.mask)[j * r.mask_step]
                         : reinterpret_cast<const float*>(r.mask)[j * r.mask_step] != -INFINITY;
    if (const unsigned seen = __ballot_sync(0xffffffffu, open)) {
      r.begin = j0 + __ffs(int(seen)) - 1;
      return;
    }
  }
}

// q * scale into qs (the warp's lanes).
__device__ void stage_q(const AttentionRows& a, const RowAt& r, float* qs) {
  const float* q = a.q + r.b * a.qst[0] + r.h * a.qst[1] + r.i * a.qst[2];
  for (int64_t d = threadIdx.x % 32; d < a.D; d += 32) qs[d] = __fmul_rn(q[d], a.scale);
  __syncwarp();
}

// Key j's score for this lane: the dot product with the key row (D elements of `krow`), masked.
template <class K>
__device__ float score(const AttentionRows& a, const RowAt& r, const float* qs, const K* krow, int64_t j) {
  if (r.all_masked) return -FLT_MAX;
  float dot = 0.0f;
  for (int64_t d = 0; d < a.D; ++d) dot = __fmaf_rn(qs[d], as_float(krow[d]), dot);
  if (r.mask && a.mask == 2) dot = __fadd_rn(dot, reinterpret_cast<const float*>(r.mask)[j * r.mask_step]);
  if (r.mask && a.mask == 3 && !reinterpret_cast<const bool*>(r.mask)[j * r.mask_step]) dot = -FLT_MAX;
  return dot;
}

// Takes a block of n (1 to 32) keys into st: s is this lane's score (key lane, if lane < n);
// value(t, d) reads element d of the block's value t.
template <class V> __device__ void absorb(const AttentionRows& a, State& st, float s, int n, V value) {
  const int lane = threadIdx.x % 32;
  const bool present = lane < n;
  if (!present) s = -INFINITY;
  const float m2 = fmaxf(st.m, warp_max(s)), r = ref_of(m2);
  const float p = present ? expf(s - r) : 0.0f, fa = expf(st.m - r);
  st.l = __fadd_rn(__fmul_rn(st.l, fa), warp_sum(p));
  st.m = m2;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) st.acc[c] = __fmul_rn(st.acc[c], fa);
  for (int t = 0; t < n; ++t) {
    const float pt = __shfl_sync(0xffffffffu, p, t);
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int64_t d = lane + 32 * c;
      if (d < a.Dv) st.acc[c] = __fmaf_rn(pt, value(t, d), st.acc[c]);
    }
  }
}

// st with o merged in (o's keys after st's).
__device__ void merge(State& st, float m, float l, const float* acc, int64_t Dv) {
  const float m2 = fmaxf(st.m, m), r = ref_of(m2), fa = expf(st.m - r), fb = expf(m - r);
  st.l = __fadd_rn(__fmul_rn(st.l, fa), __fmul_rn(l, fb));
  st.m = m2;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int64_t d = threadIdx.x % 32 + 32 * c;
    st.acc[c] = __fadd_rn(__fmul_rn(st.acc[c], fa), d < Dv ? __fmul_rn(acc[d], fb) : 0.0f);
  }
}

// The sink taken in, divided out, written (lane c's elements of output row `row`).
__device__ void finish(const AttentionRows& a, State& st, int64_t h, int64_t row) {
  if (a.sinks) {
    const float s = a.sinks[h];
    merge(st, s, 1.0f, nullptr, 0);
  }
  float* out = a.out + row * a.Dv;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int64_t d = threadIdx.x % 32 + 32 * c;
    if (d < a.Dv) out[d] = __fdiv_rn(st.acc[c], st.l);
  }
}

// Keys [j0, j0 + n) of row r from global memory.
template <class T>
__device__ void global_block(const AttentionRows& a, const RowAt& r, const float* qs, State& st, int64_t j0, int n) {
  const T* k = static_cast<const T*>(a.k) + r.b * a.kst[0] + r.g * a.kst[1];
  const T* v = static_cast<const T*>(a.v) + r.b * a.vst[0] + r.g * a.vst[1];
  const int lane = threadIdx.x % 32;
  const float s = lane < n ? score(a, r, qs, k + (j0 + lane) * a.kst[2], j0 + lane) : 0.0f;
  absorb(a, st, s, n, [&](int t, int64_t d) { return as_float(v[(j0 + t) * a.vst[2] + d]); });
}

// All of row r's keys, from global memory.
template <class T> __device__ void global_rows(const AttentionRows& a, const RowAt& r, const float* qs, State& st) {
  for (int64_t j0 = r.begin; j0 < r.end; j0 += 32)
    global_block<T>(a, r, qs, st, j0, int(r.end - j0 < 32 ? r.end - j0 : 32));
}

template <class T> __global__ void __launch_bounds__(kDecodeWarps * 32) decode_kernel(AttentionRows a) {
  __shared__ float qs[kAttentionMaxDim];
  __shared__ float parts[kDecodeWarps][2 + kAttentionMaxDim];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row = blockIdx.x;
  RowAt r = row_at(a, row);
  find_begin(a, r);
  if (warp == 0) stage_q(a, r, qs);
  __syncthreads();
  State st;
  for (int64_t p0 = r.begin + int64_t(warp) * kPart; p0 < r.end; p0 += int64_t(kDecodeWarps) * kPart)
    for (int64_t j0 = p0; j0 < p0 + kPart && j0 < r.end; j0 += 32)
      global_block<T>(a, r, qs, st, j0, int(r.end - j0 < 32 ? r.end - j0 : 32));
  if (lane == 0) parts[warp][0] = st.m, parts[warp][1] = st.l;
#pragma unroll
  for (int c = 0; c < kPerLane; ++c)
    if (lane + 32 * c < a.Dv) parts[warp][2 + lane + 32 * c] = st.acc[c];
  __syncthreads();
  if (warp != 0) return;
  State all;
  for (int w = 0; w < kDecodeWarps; ++w) merge(all, parts[w][0], parts[w][1], parts[w] + 2, a.Dv);
  finish(a, all, r.h, row);
}

template <class T> __global__ void __launch_bounds__(kPrefillRows * 32) prefill_kernel(AttentionRows a) {
  __shared__ float qs[kPrefillRows][kPrefillMaxDim];
  __shared__ float ks[32][kPrefillMaxDim + 1];  // padded: lanes read different keys' element d
  __shared__ float vs[32][kPrefillMaxDim];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t tiles = (a.Lq + kPrefillRows - 1) / kPrefillRows, head = blockIdx.x / tiles;
  const int64_t i0 = blockIdx.x % tiles * kPrefillRows, row = head * a.Lq + i0 + warp;
  const bool mine = i0 + warp < a.Lq;
  RowAt r = row_at(a, mine ? row : head * a.Lq + i0);
  find_begin(a, r);
  if (mine) stage_q(a, r, qs[warp]);
  // The block's keys: from the last row's first visible key up to the last of its rows' ends. A row
  // whose first visible key is another (in a left-padded batch, a row of pads) reads its keys from
  // global memory after the block's loop.
  const int64_t last_row = (i0 + kPrefillRows < a.Lq ? i0 + kPrefillRows : a.Lq) - 1;
  const RowAt rf = row_at(a, head * a.Lq + i0);
  RowAt rl = row_at(a, head * a.Lq + last_row);
  find_begin(a, rl);
  const int64_t end = rf.all_masked || rl.all_masked ? a.Lk : rl.end;  // a row that sees no key reads all
  const bool shared_keys = mine && r.begin == rl.begin;
  const T* k = static_cast<const T*>(a.k) + r.b * a.kst[0] + r.g * a.kst[1];
  const T* v = static_cast<const T*>(a.v) + r.b * a.vst[0] + r.g * a.vst[1];
  State st;
  for (int64_t j0 = rl.begin; j0 < end; j0 += 32) {
    const int n = int(end - j0 < 32 ? end - j0 : 32);
    __syncthreads();  // the previous block's keys are read
    for (int e = threadIdx.x; e < n * a.D; e += kPrefillRows * 32)
      ks[e / a.D][e % a.D] = as_float(k[(j0 + e / a.D) * a.kst[2] + e % a.D]);
    for (int e = threadIdx.x; e < n * a.Dv; e += kPrefillRows * 32)
      vs[e / a.Dv][e % a.Dv] = as_float(v[(j0 + e / a.Dv) * a.vst[2] + e % a.Dv]);
    __syncthreads();
    if (!shared_keys || j0 >= r.end) continue;
    const int mine_n = int(r.end - j0 < n ? r.end - j0 : n);
    const float s = lane < mine_n ? score(a, r, qs[warp], ks[lane], j0 + lane) : 0.0f;
    absorb(a, st, s, mine_n, [&](int t, int64_t d) { return vs[t][d]; });
  }
  if (!mine) return;
  if (!shared_keys) global_rows<T>(a, r, qs[warp], st);
  finish(a, st, r.h, row);
}

template <class T> __global__ void __launch_bounds__(kSimpleWarps * 32) simple_kernel(AttentionRows a) {
  __shared__ float qs[kSimpleWarps][kAttentionMaxDim];
  const int warp = threadIdx.x / 32;
  const int64_t row = int64_t(blockIdx.x) * kSimpleWarps + warp;
  if (row >= a.B * a.Hq * a.Lq) return;
  RowAt r = row_at(a, row);
  find_begin(a, r);
  stage_q(a, r, qs[warp]);
  State st;
  global_rows<T>(a, r, qs[warp], st);
  finish(a, st, r.h, row);
}

template <class T> void launch(const AttentionRows& a, cudaStream_t stream) {
  const int64_t rows = a.B * a.Hq * a.Lq;
  if (a.Lq <= kDecodeRows) {
    decode_kernel<T><<<unsigned(rows), kDecodeWarps * 32, 0, stream>>>(a);
  } else if (a.D <= kPrefillMaxDim && a.Dv <= kPrefillMaxDim) {
    const int64_t tiles = (a.Lq + kPrefillRows - 1) / kPrefillRows;
    prefill_kernel<T><<<unsigned(a.B * a.Hq * tiles), kPrefillRows * 32, 0, stream>>>(a);
  } else {
    simple_kernel<T><<<unsigned((rows + kSimpleWarps - 1) / kSimpleWarps), kSimpleWarps * 32, 0, stream>>>(a);
  }
}

}  // namespace

void attention_rows(const AttentionRows& a, cudaStream_t stream) {
  if (a.kv == Dtype::float16)
    launch<f16>(a, stream);
  else if (a.kv == Dtype::bfloat16)
    launch<bf16>(a, stream);
  else
    launch<float>(a, stream);
}

}  // namespace nuvec::cuda
