// Matrix-product kernels: register-blocked micro-kernels over packed panels, and skinny kernels
// that read unpacked weights once for a few rows. All of them compute each output element with
// the same chain over K (see matmul.h), so they agree bit for bit.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <type_traits>
#include <utility>

#include "backend/cpu/matmul.h"
#include "backend/cpu/simd/fma.h"
#include "backend/cpu/simd/transpose8.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

typedef uint16_t VecH __attribute__((vector_size(kVecBytes / 2)));  // kLanesF 16-bit values
typedef _Float16 VecF16 __attribute__((vector_size(kVecBytes / 2)));
typedef uint32_t VecU __attribute__((vector_size(kVecBytes)));

// The skinny kernels keep up to kSkinnyR rows by kSkinnyNV vectors of accumulators.
#if defined(__AVX512F__)
constexpr int kSkinnyR = 6, kSkinnyNV = 4;
#elif defined(__AVX2__)
constexpr int kSkinnyR = 6, kSkinnyNV = 2;
#else
constexpr int kSkinnyR = 4, kSkinnyNV = 2;
#endif

// R <= MR rows of an MR-row panel.
template <class T, class V, int MR, int NV, int R>
void micro(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
  constexpr int L = sizeof(V) / sizeof(T), NR = NV * L;
  V acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? loadv<V>(c + i * ldc + j * L) : V{};
  for (int64_t k = 0; k < kc; ++k, a += MR, b += NR) {
    // The panels' lines eight steps ahead: with long k blocks they come from L2 and beyond, and
    // the requests let the multiply-adds run on (AVX-512 float32 2048^3 on 2 threads: 290-319 ->
    // 318-363 GFLOP/s; AVX2 unchanged).
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) __builtin_prefetch(b + 8 * NR + j * L);
    __builtin_prefetch(a + 8 * MR);
    V bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = loadv<V>(b + j * L);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      V av = splat(a[i]);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) storev(c + i * ldc + j * L, acc[i][j]);
}

// One vector of B's storage type, as the compute type.
template <class V, class S> inline V load_as(const S* p) {
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return loadv<V>(p);
  } else if constexpr (std::is_same_v<S, bf16>) {
    VecU u = __builtin_convertvector(loadv<VecH>(p), VecU) << 16;
    VecF f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
  } else {
    return __builtin_convertvector(loadv<VecF16>(p), VecF);
  }
}

// The skinny kernels walk B row by row (long contiguous runs, which the prefetchers follow)
// and keep the accumulators in c, loading and storing them once per kSkinnyK rows of B; c
// holds exact compute-type values between passes, so the chain over k is unchanged.
constexpr int kSkinnyK = 4;

// c[i][j0 .. j0 + L) += rows k0 .. k0 + KU of B; `width` < L only for the last, partial vector.
template <class V, class S, int R, int KU, class E>
inline void skinny_step(const V (&av)[R][kSkinnyK], const S* b, int64_t ldb, int64_t width, E* c, int64_t ldc) {
  constexpr int L = sizeof(V) / sizeof(E);
  V acc[R];
  if (width == L) {
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[i] = loadv<V>(c + i * ldc);
#pragma GCC unroll 4
    for (int u = 0; u < KU; ++u) {
      V bv = load_as<V>(b + u * ldb);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) acc[i] = fmadd(av[i][u], bv, acc[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) storev(c + i * ldc, acc[i]);
    return;
  }
  E tmp[L] = {};
  for (int i = 0; i < R; ++i) {
    std::memcpy(tmp, c + i * ldc, size_t(width) * sizeof(E));
    acc[i] = loadv<V>(tmp);
  }
  for (int u = 0; u < KU; ++u) {
    S row[L] = {};
    std::memcpy(row, b + u * ldb, size_t(width) * sizeof(S));
    V bv = load_as<V>(row);
    for (int i = 0; i < R; ++i) acc[i] = fmadd(av[i][u], bv, acc[i]);
  }
  for (int i = 0; i < R; ++i) {
    storev(tmp, acc[i]);
    std::memcpy(c + i * ldc, tmp, size_t(width) * sizeof(E));
  }
}

template <class V, class S, int R, int KU, class E>
void skinny_pass(const E* a, int64_t lda, const S* b, int64_t ldb, int64_t n, E* c, int64_t ldc) {
  constexpr int L = sizeof(V) / sizeof(E);
  V av[R][kSkinnyK];
  for (int i = 0; i < R; ++i)
    for (int u = 0; u < KU; ++u) av[i][u] = splat(a[i * lda + u]);
  for (int64_t j = 0; j < n; j += L) skinny_step<V, S, R, KU>(av, b + j, ldb, std::min<int64_t>(L, n - j), c + j, ldc);
}

template <class V, class S, int R, class E>
void skinny_rows(int64_t k, const E* a, int64_t lda, const S* b, int64_t ldb, int64_t n, E* c, int64_t ldc) {
  for (int i = 0; i < R; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(E));
  int64_t kk = 0;
  for (; kk + kSkinnyK <= k; kk += kSkinnyK) skinny_pass<V, S, R, kSkinnyK>(a + kk, lda, b + kk * ldb, ldb, n, c, ldc);
  for (; kk < k; ++kk) skinny_pass<V, S, R, 1>(a + kk, lda, b + kk * ldb, ldb, n, c, ldc);
}

// Rows in groups of up to kSkinnyR; a group of r rows runs the kernel built for exactly r.
template <class V, class S, class E, int R = kSkinnyR> void skinny_group(int64_t r, int64_t k, const E* a, int64_t lda,
                                                                         const S* b, int64_t ldb, int64_t n, E* c,
                                                                         int64_t ldc) {
  if constexpr (R > 1)
    if (r < R) return skinny_group<V, S, E, R - 1>(r, k, a, lda, b, ldb, n, c, ldc);
  skinny_rows<V, S, R>(k, a, lda, b, ldb, n, c, ldc);
}

template <class V, class S, class E>
void skinny_any(int64_t m, int64_t k, const E* a, int64_t lda, const S* b, int64_t ldb, int64_t n, E* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += kSkinnyR)
    skinny_group<V, S, E>(std::min<int64_t>(kSkinnyR, m - i), k, a + i * lda, lda, b, ldb, n, c + i * ldc, ldc);
}

// B of NV vectors' width (a tile of a stack of matrices: x @ T[i]): the R x NV accumulators stay
// in registers over all of k, the same chain as skinny_rows', and B's rows (back to back in a
// stack's tiles) are asked for four rows ahead into L2, one line a row (the prefetchers bring its
// neighbours; a request for every line of the row read a 1 GiB stack at 27.7 GB/s, this 30.3).
template <int R, int NV>
void narrow_rows(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int L = sizeof(VecF) / sizeof(float);
  VecF acc[R][NV] = {};
  for (int64_t kk = 0; kk < k; ++kk, b += ldb) {
    __builtin_prefetch(b + 4 * ldb, 0, 2);
    VecF bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = loadv<VecF>(b + j * L);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      VecF av = splat(a[i * lda + kk]);
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) storev(c + i * ldc + j * L, acc[i][j]);
}

template <int NV, int R = kSkinnyR> void narrow_group(int64_t r, int64_t k, const float* a, int64_t lda, const float* b,
                                                      int64_t ldb, float* c, int64_t ldc) {
  if constexpr (R > 1)
    if (r < R) return narrow_group<NV, R - 1>(r, k, a, lda, b, ldb, c, ldc);
  narrow_rows<R, NV>(k, a, lda, b, ldb, c, ldc);
}

template <int NV = kSkinnyNV> bool narrow_any(int64_t m, int64_t k, const float* a, int64_t lda, const float* b,
                                              int64_t ldb, int64_t n, float* c, int64_t ldc) {
  constexpr int L = sizeof(VecF) / sizeof(float);
  if constexpr (NV > 1)
    if (n < NV * L) return narrow_any<NV - 1>(m, k, a, lda, b, ldb, n, c, ldc);
  if (n != NV * L) return false;
  for (int64_t i = 0; i < m; i += kSkinnyR)
    narrow_group<NV>(std::min<int64_t>(kSkinnyR, m - i), k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
  return true;
}

template <class S> void skinny(int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, int64_t n,
                               float* c, int64_t ldc) {
  if constexpr (std::is_same_v<S, float>)
    if (narrow_any(m, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, n, c, ldc)) return;
  skinny_any<VecF>(m, k, static_cast<const float*>(a), lda, static_cast<const S*>(b), ldb, n, c, ldc);
}

void skinny_f64(int64_t m, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb, int64_t n, double* c,
                int64_t ldc) {
  skinny_any<VecD>(m, k, a, lda, b, ldb, n, c, ldc);
}

#if defined(__AVX512F__)
// A 16 x 16 transpose in registers, for the skinny x @ W.T kernel (below).
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

// The skinny x @ W.T kernel's block operations (the kernel follows the AVX2 ones).
using Blk = __m512;
constexpr int kBlk = 16;
inline void blk_transpose(Blk (&r)[kBlk]) { transpose16(r); }
inline Blk blk_load(const float* p) { return _mm512_loadu_ps(p); }
inline Blk blk_load_first(const float* p, int count) { return _mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), p); }
inline void blk_store_first(float* p, int count, Blk v) { _mm512_mask_storeu_ps(p, __mmask16((1u << count) - 1), v); }
inline Blk blk_zero() { return _mm512_setzero_ps(); }
inline Blk blk_fma(float a, Blk b, Blk c) { return _mm512_fmadd_ps(_mm512_set1_ps(a), b, c); }
// Lane q to p[q * stride].
inline void blk_store_strided(float* p, int64_t stride, Blk v) {
  _mm512_i32scatter_ps(p,
                       _mm512_mullo_epi32(_mm512_set1_epi32(int(stride)),
                                          _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
                       v, 4);
}

// bfloat16 pairs through vdpbf16ps: two products per lane and instruction, twice float32's rate.
#define NUVEC_BF16 __attribute__((target("avx512bf16")))

NUVEC_BF16 inline __m512 dot2(__m512 c, __m512i a, __m512i b) { return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b); }

template <int R>
NUVEC_BF16 void micro_bf16(int64_t kc, const uint16_t* a, const uint16_t* b, float* c, int64_t ldc, bool accumulate) {
  constexpr int MR = kMR, NV = kNV;
  const uint32_t* ap = reinterpret_cast<const uint32_t*>(a);
  __m512 acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = accumulate ? _mm512_loadu_ps(c + i * ldc + j * 16) : _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, ap += MR, b += NV * 32) {
    __m512i bv[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_si512(b + j * 32);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      __m512i av = _mm512_set1_epi32(int(ap[i]));
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] = dot2(acc[i][j], av, bv[j]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(c + i * ldc + j * 16, acc[i][j]);
}

// 16 columns of rows 2p and 2p+1 as bfloat16 pairs; `m` masks the columns of the last, partial
// vector (masked memory operations are slower, so full vectors go without).
template <bool Second, bool Full> NUVEC_BF16 inline __m512i pairs(const uint16_t* r0, const uint16_t* r1, __mmask16 m) {
  auto load = [&](const uint16_t* r) {
    return Full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r)) : _mm256_maskz_loadu_epi16(m, r);
  };
  __m512i x0 = _mm512_cvtepu16_epi32(load(r0));
  if constexpr (!Second) return x0;  // row 2p + 1 is past k: zero
  return _mm512_or_si512(x0, _mm512_slli_epi32(_mm512_cvtepu16_epi32(load(r1)), 16));
}

// c[i][j .. j + 16) for R rows over KU pairs of rows of B (`rows`, ldb apart).
template <int R, int KU, bool Odd, bool Full>
NUVEC_BF16 inline void skinny_bf16_step(const __m512i (&av)[R][KU], const uint16_t* rows, int64_t ldb, __mmask16 m,
                                        float* c, int64_t ldc) {
  __m512 acc[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i] = Full ? _mm512_loadu_ps(c + i * ldc) : _mm512_maskz_loadu_ps(m, c + i * ldc);
#pragma GCC unroll 4
  for (int u = 0; u < KU; ++u) {
    const uint16_t* r0 = rows + 2 * u * ldb;
    __m512i bv = Odd && u == KU - 1 ? pairs<false, Full>(r0, nullptr, m) : pairs<true, Full>(r0, r0 + ldb, m);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[i] = dot2(acc[i], av[i][u], bv);
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    if (Full)
      _mm512_storeu_ps(c + i * ldc, acc[i]);
    else
      _mm512_mask_storeu_ps(c + i * ldc, m, acc[i]);
  }
}

// 32 columns of rows 2p and 2p+1 as two vectors of bfloat16 pairs (columns 0-15, 16-31): one
// word permute per vector interleaves the rows.
template <bool Second>
NUVEC_BF16 inline void pairs32(const uint16_t* r0, const uint16_t* r1, __m512i& lo, __m512i& hi) {
  const __m512i idx_lo = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6,
                                          37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  const __m512i idx_hi = _mm512_add_epi16(idx_lo, _mm512_set1_epi16(16));
  __m512i x0 = _mm512_loadu_si512(r0);
  __m512i x1 = Second ? _mm512_loadu_si512(r1) : _mm512_setzero_si512();
  lo = _mm512_permutex2var_epi16(x0, idx_lo, x1);
  hi = _mm512_permutex2var_epi16(x0, idx_hi, x1);
}

template <int R, int KU, bool Odd> NUVEC_BF16 inline void skinny_bf16_step32(const __m512i (&av)[R][KU],
                                                                             const uint16_t* rows, int64_t ldb,
                                                                             float* c, int64_t ldc) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) acc[i][0] = _mm512_loadu_ps(c + i * ldc), acc[i][1] = _mm512_loadu_ps(c + i * ldc + 16);
#pragma GCC unroll 4
  for (int u = 0; u < KU; ++u) {
    const uint16_t* r0 = rows + 2 * u * ldb;
    __m512i lo, hi;
    if (Odd && u == KU - 1)
      pairs32<false>(r0, nullptr, lo, hi);
    else
      pairs32<true>(r0, r0 + ldb, lo, hi);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc[i][0] = dot2(acc[i][0], av[i][u], lo), acc[i][1] = dot2(acc[i][1], av[i][u], hi);
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) _mm512_storeu_ps(c + i * ldc, acc[i][0]), _mm512_storeu_ps(c + i * ldc + 16, acc[i][1]);
}

// As skinny_pass, over KU pairs of B's rows starting at row 2 * p0; with Odd, the last pair's
// second row is past k.
template <int R, int KU, bool Odd> NUVEC_BF16 void skinny_bf16_pass(const uint32_t* a, int64_t lda, const uint16_t* b,
                                                                    int64_t ldb, int64_t p0, int64_t n, float* c,
                                                                    int64_t ldc) {
  __m512i av[R][KU];
  for (int i = 0; i < R; ++i)
    for (int u = 0; u < KU; ++u) av[i][u] = _mm512_set1_epi32(int(a[i * lda + p0 + u]));
  const uint16_t* rows = b + 2 * p0 * ldb;
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) skinny_bf16_step32<R, KU, Odd>(av, rows + j, ldb, c + j, ldc);
  for (; j + 16 <= n; j += 16) skinny_bf16_step<R, KU, Odd, true>(av, rows + j, ldb, 0xffff, c + j, ldc);
  if (j < n) skinny_bf16_step<R, KU, Odd, false>(av, rows + j, ldb, __mmask16((1u << (n - j)) - 1), c + j, ldc);
}

template <int R> NUVEC_BF16 void skinny_bf16_rows(int64_t k, const uint32_t* a, int64_t lda, const uint16_t* b,
                                                  int64_t ldb, int64_t n, float* c, int64_t ldc) {
  constexpr int KU = kSkinnyK / 2;
  for (int i = 0; i < R; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
  int64_t full = k / 2, p = 0;  // pairs with both rows inside k
  for (; p + KU <= full; p += KU) skinny_bf16_pass<R, KU, false>(a, lda, b, ldb, p, n, c, ldc);
  for (; p < full; ++p) skinny_bf16_pass<R, 1, false>(a, lda, b, ldb, p, n, c, ldc);
  if (k % 2) skinny_bf16_pass<R, 1, true>(a, lda, b, ldb, p, n, c, ldc);
}

template <int R = kSkinnyR> NUVEC_BF16 void skinny_bf16_group(int64_t r, int64_t k, const uint32_t* a, int64_t lda,
                                                              const uint16_t* b, int64_t ldb, int64_t n, float* c,
                                                              int64_t ldc) {
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

#if defined(__AVX2__) && !defined(__AVX512F__)
// The skinny x @ W.T kernel's block operations on 8 x 8 blocks.
inline __m256i first_lanes(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
using Blk = __m256;
constexpr int kBlk = 8;
inline void blk_transpose(Blk (&r)[kBlk]) { transpose8(r); }
inline Blk blk_load(const float* p) { return _mm256_loadu_ps(p); }
inline Blk blk_load_first(const float* p, int count) { return _mm256_maskload_ps(p, first_lanes(count)); }
inline void blk_store_first(float* p, int count, Blk v) { _mm256_maskstore_ps(p, first_lanes(count), v); }
inline Blk blk_zero() { return _mm256_setzero_ps(); }
inline Blk blk_fma(float a, Blk b, Blk c) { return _mm256_fmadd_ps(_mm256_set1_ps(a), b, c); }
inline void blk_store_strided(float* p, int64_t stride, Blk v) {
  alignas(32) float lanes[kBlk];
  _mm256_store_ps(lanes, v);
  for (int q = 0; q < kBlk; ++q) p[q * stride] = lanes[q];
}
#endif

#if defined(__AVX2__)
// x @ W.T for few rows, W of n rows of k contiguous float32 values (the linear-layer layout):
// each kBlk x kBlk block of W is transposed in registers, so a vector holds one k of kBlk rows of
// W (kBlk output columns), and each output element gets the fma chain over k from zero that every
// other kernel computes. W is read once, kBlk rows side by side.

// kBlk k of `rows` rows of W (`lanes` elements apart), the first kk of them; missing rows and k
// are zero.
template <bool Full> inline void load_block(const float* w, int64_t lanes, int rows, int kk, Blk (&r)[kBlk]) {
#pragma GCC unroll 16
  for (int q = 0; q < kBlk; ++q) {
    if (Full)
      r[q] = blk_load(w + q * lanes);
    else
      r[q] = q < rows ? blk_load_first(w + q * lanes, kk) : blk_zero();
  }
}

// acc[i] = row i of a times kBlk rows of W, `lanes` elements apart (lane q: the row at w + q * lanes),
// the first `rows` of them; `ahead`: ask for each lane's next lines (its run continues past its row).
template <int R> inline void skinny_t_block(int64_t k, const float* a, int64_t lda, const float* w, int64_t lanes,
                                            int rows, Blk (&acc)[R], bool ahead) {
  Blk r[kBlk];
  for (int i = 0; i < R; ++i) acc[i] = blk_zero();
  int64_t k0 = 0;
  if (rows == kBlk)
    for (; k0 + kBlk <= k; k0 += kBlk) {
      // Each lane's run asked for 512 bytes ahead, into L2 (256 bytes, 1 KiB, or into L1: 1-2%
      // slower; none: 15% slower).
      if (ahead)
#pragma GCC unroll 16
        for (int q = 0; q < kBlk; ++q)
          _mm_prefetch(reinterpret_cast<const char*>(w + q * lanes + k0) + 512, _MM_HINT_T1);
      load_block<true>(w + k0, lanes, kBlk, kBlk, r);
      blk_transpose(r);
#pragma GCC unroll 16
      for (int u = 0; u < kBlk; ++u)
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) acc[i] = blk_fma(a[i * lda + k0 + u], r[u], acc[i]);
    }
  for (; k0 < k; k0 += kBlk) {  // partial blocks: the last rows of W or the last k
    int kk = int(std::min<int64_t>(kBlk, k - k0));
    load_block<false>(w + k0, lanes, rows, kk, r);
    blk_transpose(r);
    for (int u = 0; u < kk; ++u)
      for (int i = 0; i < R; ++i) acc[i] = blk_fma(a[i * lda + k0 + u], r[u], acc[i]);
  }
}

template <int R> void skinny_t_rows(int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw, int64_t n,
                                    float* c, int64_t ldc) {
  // Lane q takes rows q * s, q * s + 1, ..., q * s + s - 1 in turn, so each lane reads one long
  // run of W (s rows back to back) and the prefetchers follow kBlk long runs. Blocks of kBlk
  // neighbouring rows had each lane read one row and jump past the others: kBlk runs of one row
  // at a time, which the prefetchers lose (SmolLM2's float32 decode step: its products read at
  // 30.1 GB/s on two threads of a 2-core Xeon, 31.8 GB/s this way). The lanes' outputs are s
  // apart; the bits are unchanged (each output is still its own chain over k).
  const int64_t s = n / kBlk;
  Blk acc[R];
  for (int64_t j = 0; j < s; ++j) {
    skinny_t_block<R>(k, a, lda, w + j * ldw, s * ldw, kBlk, acc, true);
    for (int i = 0; i < R; ++i) blk_store_strided(c + i * ldc + j, s, acc[i]);
  }
  // The last n % kBlk rows: one block of neighbouring rows.
  if (const int64_t j = s * kBlk; j < n) {
    const int rows = int(n - j);
    skinny_t_block<R>(k, a, lda, w + j * ldw, ldw, rows, acc, false);
    for (int i = 0; i < R; ++i) blk_store_first(c + i * ldc + j, rows, acc[i]);
  }
}

template <int R = kSkinnyR> void skinny_t_group(int64_t r, int64_t k, const float* a, int64_t lda, const float* w,
                                                int64_t ldw, int64_t n, float* c, int64_t ldc) {
  if constexpr (R > 1)
    if (r < R) return skinny_t_group<R - 1>(r, k, a, lda, w, ldw, n, c, ldc);
  skinny_t_rows<R>(k, a, lda, w, ldw, n, c, ldc);
}

void skinny_t_f32(int64_t m, int64_t k, const void* a, int64_t lda, const void* b, int64_t ldb, int64_t n, float* c,
                  int64_t ldc) {
  for (int64_t i = 0; i < m; i += kSkinnyR)
    skinny_t_group(std::min<int64_t>(kSkinnyR, m - i), k, static_cast<const float*>(a) + i * lda, lda,
                   static_cast<const float*>(b), ldb, n, c + i * ldc, ldc);
}
#endif

template <class E> void transpose_scalar(const char* src, int64_t row_bytes, int64_t r0, int64_t rows, int64_t c0,
                                         int64_t cols, E* dst, int64_t ldd) {
  for (int64_t r = r0; r < rows; ++r) {
    const char* row = src + r * row_bytes;
    for (int64_t c = c0; c < cols; ++c) std::memcpy(dst + c * ldd + r, row + c * int64_t(sizeof(E)), sizeof(E));
  }
}

#if defined(__AVX2__)
// Columns c .. c + 8 of rows r .. r + rr (rr <= 8) into dst[(c + i) * ldd + r ..]: one 8 x 8 block
// in registers; a partial block (the last rows of a 14-row panel) reads zeros for the missing rows
// and stores only rr lanes.
inline void transpose8x8(const char* src, int64_t row_bytes, int64_t r, int rr, int64_t c, float* dst, int64_t ldd) {
  __m256 v[8];
  for (int i = 0; i < 8; ++i)
    v[i] =
        i < rr ? _mm256_loadu_ps(reinterpret_cast<const float*>(src + (r + i) * row_bytes) + c) : _mm256_setzero_ps();
  transpose8(v);
  if (rr == 8) {
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (c + i) * ldd + r, v[i]);
    return;
  }
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int i = 0; i < 8; ++i) _mm256_maskstore_ps(dst + (c + i) * ldd + r, mask, v[i]);
}
#endif

void transpose32(const char* src, int64_t row_bytes, int64_t rows, int64_t cols, void* dstv, int64_t ldd) {
  float* dst = static_cast<float*>(dstv);
#if defined(__AVX2__)
  for (int64_t r = 0; r < rows; r += 8) {
    int rr = int(std::min<int64_t>(8, rows - r));
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) transpose8x8(src, row_bytes, r, rr, c, dst, ldd);
    transpose_scalar<float>(src, row_bytes, r, r + rr, c, cols, dst, ldd);
  }
#else
  transpose_scalar<float>(src, row_bytes, 0, rows, 0, cols, dst, ldd);
#endif
}

void transpose64(const char* src, int64_t row_bytes, int64_t rows, int64_t cols, void* dst, int64_t ldd) {
  transpose_scalar<double>(src, row_bytes, 0, rows, 0, cols, static_cast<double*>(dst), ldd);
}

void pack_pairs(const uint16_t* r0, const uint16_t* r1, int64_t lanes, int L, uint32_t* dst, int64_t panel_words) {
  for (int64_t l0 = 0; l0 < lanes; l0 += L, dst += panel_words, r0 += L, r1 += L) {
    int64_t n = std::min<int64_t>(L, lanes - l0), l = 0;
#if defined(__AVX512F__)
    // Widen 16 values of each row to 32 bits and merge: the compiler's baseline build does 8.
    for (; l + 16 <= n; l += 16) {
      __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + l)));
      __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + l)));
      _mm512_storeu_si512(dst + l, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
#endif
    for (; l < n; ++l) dst[l] = uint32_t(r0[l]) | uint32_t(r1[l]) << 16;
  }
}

template <int... R> void fill_rows(MatmulKernels& t, std::integer_sequence<int, 0, R...>) {
  ((t.f32[R] = &micro<float, VecF, kMR, kNV, R>), ...);
  ((t.f64[R] = &micro<double, VecD, kMR, kNV, R>), ...);
}

#if defined(__AVX512F__)
template <int... R> void fill_bf16_rows(MatmulKernels& t, std::integer_sequence<int, 0, R...>) {
  ((t.bf16[R] = &micro_bf16<R>), ...);
}
#endif

}  // namespace

void fill_matmul(MatmulKernels& t) {
  t.transpose32 = &transpose32;
  t.transpose64 = &transpose64;
  t.pack_pairs = &pack_pairs;
  constexpr int LF = kLanesF, LD = kVecBytes / 8;
  t.f32_shape = {kMR, kNV * LF};
  t.f64_shape = {kMR, kNV * LD};
  fill_rows(t, std::make_integer_sequence<int, kMR + 1>{});
  t.skinny_rows = kSkinnyR;
  t.skinny_f32 = &skinny<float>;
  t.skinny_f16 = &skinny<f16>;
  t.skinny_bf16_as_f32 = &skinny<bf16>;
  t.skinny_f64 = &skinny_f64;
#if defined(__AVX2__)
  t.skinny_t_f32 = &skinny_t_f32;
#endif
#if defined(__AVX512F__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) {
    t.bf16_shape = {kMR, kNV * 16};
    fill_bf16_rows(t, std::make_integer_sequence<int, kMR + 1>{});
    t.skinny_bf16 = &skinny_bf16;
  }
#endif
}

}  // namespace nuvec::cpu::NUVEC_ISA
