// Matrix-product kernels: register-blocked micro-kernels over packed panels, and skinny kernels
// that read unpacked weights once for a few rows. All of them compute each output element with
// the same chain over K (see gemm.h), so they agree bit for bit.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <type_traits>

#include "backend/cpu/gemm.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

typedef double VecD __attribute__((vector_size(kVecBytes)));
typedef uint16_t VecH __attribute__((vector_size(kVecBytes / 2)));  // kLanesF 16-bit values
typedef _Float16 VecF16 __attribute__((vector_size(kVecBytes / 2)));
typedef uint32_t VecU __attribute__((vector_size(kVecBytes)));

// One fused multiply-add per lane; the portable x86-64 build has no FMA, so every path there
// rounds the product and the sum separately, in the same order.
inline VecF fmadd(VecF a, VecF b, VecF c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__AVX2__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}
inline VecD fmadd(VecD a, VecD b, VecD c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_pd(a, b, c);
#elif defined(__AVX2__)
  return _mm256_fmadd_pd(a, b, c);
#else
  return a * b + c;
#endif
}

template <class V, class T>
inline V loadv(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V, class T>
inline void storev(T* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// Register sizes per build: MR rows by NV vectors in the micro-kernels; the skinny kernels keep
// up to kSkinnyR rows by kSkinnyNV vectors of accumulators.
#if defined(__AVX512F__)
constexpr int kMR = 14, kNV = 2, kSkinnyR = 6, kSkinnyNV = 4;
#elif defined(__AVX2__)
constexpr int kMR = 6, kNV = 2, kSkinnyR = 6, kSkinnyNV = 2;
#else
constexpr int kMR = 4, kNV = 2, kSkinnyR = 4, kSkinnyNV = 2;
#endif

template <class T, class V, int MR, int NV>
void micro(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
  constexpr int L = sizeof(V) / sizeof(T), NR = NV * L;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? loadv<V>(c + i * ldc + j * L) : V{};
  for (int64_t k = 0; k < kc; ++k, a += MR, b += NR) {
    V bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = loadv<V>(b + j * L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      V av = V{} + a[i];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) storev(c + i * ldc + j * L, acc[i][j]);
}

// kLanesF values of B's storage type, as float32.
template <class S>
inline VecF load_f32(const S* p) {
  if constexpr (std::is_same_v<S, float>) {
    return loadv<VecF>(p);
  } else if constexpr (std::is_same_v<S, bf16>) {
    VecU u = __builtin_convertvector(loadv<VecH>(p), VecU) << 16;
    VecF f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  } else {
    return __builtin_convertvector(loadv<VecF16>(p), VecF);
  }
}

// One block of up to NV vectors of columns for R rows; `width` < NV * kLanesF only in the last
// (partial) block, whose B values are copied into a zero-padded vector first.
template <class S, int R, int NV>
void skinny_block(int64_t k, const float* a, int64_t lda, const S* b, int64_t ldb, int64_t width, float* c,
                  int64_t ldc) {
  constexpr int L = kLanesF;
  VecF acc[R][NV] = {};
  bool partial = width < NV * L;
  for (int64_t kk = 0; kk < k; ++kk) {
    const S* row = b + kk * ldb;
    VecF bv[NV];
    if (!partial) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) bv[j] = load_f32(row + j * L);
    } else {
      S tmp[NV * L] = {};
      std::memcpy(tmp, row, size_t(width) * sizeof(S));
      for (int j = 0; j < NV; ++j) bv[j] = load_f32(tmp + j * L);
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      VecF av = VecF{} + a[i * lda + kk];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < R; ++i) {
    float out[NV * L];
    for (int j = 0; j < NV; ++j) storev(out + j * L, acc[i][j]);
    std::memcpy(c + i * ldc, out, size_t(width) * sizeof(float));
  }
}

template <class S, int R>
void skinny_rows(int64_t k, const float* a, int64_t lda, const S* b, int64_t ldb, int64_t n, float* c, int64_t ldc) {
  constexpr int W = kSkinnyNV * kLanesF;
  int64_t j = 0;
  for (; j + W <= n; j += W) skinny_block<S, R, kSkinnyNV>(k, a, lda, b + j, ldb, W, c + j, ldc);
  for (; j < n; j += kLanesF)
    skinny_block<S, R, 1>(k, a, lda, b + j, ldb, std::min<int64_t>(kLanesF, n - j), c + j, ldc);
}

// Rows in groups of up to kSkinnyR; a group of r rows runs the kernel built for exactly r.
template <class S, int R = kSkinnyR>
void skinny_group(int64_t r, int64_t k, const float* a, int64_t lda, const S* b, int64_t ldb, int64_t n, float* c,
                  int64_t ldc) {
  if constexpr (R > 1)
    if (r < R) return skinny_group<S, R - 1>(r, k, a, lda, b, ldb, n, c, ldc);
  skinny_rows<S, R>(k, a, lda, b, ldb, n, c, ldc);
}

template <class S>
void skinny(int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, int64_t n, float* c,
            int64_t ldc) {
  for (int64_t i = 0; i < m; i += kSkinnyR)
    skinny_group<S>(std::min<int64_t>(kSkinnyR, m - i), k, static_cast<const float*>(a) + i * lda, lda,
                    static_cast<const S*>(b), ldb, n, c + i * ldc, ldc);
}

// float64: the same blocking with one row at a time.
void skinny_f64(int64_t m, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb, int64_t n,
                double* c, int64_t ldc) {
  constexpr int L = kVecBytes / 8;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; j += 4 * L) {
      int64_t width = std::min<int64_t>(4 * L, n - j);
      VecD acc[4] = {};
      for (int64_t kk = 0; kk < k; ++kk) {
        double tmp[4 * L] = {};
        const double* row = b + kk * ldb + j;
        if (width < 4 * L) std::memcpy(tmp, row, size_t(width) * 8), row = tmp;
        VecD av = VecD{} + a[i * lda + kk];
        for (int v = 0; v < 4; ++v) acc[v] = fmadd(av, loadv<VecD>(row + v * L), acc[v]);
      }
      double out[4 * L];
      for (int v = 0; v < 4; ++v) storev(out + v * L, acc[v]);
      std::memcpy(c + i * ldc + j, out, size_t(width) * 8);
    }
  }
}

#if defined(__AVX512F__)
// bfloat16 pairs through vdpbf16ps: two products per lane and instruction, twice float32's rate.
#define NUVEC_BF16 __attribute__((target("avx512bf16")))

NUVEC_BF16 inline __m512 dot2(__m512 c, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b);
}

NUVEC_BF16 void micro_bf16(int64_t kc, const uint16_t* a, const uint16_t* b, float* c, int64_t ldc, bool accumulate) {
  constexpr int MR = kMR, NV = kNV;
  const uint32_t* ap = reinterpret_cast<const uint32_t*>(a);
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? _mm512_loadu_ps(c + i * ldc + j * 16) : _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, ap += MR, b += NV * 32) {
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + j * 32);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      __m512i av = _mm512_set1_epi32(int(ap[i]));
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = dot2(acc[i][j], av, bv[j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + i * ldc + j * 16, acc[i][j]);
}

// 16 columns of rows 2p and 2p+1 (zero past the last row) as bfloat16 pairs.
NUVEC_BF16 inline __m512i pairs(const uint16_t* r0, const uint16_t* r1, int64_t width) {
  __m256i x0, x1;
  if (width >= 16) {
    x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
    x1 = r1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1)) : _mm256_setzero_si256();
  } else {
    __mmask16 m = __mmask16((1u << width) - 1);
    x0 = _mm256_maskz_loadu_epi16(m, r0);
    x1 = r1 ? _mm256_maskz_loadu_epi16(m, r1) : _mm256_setzero_si256();
  }
  return _mm512_or_si512(_mm512_cvtepu16_epi32(x0), _mm512_slli_epi32(_mm512_cvtepu16_epi32(x1), 16));
}

template <int R, int NV>
NUVEC_BF16 void skinny_bf16_block(int64_t k, const uint32_t* a, int64_t lda, const uint16_t* b, int64_t ldb,
                                  int64_t width, float* c, int64_t ldc) {
  __m512 acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  int64_t kp = (k + 1) / 2;
  for (int64_t p = 0; p < kp; ++p) {
    const uint16_t* r0 = b + 2 * p * ldb;
    const uint16_t* r1 = 2 * p + 1 < k ? r0 + ldb : nullptr;
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j)
      bv[j] = pairs(r0 + j * 16, r1 ? r1 + j * 16 : nullptr, std::max<int64_t>(0, width - j * 16));
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      __m512i av = _mm512_set1_epi32(int(a[i * lda + p]));
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = dot2(acc[i][j], av, bv[j]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) {
      int64_t w = std::min<int64_t>(16, width - j * 16);
      if (w > 0) _mm512_mask_storeu_ps(c + i * ldc + j * 16, __mmask16((1u << w) - 1), acc[i][j]);
    }
}

template <int R>
NUVEC_BF16 void skinny_bf16_rows(int64_t k, const uint32_t* a, int64_t lda, const uint16_t* b, int64_t ldb,
                                 int64_t n, float* c, int64_t ldc) {
  constexpr int W = kSkinnyNV * 16;
  int64_t j = 0;
  for (; j + W <= n; j += W) skinny_bf16_block<R, kSkinnyNV>(k, a, lda, b + j, ldb, W, c + j, ldc);
  for (; j < n; j += 16) skinny_bf16_block<R, 1>(k, a, lda, b + j, ldb, std::min<int64_t>(16, n - j), c + j, ldc);
}

template <int R = kSkinnyR>
NUVEC_BF16 void skinny_bf16_group(int64_t r, int64_t k, const uint32_t* a, int64_t lda, const uint16_t* b,
                                  int64_t ldb, int64_t n, float* c, int64_t ldc) {
  if constexpr (R > 1)
    if (r < R) return skinny_bf16_group<R - 1>(r, k, a, lda, b, ldb, n, c, ldc);
  skinny_bf16_rows<R>(k, a, lda, b, ldb, n, c, ldc);
}

// `a`: m rows of ceil(k / 2) bfloat16 pairs (lda pairs apart).
NUVEC_BF16 void skinny_bf16(int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, int64_t n,
                            float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += kSkinnyR)
    skinny_bf16_group(std::min<int64_t>(kSkinnyR, m - i), k, static_cast<const uint32_t*>(a) + i * lda, lda,
                      static_cast<const uint16_t*>(b), ldb, n, c + i * ldc, ldc);
}
#undef NUVEC_BF16
#endif

}  // namespace

void fill_gemm(GemmKernels& t) {
  constexpr int LF = kLanesF, LD = kVecBytes / 8;
  t.f32_shape = {kMR, kNV * LF};
  t.f64_shape = {kMR, kNV * LD};
  t.f32 = &micro<float, VecF, kMR, kNV>;
  t.f64 = &micro<double, VecD, kMR, kNV>;
  t.skinny_rows = kSkinnyR;
  t.skinny_f32 = &skinny<float>;
  t.skinny_f16 = &skinny<f16>;
  t.skinny_bf16_as_f32 = &skinny<bf16>;
  t.skinny_f64 = &skinny_f64;
#if defined(__AVX512F__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) {
    t.bf16_shape = {kMR, kNV * 16};
    t.bf16 = &micro_bf16;
    t.skinny_bf16 = &skinny_bf16;
  }
#endif
}

}  // namespace nuvec::cpu::NUVEC_ISA
