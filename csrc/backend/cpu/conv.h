// The convolution kernels, one build per instruction set (backend/cpu/simd/conv.cpp), chosen at
// run time as the matrix product's are. Each output element is the chain c = 0, then
// c = fma(x, w, c) over the kernel taps in order and, within a tap, over the input channels in
// order; a split into tap blocks stores and reloads c exactly, so no tiling or thread count
// changes a bit.
#pragma once
#include <cstdint>

#include "backend/cpu/matmul.h"

namespace nuvec::cpu {

// Implicit GEMM: c[i * ldc + j] for i < R rows, j < NR columns; row i of tap t reads its `cin`
// input channels at rows[t * MR + i] (a zero run for taps in the padding), the weights come packed
// as (tap, channel) by NR columns. Starts from c when `accumulate`, else from zero. `stream`: c is
// 64-byte aligned, as is ldc in bytes, and the stores may go around the caches (sfence after).
template <class T> using ConvMicro = void (*)(int64_t taps, int64_t cin, const T* const* rows, const T* b, T* c,
                                              int64_t ldc, bool accumulate, bool stream);

// Depthwise (one input and one output channel per group): out[c] = sum over taps t of
// ptrs[t][c] * w[t * channels + c], for c < channels.
template <class T>
using DepthwiseKernel = void (*)(int64_t taps, int64_t channels, const T* const* ptrs, const T* w, T* out);

struct ConvKernels {
  MicroShape f32_shape, f64_shape;
  ConvMicro<float> f32[kMaxMR + 1] = {};  // by the rows of the tile, 1 .. mr
  ConvMicro<double> f64[kMaxMR + 1] = {};
  // The same for one output channel (NR = 1), vectorised along the input channels instead.
  ConvMicro<float> dot_f32[kMaxMR + 1] = {};
  ConvMicro<double> dot_f64[kMaxMR + 1] = {};
  DepthwiseKernel<float> depthwise_f32 = nullptr;
  DepthwiseKernel<double> depthwise_f64 = nullptr;
};

const ConvKernels& conv_kernels();

#define NUVEC_DECLARE_CONV(ns)    \
  namespace ns {                  \
  void fill_conv(ConvKernels& t); \
  }
NUVEC_DECLARE_CONV(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_CONV(avx2)
NUVEC_DECLARE_CONV(avx512)
#endif
#undef NUVEC_DECLARE_CONV

}  // namespace nuvec::cpu
