// The tiled kernels for products of more than kRowIndependentRows rows when cuBLASLt is absent
// (docs/cuda.md). Each block owns a 64 x 64 tile of C and walks K in order, so every element is one
// fixed sequence (the same bits run to run) and no block reads another's sums.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backend/cuda/matmul.cuh"

namespace nuvec::cuda {
namespace {

constexpr int kTile = 64;

// float32 and float64: 256 threads, each a 4 x 4 block of C (rows ty + 16 i, columns tx + 16 j),
// c = fma(a[k], b[k], c) for k = 0, 1, ... as on the CPU.
constexpr int kFmaK = 16;

template <class T> __global__ void __launch_bounds__(256) fma_kernel(Gemm g) {
  __shared__ T As[kFmaK][kTile], Bs[kFmaK][kTile];
  int tx = int(threadIdx.x) % 16, ty = int(threadIdx.x) / 16;
  int64_t row0 = int64_t(blockIdx.x) * kTile, col0 = int64_t(blockIdx.y) * kTile;
  for (int64_t bi = blockIdx.z; bi < g.batch; bi += gridDim.z) {
    int64_t oa, ob;
    batch_offsets(g, bi, oa, ob);
    const T* A = static_cast<const T*>(g.a) + oa;
    const T* B = static_cast<const T*>(g.b) + ob;
    T acc[4][4] = {};
    for (int64_t k0 = 0; k0 < g.k; k0 += kFmaK) {
      for (int e = int(threadIdx.x); e < kFmaK * kTile; e += 256) {
        int r = e / kFmaK, kk = e % kFmaK;  // A: consecutive threads along k
        int64_t gr = row0 + r, gk = k0 + kk;
        As[kk][r] = gr < g.m && gk < g.k ? A[gr * g.sam + gk * g.sak] : T(0);
        int c = e % kTile, kb = e / kTile;  // B: consecutive threads along n
        int64_t gc = col0 + c, gkb = k0 + kb;
        Bs[kb][c] = gc < g.n && gkb < g.k ? B[gkb * g.sbk + gc * g.sbn] : T(0);
      }
      __syncthreads();
      int kn = int(min(int64_t(kFmaK), g.k - k0));  // no padded k: fma(0, 0, c) could turn -0 into +0
      for (int kk = 0; kk < kn; ++kk) {
        T a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i], b[i] = Bs[kk][tx + 16 * i];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
      }
      __syncthreads();
    }
    T* C = static_cast<T*>(g.c) + bi * g.m * g.n;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        int64_t r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
        if (r < g.m && c < g.n) C[r * g.n + c] = acc[i][j];
      }
  }
}

// float16 and bfloat16: 128 threads (2 x 2 warps, 32 x 32 of C each) on tensor cores,
// mma.m16n8k16 with float32 accumulation over K in steps of 16.
constexpr int kMmaK = 32;
constexpr int kPad = 8;  // shared rows 80 bytes apart: the fragment reads spread over the banks

template <class T> struct MmaOp;
template <> struct MmaOp<__half> {
  static __device__ void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  static __device__ __half from(float x) { return __float2half_rn(x); }
};
template <> struct MmaOp<__nv_bfloat16> {
  static __device__ void run(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  static __device__ __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
};

template <class T> __global__ void __launch_bounds__(128) mma_kernel(Gemm g) {
  // Raw 16-bit values; both tiles k-contiguous, as the fragments want A row-major and B by columns.
  __shared__ __align__(16) uint16_t As[kTile][kMmaK + kPad], Bs[kTile][kMmaK + kPad];
  int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  int wm = warp / 2, wn = warp % 2, gq = lane / 4, t = lane % 4;
  int64_t row0 = int64_t(blockIdx.x) * kTile, col0 = int64_t(blockIdx.y) * kTile;
  auto word = [](const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); };
  for (int64_t bi = blockIdx.z; bi < g.batch; bi += gridDim.z) {
    int64_t oa, ob;
    batch_offsets(g, bi, oa, ob);
    const uint16_t* A = static_cast<const uint16_t*>(g.a) + oa;
    const uint16_t* B = static_cast<const uint16_t*>(g.b) + ob;
    float acc[2][4][4] = {};
    for (int64_t k0 = 0; k0 < g.k; k0 += kMmaK) {
      for (int e = int(threadIdx.x); e < kTile * kMmaK; e += 128) {
        int r = e / kMmaK, kk = e % kMmaK;
        int64_t gk = k0 + kk, gr = row0 + r, gc = col0 + r;
        As[r][kk] = gr < g.m && gk < g.k ? A[gr * g.sam + gk * g.sak] : uint16_t(0);  // zero in both types
        Bs[r][kk] = gc < g.n && gk < g.k ? B[gk * g.sbk + gc * g.sbn] : uint16_t(0);
      }
      __syncthreads();
#pragma unroll
      for (int ks = 0; ks < kMmaK; ks += 16) {
        uint32_t a[2][4], b[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          int r = wm * 32 + mt * 16 + gq;
          a[mt][0] = word(&As[r][ks + 2 * t]), a[mt][1] = word(&As[r + 8][ks + 2 * t]);
          a[mt][2] = word(&As[r][ks + 8 + 2 * t]), a[mt][3] = word(&As[r + 8][ks + 8 + 2 * t]);
        }
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          int c = wn * 32 + nt * 8 + gq;
          b[nt][0] = word(&Bs[c][ks + 2 * t]), b[nt][1] = word(&Bs[c][ks + 8 + 2 * t]);
        }
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) MmaOp<T>::run(acc[mt][nt], a[mt], b[nt]);
      }
      __syncthreads();
    }
    T* C = static_cast<T*>(g.c) + bi * g.m * g.n;
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int h = 0; h < 4; ++h) {  // h: (row gq or gq + 8) x (column 2t or 2t + 1)
          int64_t r = row0 + wm * 32 + mt * 16 + gq + (h / 2) * 8, c = col0 + wn * 32 + nt * 8 + 2 * t + h % 2;
          if (r < g.m && c < g.n) C[r * g.n + c] = MmaOp<T>::from(acc[mt][nt][h]);
        }
  }
}

// Row tiles along x, whose limit is 2^31 - 1 (products of many merged rows).
void launch(const Gemm& g, void (*kernel)(Gemm), int threads, cudaStream_t stream) {
  dim3 grid(unsigned((g.m + kTile - 1) / kTile), unsigned((g.n + kTile - 1) / kTile),
            unsigned(std::min<int64_t>(g.batch, 65535)));
  kernel<<<grid, threads, 0, stream>>>(g);
}

}  // namespace

void gemm_tiled(const Gemm& g, Dtype d, cudaStream_t stream) {
  switch (d) {
    case Dtype::float32: return launch(g, fma_kernel<float>, 256, stream);
    case Dtype::float16: return launch(g, mma_kernel<__half>, 128, stream);
    case Dtype::bfloat16: return launch(g, mma_kernel<__nv_bfloat16>, 128, stream);
    default: return launch(g, fma_kernel<double>, 256, stream);
  }
}

}  // namespace nuvec::cuda
