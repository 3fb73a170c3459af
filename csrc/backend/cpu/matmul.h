// The matrix-product kernels, one build per instruction set (backend/cpu/simd/matmul.cpp), chosen
// at run time by cpu::isa(). Every kernel computes each output element with the same sequence of
// operations over K: c = 0, then c = fma(a[k], b[k], c) for k = 0, 1, ... (float32, float64), or
// c = dot2(c, a[2p..2p+1], b[2p..2p+1]) for p = 0, 1, ... (vdpbf16ps on bfloat16 pairs; on AMX
// processors every bfloat16 product takes the tiles' own sums instead, matmul_amx.h). A product
// split into K blocks stores and reloads c in its compute type, which changes no bits; so any
// path, tile or thread gives each row the bits of its one-row product.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace nuvec::cpu {

// c[i * ldc + j] for i < R, j < NR from a packed A panel (kc x MR, k-major; the kernel for R rows
// reads the first R of each MR) and a packed B panel (kc x NR, k-major); starts from c's values
// when `accumulate`, else from zero. For bfloat16 pairs, kc counts pairs and a panel holds, per
// pair, MR (or NR) 32-bit pairs.
using MicroF32 = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate);
using MicroF64 = void (*)(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, bool accumulate);
using MicroBf16 = void (*)(int64_t kc, const uint16_t* a, const uint16_t* b, float* c, int64_t ldc, bool accumulate);

// Few rows straight from unpacked B (unit stride along N, rows ldb elements apart; the weights
// are read once): c[i * ldc + j] for i < m, j < n. `a` holds m rows of k float32 values
// (or, for bfloat16 pairs, k pairs of bfloat16 as 32-bit words); `b` is of the kernel's dtype.
using SkinnyKernel = void (*)(int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, int64_t n,
                              float* c, int64_t ldc);
using SkinnyF64 = void (*)(int64_t m, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb, int64_t n,
                           double* c, int64_t ldc);

// dst[c * ldd + r] = row r's element c, for r < rows, c < cols: row r starts at src + r * row_bytes
// and holds contiguous 4-byte (or 8-byte) elements. Packs panels from k-contiguous operands.
using PackTransposeKernel = void (*)(const char* src, int64_t row_bytes, int64_t rows, int64_t cols, void* dst,
                                     int64_t ldd);

// dst[(l / L) * panel_words + l % L] = r0[l] | r1[l] << 16 for l < lanes: two rows of k (2p and
// 2p + 1) of 16-bit values as bfloat16 pairs, one L-lane panel after another. Packs B for vdpbf16ps.
using PackPairsKernel = void (*)(const uint16_t* r0, const uint16_t* r1, int64_t lanes, int L, uint32_t* dst,
                                 int64_t panel_words);

struct MicroShape { int mr = 0, nr = 0; };

constexpr int kMaxMR = 16;

struct MatmulKernels {
  MicroShape f32_shape, f64_shape, bf16_shape;
  // Indexed by the rows of the tile, 1 .. mr (the last row panel of A may have fewer).
  MicroF32 f32[kMaxMR + 1] = {};
  MicroF64 f64[kMaxMR + 1] = {};
  MicroBf16 bf16[kMaxMR + 1] = {};  // empty where the processor lacks AVX512_BF16: bfloat16 computes as float32
  int skinny_rows = 0;              // the skinny kernels take m <= skinny_rows
  SkinnyKernel skinny_f32 = nullptr, skinny_f16 = nullptr, skinny_bf16_as_f32 = nullptr;
  SkinnyKernel skinny_bf16 = nullptr;  // bfloat16 pairs, with `bf16`
  // float32 B with unit stride along k instead (x @ W.T, W of n rows of k values ldb apart);
  // AVX-512 builds only.
  SkinnyKernel skinny_t_f32 = nullptr;
  SkinnyF64 skinny_f64 = nullptr;
  PackTransposeKernel transpose32 = nullptr, transpose64 = nullptr;
  PackPairsKernel pack_pairs = nullptr;
};

const MatmulKernels& matmul_kernels();

// One product C (m x n) = A (m x k) B (k x n) through matmul's own paths (backend/cpu/matmul.cpp),
// for the products built on it (gathered, segmented). A, B and C are of dtype `d` (a float dtype);
// strides are in elements; C's rows are ldc elements apart, its columns contiguous. Each row of C
// gets the bits of its one-row product, whatever m, the strides or the thread count.
// `accumulate` (float32, float64 and complex64 only) computes C += A B instead: each element's
// sequence starts from C's value rather than from zero (the factorisations' updates, factor.h).
struct GemmOperand {
  const char* data;
  int64_t row_stride, col_stride;
};
void gemm(Dtype d, GemmOperand a, GemmOperand b, int64_t m, int64_t n, int64_t k, char* c, int64_t ldc,
          bool accumulate = false);

#define NUVEC_DECLARE_MATMUL(ns)      \
  namespace ns {                      \
  void fill_matmul(MatmulKernels& t); \
  }
NUVEC_DECLARE_MATMUL(portable)
#if defined(__x86_64__)
NUVEC_DECLARE_MATMUL(avx2)
NUVEC_DECLARE_MATMUL(avx512)
#endif
#undef NUVEC_DECLARE_MATMUL

}  // namespace nuvec::cpu
