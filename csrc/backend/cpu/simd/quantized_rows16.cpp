// The one-row products on the interleaved copy of 4-bit weights (backend/cpu/quantized_rows16.h),
// in the AVX-512 build on processors with VNNI: a vector holds a 32-bit word of codes of each of
// sixteen rows, so VPDPBUSD against one broadcast word of x's digits adds four codes' products into
// each of sixteen outputs. Per group, the digits' totals are added at their weights into the integer
// total of the sequence in backend/cpu/quantized.h, and the float steps run sixteen outputs at a
// time with group g on accumulator g mod 8: every output gets its one-row bits. (On SmolLM2's rows of
// 576 codes, one at a time, the row's own reductions and its chain of float steps took 2-3x the
// arithmetic's time.)
#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/quantized_rows16.h"

namespace nuvec::cpu::NUVEC_ISA {

#if defined(__AVX512F__)

namespace {

#define NUVEC_ROWS16 __attribute__((target("avx512vnni")))

// Sixteen float16 or float32 parameters as floats.
NUVEC_ROWS16 inline __m512 params16(const uint16_t* h) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h)));
}
NUVEC_ROWS16 inline __m512 params16(const float* f) { return _mm512_loadu_ps(f); }

// x's four digits of one kind (even or odd codes) at `at`, in every lane.
inline __m512i word(const int8_t* at) {
  int32_t v;
  std::memcpy(&v, at, 4);
  return _mm512_set1_epi32(v);
}

// Blocks [b0, b1) against every row of x; D digit planes, groups of G, parameters of type Param.
template <int D, int G, class Param>
NUVEC_ROWS16 void blocks(const QmmRows16& w, const Param* params, const QmmProblem& p, int64_t b0, int64_t b1) {
  constexpr int kWords = G / 8;  // 32-bit words of codes per group and row
  const int64_t k = p.k, groups = k / G, P = qmm_q8_padded(groups), plane = qmm_q8_plane(k, G);
  const int64_t words = k / 8, biases = w.blocks * groups * kRows16;
  const __m512i m4 = _mm512_set1_epi8(15);
  // The codes and parameters are asked for kQmmAheadBytes of codes ahead, a group's lines at a time
  // (into L2): the hardware prefetchers alone restart on each piece of work, and a decode step's
  // products are small (0.2-1 MB).
  const int64_t block_words = words * kRows16, ahead = (kQmmAheadBytes / 4 + block_words - 1) / block_words;
  const uint32_t* all_codes = w.codes;
  for (int64_t blk = b0; blk < b1; ++blk) {
    const uint32_t* codes = all_codes + blk * block_words;
    const Param* sc = params + blk * groups * kRows16;
    const Param* bi = sc + biases;
    const int64_t live = std::min<int64_t>(kRows16, p.n - blk * kRows16);
    for (int64_t r = 0; r < p.m; ++r) {
      const int8_t* xq = p.xq + r * plane * D;
      const float *d = p.xd + r * 2 * P, *sums = d + P;
      __m512 acc[8];
      for (auto& a : acc) a = _mm512_setzero_ps();
      for (int64_t g = 0; g < groups; ++g) {
        if (r == 0) {
          for (int64_t o = 0; o < kWords * kRows16; o += 16)
            __builtin_prefetch(codes + ahead * block_words + g * kWords * kRows16 + o, 0, 2);
          if (g * kRows16 * int64_t(sizeof(Param)) % 64 == 0) {
            __builtin_prefetch(sc + ahead * groups * kRows16 + g * kRows16, 0, 2);
            __builtin_prefetch(bi + ahead * groups * kRows16 + g * kRows16, 0, 2);
          }
        }
        // Two chains per digit (even and odd words), added at the group's end: exact integers.
        __m512i part[D][2];
        for (int j = 0; j < D; ++j) part[j][0] = part[j][1] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int c = 0; c < kWords; ++c) {
          const __m512i v = _mm512_loadu_si512(codes + (g * kWords + c) * kRows16);
          const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
          // Codes e .. e + 7: the low nibbles are the even ones, whose digits sit at (e % 128) / 2
          // in their block of 128 (x's nibble order), the odd ones 64 bytes on.
          const int64_t e = g * G + 8 * c, at = e / 128 * 128 + e % 128 / 2;
          for (int j = 0; j < D; ++j) {
            __m512i& a = part[j][c % 2];
            a = _mm512_dpbusd_epi32(a, lo, word(xq + j * plane + at));
            a = _mm512_dpbusd_epi32(a, hi, word(xq + j * plane + at + 64));
          }
        }
        __m512i total = _mm512_add_epi32(part[D - 1][0], part[D - 1][1]);
        for (int j = D - 2; j >= 0; --j)
          total = _mm512_add_epi32(total, _mm512_slli_epi32(_mm512_add_epi32(part[j][0], part[j][1]), 8 * (D - 1 - j)));
        const __m512 sd = _mm512_mul_ps(params16(sc + g * kRows16), _mm512_set1_ps(d[g]));
        __m512& a = acc[g % 8];
        a = _mm512_fmadd_ps(sd, _mm512_cvtepi32_ps(total), a);
        a = _mm512_fmadd_ps(params16(bi + g * kRows16), _mm512_set1_ps(sums[g]), a);
      }
      // halving_sum's tree on each output: (a_j + a_{j+4}), then (t_j + t_{j+2}), then t_0 + t_1.
      const __m512 t0 = _mm512_add_ps(_mm512_add_ps(acc[0], acc[4]), _mm512_add_ps(acc[2], acc[6]));
      const __m512 t1 = _mm512_add_ps(_mm512_add_ps(acc[1], acc[5]), _mm512_add_ps(acc[3], acc[7]));
      _mm512_mask_storeu_ps(p.y + r * p.n + blk * kRows16, __mmask16((1u << live) - 1), _mm512_add_ps(t0, t1));
    }
  }
}

template <int D, class Param>
void blocks_for_group(const QmmRows16& w, const Param* params, const QmmProblem& p, int64_t b0, int64_t b1) {
  if (w.group == 32) return blocks<D, 32>(w, params, p, b0, b1);
  if (w.group == 64) return blocks<D, 64>(w, params, p, b0, b1);
  blocks<D, 128>(w, params, p, b0, b1);
}

template <class Param>
void blocks_for(const QmmRows16& w, const Param* params, const QmmProblem& p, int64_t b0, int64_t b1) {
  p.digits == 3 ? blocks_for_group<3>(w, params, p, b0, b1) : blocks_for_group<1>(w, params, p, b0, b1);
}

#undef NUVEC_ROWS16

}  // namespace

void qmm_rows16(const QmmRows16& w, const QmmProblem& p, int64_t b0, int64_t b1) {
  if (w.half)
    blocks_for(w, static_cast<const uint16_t*>(w.params), p, b0, b1);
  else
    blocks_for(w, static_cast<const float*>(w.params), p, b0, b1);
}

#endif

}  // namespace nuvec::cpu::NUVEC_ISA
