// The row-wise matmul kernel (docs/cuda.md, "Matrix products"): products of up to
// kRowIndependentRows rows, whose elements each run a sequence of operations fixed by K alone, so a
// row gets the bits of its one-row product.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backend/cuda/matmul.cuh"

namespace nuvec::cuda {
namespace {

// The row-wise kernel's sequence for one element: K is cut into segments of kSeg consecutive k;
// segment s belongs to lane s % 32 of a warp, which runs c = fma(a[k], b[k], c) over its segments'
// k in increasing order; then the 32 partial sums add in a fixed butterfly (xor 16, 8, 4, 2, 1).
constexpr int kSeg = 8;
constexpr int kRows = 8;   // rows per warp: B's segment is read once for them
constexpr int kWarps = 8;  // warps per block, one output column each

// Loads in the compute type (float32 for the half types, as on the CPU) and stores rounding to
// nearest even.
__device__ inline float ld(const float* p) { return *p; }
__device__ inline double ld(const double* p) { return *p; }
__device__ inline float ld(const __half* p) { return __half2float(*p); }
__device__ inline float ld(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline void put(float* p, float x) { *p = x; }
__device__ inline void put(double* p, double x) { *p = x; }
__device__ inline void put(__half* p, float x) { *p = __float2half_rn(x); }
__device__ inline void put(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

__device__ inline float fma_acc(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ inline double fma_acc(double a, double b, double c) { return __fma_rn(a, b, c); }

// One segment of unit-stride elements as raw 16-byte words (the caller checked alignment), and
// the words' elements in the compute type.
template <class T> struct Segment { uint4 w[sizeof(T) * kSeg / 16]; };
template <class T> __device__ inline Segment<T> load_segment(const T* p) {
  Segment<T> s;
#pragma unroll
  for (int i = 0; i < int(sizeof(s.w) / 16); ++i) s.w[i] = __ldg(reinterpret_cast<const uint4*>(p) + i);
  return s;
}
template <class T> __device__ inline auto element(const Segment<T>& s, int j) {
  return ld(reinterpret_cast<const T*>(s.w) + j);
}

// Segments of B in flight per lane before their products: enough bytes requested to keep HBM busy
// in a matrix-vector product, whose A row stays in cache.
constexpr int kAhead = 4;

// Warp w of block (x, y) computes column x * kWarps + w for rows y * kRows ... (+ kRows), for each
// batch. `Vec`: A and B have unit k stride and 16-byte aligned segments.
template <class T, class Acc, bool Vec> __global__ void __launch_bounds__(kWarps * 32) rowwise_kernel(Gemm g) {
  int lane = int(threadIdx.x) & 31;
  int64_t col = int64_t(blockIdx.x) * kWarps + int64_t(threadIdx.x) / 32;
  int64_t row0 = int64_t(blockIdx.y) * kRows;
  if (col >= g.n) return;  // the whole warp: no shuffle below misses a lane
  int rows = int(min(int64_t(kRows), g.m - row0));
  for (int64_t bi = blockIdx.z; bi < g.batch; bi += gridDim.z) {
    int64_t oa, ob;
    batch_offsets(g, bi, oa, ob);
    const T* A = static_cast<const T*>(g.a) + oa + row0 * g.sam;
    const T* B = static_cast<const T*>(g.b) + ob + col * g.sbn;
    Acc acc[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = Acc(0);
    // Segments in increasing order for each lane; kAhead at a time where the whole group fits.
    int64_t k0 = int64_t(lane) * kSeg;
    if (Vec)
      for (; k0 + (kAhead - 1) * 32 * kSeg + kSeg <= g.k; k0 += kAhead * 32 * kSeg) {
        Segment<T> bs[kAhead];
#pragma unroll
        for (int u = 0; u < kAhead; ++u) bs[u] = load_segment(B + k0 + u * 32 * kSeg);
#pragma unroll
        for (int u = 0; u < kAhead; ++u)
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            if (r >= rows) break;
            Segment<T> as = load_segment(A + r * g.sam + k0 + u * 32 * kSeg);
#pragma unroll
            for (int j = 0; j < kSeg; ++j) acc[r] = fma_acc(element(as, j), element(bs[u], j), acc[r]);
          }
      }
    for (; k0 < g.k; k0 += 32 * kSeg) {
      if (Vec && k0 + kSeg <= g.k) {
        Segment<T> bs = load_segment(B + k0);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          if (r >= rows) break;
          Segment<T> as = load_segment(A + r * g.sam + k0);
#pragma unroll
          for (int j = 0; j < kSeg; ++j) acc[r] = fma_acc(element(as, j), element(bs, j), acc[r]);
        }
      } else {
        for (int64_t kk = k0; kk < min(k0 + kSeg, g.k); ++kk) {
          Acc bv = ld(B + kk * g.sbk);
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            if (r < rows) acc[r] = fma_acc(ld(A + r * g.sam + kk * g.sak), bv, acc[r]);
        }
      }
    }
    // Every lane ends with the same bits: each step adds the same two values on both lanes.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], off);
    if (lane == 0) {
      T* C = static_cast<T*>(g.c) + (bi * g.m + row0) * g.n + col;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (r < rows) put(C + r * g.n, acc[r]);
    }
  }
}

// The same sequence for B with unit stride along n (x @ W, W row-major), for a few rows: thread
// (x, y) of a block runs lane y's chain for 8 adjacent columns, reading each k's 8 values of B in
// 16-byte loads (the threads of a row of the block read 128 contiguous bytes); the 32 lanes' sums
// then add in shared memory by halving (p[l] += p[l + h], h = 16, 8, 4, 2, 1), which is the
// butterfly's sum at lane 0. Block (blockIdx.x, row blockIdx.y) covers 8 x 8 columns.
constexpr int kColGroups = 8;

template <class T, class Acc> __global__ void __launch_bounds__(kColGroups * 32) columns_kernel(Gemm g) {
  __shared__ Acc part[32][kColGroups * kSeg];
  int lane = int(threadIdx.y), group = int(threadIdx.x);
  int64_t col = (int64_t(blockIdx.x) * kColGroups + group) * kSeg;  // n is a multiple of kSeg
  int64_t row = blockIdx.y;
  for (int64_t bi = blockIdx.z; bi < g.batch; bi += gridDim.z) {
    int64_t oa, ob;
    batch_offsets(g, bi, oa, ob);
    const T* A = static_cast<const T*>(g.a) + oa + row * g.sam;
    const T* B = static_cast<const T*>(g.b) + ob + col;
    Acc acc[kSeg];
#pragma unroll
    for (int c = 0; c < kSeg; ++c) acc[c] = Acc(0);
    if (col < g.n)
      for (int64_t k0 = int64_t(lane) * kSeg; k0 < g.k; k0 += 32 * kSeg) {
        int64_t kn = min(int64_t(kSeg), g.k - k0);
        Segment<T> bs[kSeg];
        Acc av[kSeg];
#pragma unroll
        for (int j = 0; j < kSeg; ++j)
          if (j < kn) bs[j] = load_segment(B + (k0 + j) * g.sbk), av[j] = ld(A + (k0 + j) * g.sak);
#pragma unroll
        for (int j = 0; j < kSeg; ++j)
          if (j < kn)
#pragma unroll
            for (int c = 0; c < kSeg; ++c) acc[c] = fma_acc(av[j], element(bs[j], c), acc[c]);
      }
    __syncthreads();  // part is free: the previous batch's sums have been read
#pragma unroll
    for (int c = 0; c < kSeg; ++c) part[lane][group * kSeg + c] = acc[c];
    for (int h = 16; h > 0; h /= 2) {
      __syncthreads();
      if (lane < h)
#pragma unroll
        for (int c = 0; c < kSeg; ++c) part[lane][group * kSeg + c] += part[lane + h][group * kSeg + c];
    }
    if (lane == 0 && col < g.n) {
      T* C = static_cast<T*>(g.c) + (bi * g.m + row) * g.n + col;
#pragma unroll
      for (int c = 0; c < kSeg; ++c) put(C + c, part[0][group * kSeg + c]);
    }
  }
}

// Whether columns_kernel can read B: unit stride along n, n a multiple of the 8 columns a thread
// reads, and every 8-column load 16-byte aligned.
bool columns_fit(const Gemm& g, size_t item) {
  auto ok = [&](int64_t elements) { return (elements * int64_t(item)) % 16 == 0; };
  if (g.sbn != 1 || g.n % kSeg || g.m > kRows || reinterpret_cast<uintptr_t>(g.b) % 16 || !ok(g.sbk)) return false;
  for (int d = 0; d < g.batch_dims; ++d)
    if (!ok(g.batch_b[d])) return false;
  return true;
}

// Whether every segment the kernel reads in 16-byte loads starts 16-byte aligned.
bool segments_aligned(const Gemm& g, size_t item) {
  if (g.sak != 1 || g.sbk != 1) return false;
  auto ok = [&](int64_t elements) { return (elements * int64_t(item)) % 16 == 0; };
  if (reinterpret_cast<uintptr_t>(g.a) % 16 || reinterpret_cast<uintptr_t>(g.b) % 16) return false;
  if (!(g.m == 1 || ok(g.sam)) || !(g.n == 1 || ok(g.sbn))) return false;
  for (int d = 0; d < g.batch_dims; ++d)
    if (!ok(g.batch_a[d]) || !ok(g.batch_b[d])) return false;
  return true;
}

template <class T, class Acc> void launch_rowwise(const Gemm& g, cudaStream_t stream) {
  if (columns_fit(g, sizeof(T))) {
    dim3 grid(unsigned((g.n / kSeg + kColGroups - 1) / kColGroups), unsigned(g.m),
              unsigned(std::min<int64_t>(g.batch, 65535)));
    columns_kernel<T, Acc><<<grid, dim3(kColGroups, 32), 0, stream>>>(g);
    return;
  }
  dim3 grid(unsigned((g.n + kWarps - 1) / kWarps), unsigned((g.m + kRows - 1) / kRows),
            unsigned(std::min<int64_t>(g.batch, 65535)));
  if (segments_aligned(g, sizeof(T)))
    rowwise_kernel<T, Acc, true><<<grid, kWarps * 32, 0, stream>>>(g);
  else
    rowwise_kernel<T, Acc, false><<<grid, kWarps * 32, 0, stream>>>(g);
}

}  // namespace

void gemm_rowwise(const Gemm& g, Dtype d, cudaStream_t stream) {
  switch (d) {
    case Dtype::float32: return launch_rowwise<float, float>(g, stream);
    case Dtype::float16: return launch_rowwise<__half, float>(g, stream);
    case Dtype::bfloat16: return launch_rowwise<__nv_bfloat16, float>(g, stream);
    default: return launch_rowwise<double, double>(g, stream);
  }
}

}  // namespace nuvec::cuda
