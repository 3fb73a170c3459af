// The FFT's loops, one build per instruction set (backend/cpu/simd/fft.cpp); backend/cpu/fft*.cpp
// plan and drive them (docs/fft.md, "Algorithm").
//
// A block holds kLanes independent complex sequences of `rows` values in split form: re[r * kLanes
// + l] and im[...] for row r of lane l. Every loop is lane-wise (vertical), in the same order in
// every build and with no contraction, so an element's bits depend neither on the instruction set
// nor on which lane it sits in.
//
// pass: one Stockham step of radix p over a block of m * p * s rows, s = (product of the earlier
//   radices) * kLanes: for j < m, q < s, the p values x[q + s (j + k m)] become y[q + s (p j + r)]
//   = w_j^r * sum_k x_k e^{-2 pi i r k / p}, w_j^r = tw[2 ((p - 1) j + r - 1) + {0, 1}];
//   `cs` holds cos and sin of 2 pi k / p for k < p (radices other than 2, 3, 4, 5).
// gather: rows x kLanes values from floats at re + r * rs + l * ls (im likewise; a null im gives
//   zeros) into the block, lanes >= lanes_valid zero. scatter: back, times `scale` (a null im
//   drops the imaginary parts).
// mul_rows: row r of the block times w[r] (complex, interleaved); mul_cells: cell (r, l) times
//   (wr, wi)[r * ws + l].
// real_post / real_pre: the r2c and c2r passes between a length-2h real transform and its
//   half-length complex one, on a block (lanes kLanes) or on one interleaved sequence (lanes 1);
//   each does the pairs (k, h - k) for k in [k0, k1), k1 <= h / 2 + 1.
#pragma once
#include <cstdint>

namespace nuvec::cpu {

constexpr int kFftLanes = 8;

#define NUVEC_DECLARE_FFT(ns)                                                                                          \
  namespace ns {                                                                                                       \
  void fft_pass(int p, int64_t m, int64_t s, const float* tw, const float* cs, const float* xr, const float* xi,       \
                float* yr, float* yi);                                                                                 \
  void fft_gather(const float* re, const float* im, int64_t rs, int64_t ls, int64_t rows, int lanes_valid, float* br, \
                  float* bi);                                                                                          \
  void fft_scatter(const float* br, const float* bi, int64_t rows, int lanes_valid, float scale, float* re, float* im, \
                   int64_t rs, int64_t ls);                                                                            \
  void fft_mul_rows(float* br, float* bi, int64_t rows, const float* w);                                               \
  void fft_mul_cells(float* br, float* bi, int64_t rows, const float* wr, const float* wi, int64_t ws);                \
  void fft_real_post(float* re, float* im, int64_t rs, int64_t h, int lanes, const float* w, int64_t k0, int64_t k1);  \
  void fft_real_pre(float* re, float* im, int64_t rs, int64_t h, int lanes, const float* w, int64_t k0, int64_t k1);   \
  }
NUVEC_DECLARE_FFT(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_FFT(avx2)
NUVEC_DECLARE_FFT(avx512)
#endif
#undef NUVEC_DECLARE_FFT

}  // namespace nuvec::cpu
