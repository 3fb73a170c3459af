// Transposed 4- and 8-bit affine products with int8 activations, built per instruction set
// (backend/cpu/quantized.h states the arithmetic). The integer dot products are exact, so each build
// sums them its own way (the AVX-512 build through VPDPBUSD where the processor has AVX512-VNNI);
// every float step runs in eight fixed lanes (F8) in every build, so all the builds give the same bits.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/matmul_amx.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/simd/to_floats.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

// Eight float32 lanes: one 256-bit register where the build has one, else an array with std::fma.
struct F8 {
#if defined(__AVX2__)
  __m256 v;
  static F8 zero() { return {_mm256_setzero_ps()}; }
  static F8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static F8 ints(const int32_t* p) {
    return {_mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  friend F8 operator*(F8 a, F8 b) { return {_mm256_mul_ps(a.v, b.v)}; }
  friend F8 fma(F8 a, F8 b, F8 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
#else
  float v[8];
  static F8 zero() { return {}; }
  static F8 load(const float* p) {
    F8 r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static F8 ints(const int32_t* p) {
    F8 r;
    for (int i = 0; i < 8; ++i) r.v[i] = float(p[i]);
    return r;
  }
  void store(float* p) const { std::memcpy(p, v, sizeof v); }
  friend F8 operator*(F8 a, F8 b) {
    for (int i = 0; i < 8; ++i) a.v[i] = a.v[i] * b.v[i];
    return a;
  }
  friend F8 fma(F8 a, F8 b, F8 c) {
    for (int i = 0; i < 8; ++i) c.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
    return c;
  }
#endif
};

// The lanes added in halves: (l0 + l4), (l1 + l5), ..., then again.
inline float halving_sum(F8 a) {
#if defined(__AVX2__)
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
#else
  float t[8];
  a.store(t);
  for (int w = 4; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) t[i] = t[i] + t[i + w];
  return t[0];
#endif
}

// max(a, b) and min(a, b) as the x86 instructions take them (the second operand when either is NaN).
inline float max_x86(float a, float b) { return a > b ? a : b; }
inline float min_x86(float a, float b) { return a < b ? a : b; }

#if defined(__AVX2__)
inline int32_t hsum(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
  return _mm_cvtsi128_si32(v);
}
inline int32_t hsum(__m256i v) {
  return hsum(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

#endif

// The largest magnitude of n values of x (a multiple of 8; exact in any order), NaN if one is.
float largest(const float* x, int64_t n) {
  float m[8];
  bool nan = false;
#if defined(__AVX2__)
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 vm = _mm256_setzero_ps(), vn = _mm256_setzero_ps();
  for (int64_t e = 0; e < n; e += 8) {
    __m256 v = _mm256_loadu_ps(x + e);
    vm = _mm256_max_ps(_mm256_andnot_ps(sign, v), vm);
    vn = _mm256_or_ps(vn, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  _mm256_storeu_ps(m, vm);
  nan = _mm256_movemask_ps(vn) != 0;
#else
  for (int i = 0; i < 8; ++i) m[i] = 0.0f;
  for (int64_t e = 0; e < n; e += 8)
    for (int i = 0; i < 8; ++i) m[i] = max_x86(std::fabs(x[e + i]), m[i]), nan = nan || std::isnan(x[e + i]);
#endif
  float amax = 0.0f;
  for (float v : m) amax = max_x86(v, amax);
  return nan ? std::nanf("") : amax;
}

// D = round-to-even(clamp(x * id, -limit, limit)) for n values (a multiple of 32), in order, as
// `digits` int8 planes `plane` bytes apart, the most significant first (D = d0 * 65536 + d1 * 256 +
// d2 with d1 and d2 in [-128, 127] for three; D itself for one); returns the sum of the D.
int32_t round_codes(const float* x, int64_t n, float id, float limit, int digits, int64_t plane, int8_t* q) {
  int64_t e = 0;
  int32_t sum = 0;
#if defined(__AVX2__)
  const __m256 vid = _mm256_set1_ps(id), lo = _mm256_set1_ps(-limit), hi = _mm256_set1_ps(limit);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256i total = _mm256_setzero_si256();
  auto codes = [&](int64_t i) {
    __m256i c = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vid), lo), hi));
    total = _mm256_add_epi32(total, c);
    return c;
  };
  for (; e + 32 <= n; e += 32) {
    __m256i c[4] = {codes(e), codes(e + 8), codes(e + 16), codes(e + 24)}, d[4];
    for (int j = digits - 1; j >= 0; --j) {
      for (int i = 0; i < 4; ++i) {
        // The lowest byte as a signed digit, then what is left above it (exact shifts).
        if (j == 0) {  // the most significant digit: what is left
          d[i] = c[i];
        } else {
          d[i] = _mm256_srai_epi32(_mm256_slli_epi32(c[i], 24), 24);
          c[i] = _mm256_srai_epi32(_mm256_sub_epi32(c[i], d[i]), 8);
        }
      }
      __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(d[0], d[1]), _mm256_packs_epi32(d[2], d[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + j * plane + e), _mm256_permutevar8x32_epi32(p, order));
    }
  }
  sum = hsum(total);
#endif
  for (; e < n; ++e) {
    int32_t c = int32_t(std::nearbyint(min_x86(max_x86(x[e] * id, -limit), limit)));
    sum += c;
    for (int j = digits - 1; j >= 0; --j) {
      const int32_t d = j ? int32_t(int8_t(c)) : c;
      q[j * plane + e] = int8_t(d), c = (c - d) >> 8;
    }
  }
  return sum;
}

#if defined(__AVX512F__)
#define NUVEC_VNNI __attribute__((target("avx512vnni")))
// The VNNI kernels (AVX-512 builds on processors with VPDPBUSD).
bool has_vnni() { return cpu_has_vnni(); }
#else
constexpr bool has_vnni() { return false; }
#endif

#if defined(__AVX2__)
// 32 values as [even 16 | odd 16].
inline __m256i even_odd(const int8_t* q) {
  const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12,
                                         14, 1, 3, 5, 7, 9, 11, 13, 15);
  __m256i v = _mm256_shuffle_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)), split);
  return _mm256_permute4x64_epi64(v, 0xD8);
}
#endif

// The 4-bit kernels' layout of x's codes (k a multiple of 32), as the low and high nibbles of the
// weight bytes hold them: the VNNI kernels take each 128 values as their even values, then their
// odd ones, 64 bytes apart (a last 32, 64 or 96 too, zero-padded: q has room to the next 128); the
// other AVX2 and AVX-512 kernels each 64 (and a last 32).
void to_nibble_order(int8_t* q, int64_t k) {
#if defined(__AVX2__)
  if (has_vnni()) {
    for (int64_t e = 0; e < k; e += 128) {
      const int64_t n = std::min<int64_t>(128, k - e);
      int8_t span[128] = {};
      std::memcpy(span, q + e, size_t(n));
      for (int64_t i = 0; i < 128; i += 32) {
        __m256i v = even_odd(span + i);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + e + i / 2), _mm256_castsi256_si128(v));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + e + 64 + i / 2), _mm256_extracti128_si256(v, 1));
      }
    }
    return;
  }
  auto halves = [&](int64_t e) { return even_odd(q + e); };
  int64_t e = 0;
  for (; e + 64 <= k; e += 64) {
    __m256i a = halves(e), b = halves(e + 32);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + e), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + e + 32), _mm256_permute2x128_si256(a, b, 0x31));
  }
  if (e < k) _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + e), halves(e));
#else
  (void)q, (void)k;
#endif
}

#if defined(__AVX2__)
// Eight groups' integer totals as lanes: lane i the total of part(i)'s lanes (one tree of
// horizontal adds).
template <class Part> [[gnu::always_inline]] inline __m256i eight_totals(Part part) {
  __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(part(0), part(1)), _mm256_hadd_epi32(part(2), part(3)));
  __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(part(4), part(5)), _mm256_hadd_epi32(part(6), part(7)));
  return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}

// The digit planes' lane totals combined, the most significant first: a * 256 + the next plane's
// (exact in int32: each step is a sum of code * (D's upper digits), bounded as D is).
template <int D, class Plane> [[gnu::always_inline]] inline __m256i digit_planes(Plane plane) {
  __m256i a = plane(0);
  for (int j = 1; j < D; ++j) a = _mm256_add_epi32(_mm256_slli_epi32(a, 8), plane(j));
  return a;
}

// 4 bits: 32 weight bytes (64 codes) from code e of each of NR weight rows, the low nibbles times x's
// even values plus the high nibbles times the odd ones (at most 2 * 2 * 15 * 128 per 16-bit lane), in
// 32-bit lanes: lanes 0-3 hold codes e to e + 31, lanes 4-7 the 32 after. x's digits are loaded
// once for the NR rows (two rows: 1.1-1.2x faster from memory; the loads of x were as many as the
// multiplications). Three digits' pairs are added with their weights 65536, 256 and 1 (the last two
// by VPMADDWD itself: an instruction fewer than digit_planes' shifts).
template <int D, int NR> [[gnu::always_inline]] inline void block4(const uint8_t* const* w, const int8_t* xq,
                                                                   int64_t plane, int64_t e, __m256i* out) {
  static_assert(D == 1 || D == 3);
  const __m256i m4 = _mm256_set1_epi8(15), ones = _mm256_set1_epi16(1);
  __m256i lo[NR], hi[NR], pairs[NR][D];
  for (int r = 0; r < NR; ++r) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[r] + e / 2));
    lo[r] = _mm256_and_si256(b, m4), hi[r] = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
  }
  for (int j = 0; j < D; ++j) {
    const auto* xj = reinterpret_cast<const __m256i*>(xq + j * plane + e);
    const __m256i even = _mm256_loadu_si256(xj), odd = _mm256_loadu_si256(xj + 1);
    for (int r = 0; r < NR; ++r)
      pairs[r][j] = _mm256_add_epi16(_mm256_maddubs_epi16(lo[r], even), _mm256_maddubs_epi16(hi[r], odd));
  }
  for (int r = 0; r < NR; ++r) {
    if constexpr (D == 1) {
      out[r] = _mm256_madd_epi16(pairs[r][0], ones);
    } else {
      const __m256i top = _mm256_slli_epi32(_mm256_madd_epi16(pairs[r][0], ones), 16);
      out[r] = _mm256_add_epi32(_mm256_add_epi32(top, _mm256_madd_epi16(pairs[r][1], _mm256_set1_epi16(256))),
                                _mm256_madd_epi16(pairs[r][2], ones));
    }
  }
}

// 4 bits: a row's last 32 codes (16 bytes; x's as [even 16 | odd 16]), in lanes 0-3.
template <int D> inline __m256i last_block4(const uint8_t* w, const int8_t* xq, int64_t plane, int64_t e) {
  const __m128i m4 = _mm_set1_epi8(15), ones = _mm_set1_epi16(1);
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + e / 2));
  const __m128i lo = _mm_and_si128(b, m4), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m4);
  return digit_planes<D>([&](int j) {
    const auto* xj = reinterpret_cast<const __m128i*>(xq + j * plane + e);
    const __m128i s =
        _mm_add_epi16(_mm_maddubs_epi16(lo, _mm_loadu_si128(xj)), _mm_maddubs_epi16(hi, _mm_loadu_si128(xj + 1)));
    return _mm256_zextsi128_si256(_mm_madd_epi16(s, ones));
  });
}

// 8 bits: 16 codes from e and x's values widened to 16 bits, multiplied and added in pairs.
template <int D>
[[gnu::always_inline]] inline __m256i block8(const uint8_t* w, const int8_t* xq, int64_t plane, int64_t e) {
  const __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + e)));
  return digit_planes<D>([&](int j) {
    return _mm256_madd_epi16(
        c, _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + j * plane + e))));
  });
}

// The integer totals of groups [g, g + 8) of each of NR weight rows against one row of x's digits,
// lane i group g + i's; the groups from `live` on (a row's last eight) are zero and read nothing.
template <int B, int D, int G, int NR>
[[gnu::always_inline]] inline void group_totals(const uint8_t* const* w, const int8_t* xq, int64_t plane, int64_t g,
                                                int live, __m256i* t) {
  const __m256i zero = _mm256_setzero_si256();
  if constexpr (B == 4 && G == 32) {  // two groups per block, in its 128-bit halves
    __m256i blocks[4][NR];
    for (int i = 0; i < 4; ++i) {
      const int64_t e = (g + 2 * i) * 32;
      if (2 * i + 1 < live) {
        block4<D, NR>(w, xq, plane, e, blocks[i]);
      } else {
        for (int r = 0; r < NR; ++r) blocks[i][r] = 2 * i < live ? last_block4<D>(w[r], xq, plane, e) : zero;
      }
    }
    for (int r = 0; r < NR; ++r) {
      const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(blocks[0][r], blocks[1][r]),
                                          _mm256_hadd_epi32(blocks[2][r], blocks[3][r]));
      t[r] = _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
  } else {
    static_assert(NR == 1);
    constexpr int kCodes = B == 4 ? 64 : 16;
    t[0] = eight_totals([&](int i) __attribute__((always_inline)) {
      if (i >= live) return zero;
      const int64_t e = (g + i) * G;
      auto block = [&](int64_t at) __attribute__((always_inline)) {
        if constexpr (B == 4) {
          __m256i out;
          block4<D, 1>(w, xq, plane, at, &out);
          return out;
        } else {
          return block8<D>(w[0], xq, plane, at);
        }
      };
      __m256i a = block(e);
      for (int c = kCodes; c < G; c += kCodes) a = _mm256_add_epi32(a, block(e + c));
      return a;
    });
  }
}
using Ints8 = __m256i;
inline F8 to_f8(Ints8 t) { return {_mm256_cvtepi32_ps(t)}; }
#if defined(__AVX512F__)
// Four vectors' lane totals by quarters: lane 4j + i of the result is the total of lanes 4i..4i+3 of
// the j-th argument.
NUVEC_VNNI inline __m512i quarter_totals(__m512i a, __m512i b, __m512i c, __m512i d) {
  __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
  __m512i t = _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), t);
}

// Lane i of the result: lanes 2i and 2i + 1 of a (i < 8), or of b (i >= 8), added.
NUVEC_VNNI inline __m512i pair_totals(__m512i a, __m512i b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
}

inline __mmask64 first_bytes(int64_t bytes) { return bytes >= 64 ? ~__mmask64(0) : (__mmask64(1) << bytes) - 1; }

// How a run of blocks reads a weight row: every block whole (all inside the row); the blocks that
// start before k whole (codes past k, read from the next rows, meet x's zero padding); or those
// masked at k (the weight's last rows, where nothing follows).
enum class Reads { all, to_k, masked };

// The codes e .. min(e + 512 / B, k) of one weight row: their dot products with x's by lanes, the
// D digit planes (`plane` bytes apart) combined as digit_planes does; whole runs ask for the line
// kQmmAheadBytes on (into L2).
template <int B, int D, Reads R>
NUVEC_VNNI [[gnu::always_inline]] inline __m512i vnni_block(const uint8_t* w, const int8_t* xq, int64_t k,
                                                            int64_t plane, int64_t e) {
  constexpr bool whole = R != Reads::masked;
  const int64_t n = whole ? 512 / B : std::min<int64_t>(512 / B, k - e);
  __m512i a = _mm512_setzero_si512();
  if (R != Reads::all && e >= k) return a;
  const __mmask64 mw = whole ? ~__mmask64(0) : first_bytes(n * B / 8);
  if constexpr (R == Reads::all) __builtin_prefetch(w + e * B / 8 + kQmmAheadBytes, 0, 2);
  const __m512i b = _mm512_maskz_loadu_epi8(mw, w + e * B / 8), m4 = _mm512_set1_epi8(15);
  // 4 bits: the low nibbles against x's first n / 2 values, the high ones against those 64 on.
  const __m512i lo = B == 8 ? b : _mm512_and_si512(b, m4), hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
  const __mmask64 mx = B == 8 || whole ? mw : first_bytes(n / 2);
  for (int j = 0; j < D; ++j) {
    const int8_t* xj = xq + j * plane;
    if (j) a = _mm512_slli_epi32(a, 8);
    a = _mm512_dpbusd_epi32(a, lo, _mm512_maskz_loadu_epi8(mx, xj + e));
    if constexpr (B == 4) a = _mm512_dpbusd_epi32(a, hi, _mm512_maskz_loadu_epi8(mx, xj + e + 64));
  }
  return a;
}

// The totals of 16 consecutive runs of `Run` (a power of two) lane quarters from code e, inlined
// whole (a call per level kept its halves on the stack).
template <int B, int D, Reads R, int Run>
NUVEC_VNNI [[gnu::always_inline]] inline __m512i run_totals(const uint8_t* w, const int8_t* xq, int64_t k,
                                                            int64_t plane, int64_t e) {
  constexpr int64_t kCodes = 512 / B;
  if constexpr (Run == 1)
    return quarter_totals(vnni_block<B, D, R>(w, xq, k, plane, e), vnni_block<B, D, R>(w, xq, k, plane, e + kCodes),
                          vnni_block<B, D, R>(w, xq, k, plane, e + 2 * kCodes),
                          vnni_block<B, D, R>(w, xq, k, plane, e + 3 * kCodes));
  else
    return pair_totals(run_totals<B, D, R, Run / 2>(w, xq, k, plane, e),
                       run_totals<B, D, R, Run / 2>(w, xq, k, plane, e + 2 * kCodes * Run));
}

// run_totals for a row's last sixteen groups, out of line: inlined beside the loop's, its variants
// made the loop's code slower.
template <int B, int D, Reads R, int Run> NUVEC_VNNI [[gnu::noinline]] __m512i last_totals(const uint8_t* w,
                                                                                           const int8_t* xq, int64_t k,
                                                                                           int64_t plane, int64_t e) {
  return run_totals<B, D, R, Run>(w, xq, k, plane, e);
}

#endif
#else
// The integer totals of groups [g, g + 8) of each of NR weight rows against one row of x's digits
// (D rebuilt from its planes), entry i group g + i's; zero from `live` on.
struct Ints8 { int32_t v[8]; };
template <int B, int D, int G, int NR>
void group_totals(const uint8_t* const* w, const int8_t* xq, int64_t plane, int64_t g, int live, Ints8* t) {
  for (int r = 0; r < NR; ++r) {
    t[r] = {};
    for (int i = 0; i < live; ++i)
      for (int64_t e = (g + i) * G; e < (g + i + 1) * G; ++e) {
        const int32_t code = B == 8 ? w[r][e] : (w[r][e / 2] >> (4 * (e & 1))) & 15;
        int32_t d = 0;
        for (int j = 0; j < D; ++j) d = d * 256 + xq[j * plane + e];
        t[r].v[i] += code * d;
      }
  }
}
inline F8 to_f8(const Ints8& t) { return F8::ints(t.v); }
#endif

// A weight row's scales or biases, eight groups from g at a time, zero past the row's groups.
// Converted rows: float32 rows read in place, half types converted into a zero-padded buffer.
struct FloatParams {
  const float* f;
  // Row `n`'s `groups` values of `data` (of dtype `dt`), converted into `buf` (zero past them).
  static FloatParams row(const void* data, Dtype dt, int64_t n, int64_t groups, float* buf) {
    to_floats(data, dt, n * groups, groups, buf);
    return {buf};
  }
  F8 at(int64_t g) const { return F8::load(f + g); }
  F8 last(int64_t g, int64_t) const { return F8::load(f + g); }
};
#if defined(__F16C__)
// float16 rows of at least eight groups read and converted in the step itself (the conversion calls
// into a buffer were a fifth of a 576-code row's time). The last groups: the row's last eight read
// and moved down in registers (through a zero-padded copy in memory, a store that the load could
// not forward, the row took 1.3x as long).
struct HalfParams {
  const f16* h;
  int64_t groups;
  static HalfParams row(const void* data, Dtype, int64_t n, int64_t groups, float*) {
    return {static_cast<const f16*>(data) + n * groups, groups};
  }
  F8 at(int64_t g) const { return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + g)))}; }
  F8 last(int64_t, int64_t count) const {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i from = _mm256_add_epi32(lane, _mm256_set1_epi32(int(8 - count)));  // group g + i: lane 8 - count + i
    const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), lane));
    return {_mm256_and_ps(_mm256_permutevar8x32_ps(at(groups - 8).v, from), live)};
  }
};
#endif

// Weight rows [n0, n1) against every row of x, groups of G, NR weight rows at a time (the last
// ones one at a time): each output's float steps eight groups at a time (scales and biases zero
// past the groups, as x's d_g and qsum_g), the digits, group size and the parameters' reading
// (FloatParams, HalfParams) known to the compiler. The codes are asked for kQmmAheadBytes ahead, a
// line per 64 bytes as the loop goes, and a line of scales and biases as far ahead per sixteen
// groups. (Against a loop over the digits at run time that asked for each next row at once: the
// AVX2 4-bit GEMV from memory 12-14 -> 15-20 GB/s, bench/RESULTS.md.)
template <int B, int D, int G, class Params, int NR>
void rows_int(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  const int64_t k = p.k, m = p.m, ny = p.n, groups = k / G, P = qmm_q8_padded(groups), row_bytes = k * B / 8;
  const int64_t plane = qmm_q8_plane(k, G), ahead = (kQmmAheadBytes + row_bytes - 1) / row_bytes;
  const int64_t ssize = int64_t(size_of(p.sdtype)), bsize = int64_t(size_of(p.bdtype));
  // FloatParams: each row's scales, then its biases, zero-padded to P.
  for (int r = 0; r < NR; ++r) {
    std::fill(scratch + 2 * r * P + groups, scratch + (2 * r + 1) * P, 0.0f);
    std::fill(scratch + (2 * r + 1) * P + groups, scratch + (2 * r + 2) * P, 0.0f);
  }
  const auto* wbytes = reinterpret_cast<const uint8_t*>(p.w);
  qmm_prefetch_rows(p, n0, std::min(ahead, n1 - n0));
  int64_t n = n0;
  for (; n + NR <= n1; n += NR) {
    Params ps[NR], pb[NR];
    const uint8_t* w[NR];
    for (int r = 0; r < NR; ++r) {
      ps[r] = Params::row(p.scales, p.sdtype, n + r, groups, scratch + 2 * r * P);
      pb[r] = Params::row(p.biases, p.bdtype, n + r, groups, scratch + (2 * r + 1) * P);
      w[r] = wbytes + (n + r) * row_bytes;
    }
    const char* sa = static_cast<const char*>(p.scales) + std::min(n + ahead, ny - 1) * groups * ssize;
    const char* ba = static_cast<const char*>(p.biases) + std::min(n + ahead, ny - 1) * groups * bsize;
    for (int64_t i = 0; i < m; ++i) {
      const int8_t* xq = p.xq + i * plane * D;
      const float *d = p.xd + i * 2 * P, *sums = d + P;
      F8 acc[NR];
      for (int r = 0; r < NR; ++r) acc[r] = F8::zero();
      Ints8 t[NR];
      int64_t g = 0;
      for (; g + 8 <= groups; g += 8) {
        if (i == 0) {  // the next rows' lines, asked for once (more rows of x reread these from L1)
          for (int r = 0; r < NR; ++r)
            for (int64_t o = 0; o < G * B; o += 64) __builtin_prefetch(w[r] + g * G * B / 8 + kQmmAheadBytes + o, 0, 2);
          if (g % 16 == 0) __builtin_prefetch(sa + g * ssize, 0, 2), __builtin_prefetch(ba + g * bsize, 0, 2);
        }
        group_totals<B, D, G, NR>(w, xq, plane, g, 8, t);
        for (int r = 0; r < NR; ++r) {
          acc[r] = fma(ps[r].at(g) * F8::load(d + g), to_f8(t[r]), acc[r]);
          acc[r] = fma(pb[r].at(g), F8::load(sums + g), acc[r]);
        }
      }
      if (g < P) {
        group_totals<B, D, G, NR>(w, xq, plane, g, int(groups - g), t);
        for (int r = 0; r < NR; ++r) {
          acc[r] = fma(ps[r].last(g, groups - g) * F8::load(d + g), to_f8(t[r]), acc[r]);
          acc[r] = fma(pb[r].last(g, groups - g), F8::load(sums + g), acc[r]);
        }
      }
      for (int r = 0; r < NR; ++r) p.y[i * ny + n + r] = halving_sum(acc[r]);
    }
  }
  if constexpr (NR > 1) rows_int<B, D, G, Params, 1>(p, n, n1, scratch);
}

// rows_int for the problem's group size and parameter types.
template <int B, int D, class Params> void rows_for(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  if (p.group == 32) return rows_int<B, D, 32, Params, B == 4 ? 2 : 1>(p, n0, n1, scratch);
  if (p.group == 64) return rows_int<B, D, 64, Params, 1>(p, n0, n1, scratch);
  rows_int<B, D, 128, Params, 1>(p, n0, n1, scratch);
}
template <int B, int D> void rows_for_group(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
#if defined(__F16C__)
  if (p.sdtype == Dtype::float16 && p.bdtype == Dtype::float16 && p.k / p.group >= 8)
    return rows_for<B, D, HalfParams>(p, n0, n1, scratch);
#endif
  rows_for<B, D, FloatParams>(p, n0, n1, scratch);
}

#if defined(__AVX512F__)
inline __m256 lo8(__m512 v) { return _mm512_castps512_ps256(v); }
inline __m256 hi8(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }

// rows_int with the VNNI dot products, the groups' totals kept in registers: sixteen groups at a
// time, each eight as one step of F8's sequence (the same operations in the same order, so the same
// bits; the lanes past the last group are zero, as rows_int's padding, and the eight past the padding
// are not added at all). Scales and biases in float32 are read in place; in half types, they are
// converted first into `scratch`, several rows at a time: the loop reads floats with no branch on
// their type (it ran 1.2x slower with one).
template <int B, int D, int Run>
NUVEC_VNNI void rows_vnni(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  // The problem's fields as locals: the stores into y could alias them, and would reload each.
  const int64_t k = p.k, m = p.m, ny = p.n, group = p.group, groups = k / group, P = qmm_q8_padded(groups);
  const int64_t row_bytes = k * B / 8, ahead = (kQmmAheadBytes + row_bytes - 1) / row_bytes;
  const int64_t plane = qmm_q8_plane(k, group), tail = (plane - k) * B / 8;
  const int64_t ssize = int64_t(size_of(p.sdtype)), bsize = int64_t(size_of(p.bdtype));
  const auto* wbytes = reinterpret_cast<const uint8_t*>(p.w);
  const int8_t* xq0 = p.xq;
  const float* xd = p.xd;
  float* y = p.y;
  // Scales and biases in half types: kQmmParamRows rows converted at a time into scratch, from
  // row `first`.
  const bool sf = p.sdtype == Dtype::float32, bf = p.bdtype == Dtype::float32;
  float *sbuf = scratch, *bbuf = scratch + kQmmParamRows * groups;
  int64_t first = -kQmmParamRows;
  for (int64_t off = 0; off < std::min(n1 - n0, ahead) * row_bytes; off += 64)
    __builtin_prefetch(wbytes + n0 * row_bytes + off, 0, 2);
  for (int64_t n = n0; n < n1; ++n) {
    if (!(sf && bf) && n >= first + kQmmParamRows) {
      const int64_t rows = std::min<int64_t>(kQmmParamRows, n1 - n);
      if (!sf) to_floats(p.scales, p.sdtype, n * groups, rows * groups, sbuf);
      if (!bf) to_floats(p.biases, p.bdtype, n * groups, rows * groups, bbuf);
      first = n;
    }
    const float* sc = sf ? static_cast<const float*>(p.scales) + n * groups : sbuf + (n - first) * groups;
    const float* bi = bf ? static_cast<const float*>(p.biases) + n * groups : bbuf + (n - first) * groups;
    // The scales and biases of the row as far ahead as the blocks' requests, a line each step.
    const char* sa = static_cast<const char*>(p.scales) + std::min(n + ahead, ny - 1) * groups * ssize;
    const char* ba = static_cast<const char*>(p.biases) + std::min(n + ahead, ny - 1) * groups * bsize;
    const uint8_t* w = wbytes + n * row_bytes;
    // A row's last blocks may read past its end (into the next rows) except near the weight's end.
    const bool over = (ny - 1 - n) * row_bytes >= tail;
    for (int64_t r = 0; r < m; ++r) {
      const int8_t* xq = xq0 + r * plane * D;
      const float *d = xd + r * 2 * P, *sums = d + P;
      __m256 acc = _mm256_setzero_ps();
      auto step = [&](int64_t g, __m512i totals, auto whole) {
        __builtin_prefetch(sa + g * ssize, 0, 2), __builtin_prefetch(ba + g * bsize, 0, 2);
        const __mmask16 live = whole ? __mmask16(0xFFFF) : __mmask16((1u << (groups - g)) - 1);
        const __m512 t = _mm512_cvtepi32_ps(totals);
        const __m512 sd = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, sc + g), _mm512_maskz_loadu_ps(live, d + g));
        const __m512 b = _mm512_maskz_loadu_ps(live, bi + g), qs = _mm512_maskz_loadu_ps(live, sums + g);
        acc = _mm256_fmadd_ps(lo8(b), lo8(qs), _mm256_fmadd_ps(lo8(sd), lo8(t), acc));
        if (whole || g + 8 < P) acc = _mm256_fmadd_ps(hi8(b), hi8(qs), _mm256_fmadd_ps(hi8(sd), hi8(t), acc));
      };
      // Whole sixteen groups in the loop, the last (partial) ones after it: one variant of the
      // blocks inside the loop (the three inlined there ran 1.2-1.3x slower).
      int64_t g = 0;
      for (; (g + 16) * group <= k; g += 16)
        step(g, run_totals<B, D, Reads::all, Run>(w, xq, k, plane, g * group), std::true_type{});
      if (g < P)
        step(g,
             over ? last_totals<B, D, Reads::to_k, Run>(w, xq, k, plane, g * group)
                  : last_totals<B, D, Reads::masked, Run>(w, xq, k, plane, g * group),
             std::false_type{});
      y[r * ny + n] = halving_sum(F8{acc});
    }
  }
}

// rows_vnni for the problem's group size (32, 64 or 128).
template <int B, int D> void vnni_for_group(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  constexpr int kRun32 = 32 / (128 / B);
  if (p.group == 32) return rows_vnni<B, D, kRun32>(p, n0, n1, scratch);
  if (p.group == 64) return rows_vnni<B, D, 2 * kRun32>(p, n0, n1, scratch);
  rows_vnni<B, D, 4 * kRun32>(p, n0, n1, scratch);
}

// Several rows of x against 4-bit weights on the AMX tiles: each group's integer totals, sixteen x
// rows by sixteen weight rows and digit by digit, from TDPBSUD (signed digits by unsigned codes),
// then every output's float steps as rows_int's. The totals are exact integers, so the
// outputs have the bits of every other kernel's, and each row its one-row bits.
#define NUVEC_AMX_INT8 __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni")))
// From this many rows of x (a prompt's chunk) the tiles take 4-bit products.
constexpr int64_t kAmxRows = 8;

// A group's codes in the order [low nibbles | high nibbles] of its bytes, as x's digits sit in the
// VNNI layout: its first half against plane bytes [h * q, h * q + h) of its 128-code block, the
// second against those 64 on (h = group / 2, q its place in the block). The float steps run group
// by group on every output's eight F8 lanes (group g on lane g % 8, in rows_int's order), sixteen
// weight rows at a time, then the lanes are added as halving_sum adds them.
template <int D> NUVEC_AMX_INT8 void rows_amx(const QmmProblem& p, int64_t n0, int64_t n1) {
  const int64_t k = p.k, m = p.m, ny = p.n, group = p.group, groups = k / group, P = qmm_q8_padded(groups);
  const int64_t plane = qmm_q8_plane(k, group), half = group / 2, row_bytes = k / 2;
  const int64_t mt = (m + 15) / 16, K = std::min<int64_t>(group, 64), chunks = group / K;
  const auto* wbytes = reinterpret_cast<const uint8_t*>(p.w);
  // x's digits, group by group, as A tiles: [digit][group][16 * mt rows][group bytes], zero past m.
  std::vector<int8_t> a(size_t(D * groups * mt * 16 * group), 0);
  const int64_t digit = groups * mt * 16 * group;
  for (int j = 0; j < D; ++j)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t r = 0; r < m; ++r) {
        const int8_t* src = p.xq + r * plane * D + j * plane + g * group / 128 * 128 + g * group % 128 / 2;
        int8_t* dst = a.data() + j * digit + (g * mt * 16 + r) * group;
        std::memcpy(dst, src, size_t(half));
        std::memcpy(dst + half, src + 64, size_t(half));
      }
  TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;           // C: 16 x 16 int32, a digit each
  for (int t = 3; t < 6; ++t) cfg.rows[t] = 16, cfg.colsb[t] = uint16_t(K);  // A: 16 x rows of K digits
  cfg.rows[6] = uint8_t(K / 4), cfg.colsb[6] = 64;                           // B: K / 4 rows of 16 x 4 codes
  _tile_loadconfig(&cfg);
  alignas(64) uint8_t expanded[16 * 128];  // the tile's rows' codes of one group, [low | high]
  alignas(64) uint8_t bt[2][16 * 64];      // B tiles of one group: its K-chunks
  alignas(64) int32_t c[3][16 * 16];
  std::vector<float> acc(size_t(8 * mt * 16 * 16));             // [lane][x row][weight row of the tile]
  std::vector<float> sct(size_t(P * 16)), bit(size_t(P * 16));  // the tile's scales and biases, [group][row]
  std::vector<float> params(size_t(P), 0.0f);
  const __m512i lanes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(int32_t(group / 4)));
  for (int64_t nt = n0; nt < n1; nt += 16) {
    const int64_t rows = std::min<int64_t>(16, n1 - nt);
    std::fill(acc.begin(), acc.end(), 0.0f);
    std::fill(sct.begin(), sct.end(), 0.0f);
    std::fill(bit.begin(), bit.end(), 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      to_floats(p.scales, p.sdtype, (nt + i) * groups, groups, params.data());
      for (int64_t g = 0; g < groups; ++g) sct[size_t(g * 16 + i)] = params[size_t(g)];
      to_floats(p.biases, p.bdtype, (nt + i) * groups, groups, params.data());
      for (int64_t g = 0; g < groups; ++g) bit[size_t(g * 16 + i)] = params[size_t(g)];
    }
    for (int64_t g = 0; g < P; ++g) {
      if (g < groups) {
        if (rows < 16) std::memset(expanded, 0, sizeof expanded);  // the weight's last rows: zero past them
        for (int64_t i = 0; i < rows; ++i) {
          const uint8_t* src = wbytes + (nt + i) * row_bytes + g * group / 2;
          uint8_t* e = expanded + i * group;
          for (int64_t b = 0; b < half; b += 16) {  // half is 16, 32 or 64
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + b)), m4 = _mm_set1_epi8(15);
            _mm_store_si128(reinterpret_cast<__m128i*>(e + b), _mm_and_si128(v, m4));
            _mm_store_si128(reinterpret_cast<__m128i*>(e + half + b), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
          }
        }
        // B row t of chunk h: the dwords t of the rows' codes [h * K, h * K + K).
        for (int64_t h = 0; h < chunks; ++h)
          for (int64_t t = 0; t < K / 4; ++t)
            _mm512_store_si512(bt[h] + t * 64, _mm512_i32gather_epi32(lanes, expanded + h * K + 4 * t, 4));
      }
      const __m512 sc = _mm512_loadu_ps(sct.data() + g * 16), bi = _mm512_loadu_ps(bit.data() + g * 16);
      for (int64_t xt = 0; xt < mt; ++xt) {
        if (g < groups) {
          _tile_zero(0);
          _tile_zero(1);
          _tile_zero(2);
          for (int64_t h = 0; h < chunks; ++h) {
            _tile_loadd(6, bt[h], 64);
            const int8_t* a0 = a.data() + (g * mt + xt) * 16 * group + h * K;
            _tile_loadd(3, a0, group);
            _tile_dpbsud(0, 3, 6);
            if constexpr (D == 3) {
              _tile_loadd(4, a0 + digit, group);
              _tile_dpbsud(1, 4, 6);
              _tile_loadd(5, a0 + 2 * digit, group);
              _tile_dpbsud(2, 5, 6);
            }
          }
          _tile_stored(0, c[0], 64);
          if constexpr (D == 3) {
            _tile_stored(1, c[1], 64);
            _tile_stored(2, c[2], 64);
          }
        }
        for (int64_t r = 0; r < 16 && xt * 16 + r < m; ++r) {
          const int64_t row = xt * 16 + r;
          __m512i t = _mm512_setzero_si512();
          if (g < groups) {
            t = _mm512_load_si512(c[0] + r * 16);
            if constexpr (D == 3)
              t = _mm512_add_epi32(_mm512_slli_epi32(t, 16),
                                   _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(c[1] + r * 16), 8),
                                                    _mm512_load_si512(c[2] + r * 16)));
          }
          const float* d = p.xd + row * 2 * P;
          float* lane = acc.data() + ((g % 8) * mt * 16 + row) * 16;
          __m512 v = _mm512_loadu_ps(lane);
          v = _mm512_fmadd_ps(_mm512_mul_ps(sc, _mm512_set1_ps(d[g])), _mm512_cvtepi32_ps(t), v);
          v = _mm512_fmadd_ps(bi, _mm512_set1_ps(d[P + g]), v);
          _mm512_storeu_ps(lane, v);
        }
      }
    }
    // Each output's lanes added as halving_sum adds them: (l0 + l4, l1 + l5, ...), then again.
    const int64_t lane_stride = mt * 16 * 16;
    for (int64_t row = 0; row < m; ++row) {
      const float* l = acc.data() + row * 16;
      auto at = [&](int q) { return _mm512_loadu_ps(l + q * lane_stride); };
      const __m512 h0 = _mm512_add_ps(at(0), at(4)), h1 = _mm512_add_ps(at(1), at(5)), h2 = _mm512_add_ps(at(2), at(6)),
                   h3 = _mm512_add_ps(at(3), at(7));
      const __m512 y = _mm512_add_ps(_mm512_add_ps(h0, h2), _mm512_add_ps(h1, h3));
      _mm512_mask_storeu_ps(p.y + row * ny + nt, __mmask16((1u << rows) - 1), y);
    }
  }
  _tile_release();
}
#endif

}  // namespace

void qmm_q8_quantize(const float* x, int64_t m, int64_t k, int group, int bits, int digits, int8_t* xq, float* xd) {
  const int64_t groups = k / group, P = qmm_q8_padded(groups);
  const float limit = qmm_q8_limit(bits, group, digits);
  const int64_t plane = qmm_q8_plane(k, group);
  for (int64_t r = 0; r < m; ++r) {
    float* d = xd + r * 2 * P;
    float* sums = d + P;
    int8_t* q = xq + r * plane * digits;
    for (int64_t g = 0; g < groups; ++g) {
      const float* xg = x + r * k + g * group;
      const float amax = largest(xg, group);
      d[g] = amax / limit;
      sums[g] =
          d[g] * float(round_codes(xg, group, amax > 0.0f ? limit / amax : 0.0f, limit, digits, plane, q + g * group));
    }
    std::fill(d + groups, d + P, 0.0f);
    std::fill(sums + groups, sums + P, 0.0f);
    if (bits == 4)
      for (int j = 0; j < digits; ++j) to_nibble_order(q + j * plane, k);
  }
}

void qmm_q8_transposed(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
#if defined(__AVX512F__)
  if (p.bits == 4 && p.m >= kAmxRows && has_vnni() && amx_int8_ready())
    return p.digits == 3 ? rows_amx<3>(p, n0, n1) : rows_amx<1>(p, n0, n1);
  if (has_vnni()) {
    if (p.bits == 4)
      return p.digits == 3 ? vnni_for_group<4, 3>(p, n0, n1, scratch) : vnni_for_group<4, 1>(p, n0, n1, scratch);
    return p.digits == 3 ? vnni_for_group<8, 3>(p, n0, n1, scratch) : vnni_for_group<8, 1>(p, n0, n1, scratch);
  }
#endif
  if (p.bits == 4)
    return p.digits == 3 ? rows_for_group<4, 3>(p, n0, n1, scratch) : rows_for_group<4, 1>(p, n0, n1, scratch);
  p.digits == 3 ? rows_for_group<8, 3>(p, n0, n1, scratch) : rows_for_group<8, 1>(p, n0, n1, scratch);
}

}  // namespace nuvec::cpu::NUVEC_ISA
