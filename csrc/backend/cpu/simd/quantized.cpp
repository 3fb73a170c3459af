// The quantized products' row kernels, built per instruction set (backend/cpu/quantized.h states
// the sequence of operations every output element gets).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/quantized.h"
#include "backend/cpu/simd/fma.h"
#include "backend/cpu/simd/to_floats.h"
#include "core/quant_bits.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

constexpr int L = kLanesF;

// Codes of elements [e, e + L) of a packed row (e a multiple of L), as floats.
template <int B> inline VecF decode(const uint32_t* row, int64_t e) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(row);
  constexpr uint32_t kMask = (1u << B) - 1;
#if defined(__AVX2__) && !defined(__AVX512F__)
  // Eight codes fill B bytes from byte e * B / 8.
  const uint8_t* at = bytes + e * B / 8;
  if constexpr (B == 8) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(at))));
  } else if constexpr (B <= 4) {
    uint32_t u = 0;
    std::memcpy(&u, at, B);
    const __m256i shifts = _mm256_setr_epi32(0, B, 2 * B, 3 * B, 4 * B, 5 * B, 6 * B, 7 * B);
    __m256i c = _mm256_srlv_epi32(_mm256_set1_epi32(int(u)), shifts);
    return _mm256_cvtepi32_ps(_mm256_and_si256(c, _mm256_set1_epi32(int(kMask))));
  } else {
    uint64_t u = 0;
    std::memcpy(&u, at, B);
    const __m256i shifts = _mm256_setr_epi64x(0, B, 2 * B, 3 * B), four = _mm256_set1_epi64x(4 * B);
    __m256i v = _mm256_set1_epi64x(int64_t(u));
    __m256i lo = _mm256_srlv_epi64(v, shifts), hi = _mm256_srlv_epi64(v, _mm256_add_epi64(shifts, four));
    // The low 32 bits of each 64-bit lane, lo's four then hi's.
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i c = _mm256_blend_epi32(_mm256_permutevar8x32_epi32(lo, pick), _mm256_permutevar8x32_epi32(hi, pick), 0xF0);
    return _mm256_cvtepi32_ps(_mm256_and_si256(c, _mm256_set1_epi32(int(kMask))));
  }
#else
#if defined(__AVX512F__)
  if constexpr (B == 4 || B == 8) {  // sixteen codes as sixteen bytes, widened
    const auto* at = reinterpret_cast<const __m128i*>(bytes + e * B / 8);
    if constexpr (B == 8) return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(at)));
    const __m128i b = _mm_loadl_epi64(at), m4 = _mm_set1_epi8(15);
    const __m128i c = _mm_unpacklo_epi8(_mm_and_si128(b, m4), _mm_and_si128(_mm_srli_epi16(b, 4), m4));
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(c));
  }
#endif
  float t[L];
  for (int i = 0; i < L; ++i) {
    int64_t bit = (e + i) * B;
    uint32_t two = bytes[bit / 8];
    if (bit % 8 + B > 8) two |= uint32_t(bytes[bit / 8 + 1]) << 8;
    t[i] = float((two >> (bit % 8)) & kMask);
  }
  return load(t);
#endif
}

template <int B> struct FromPacked {
  const uint32_t* row;
  void pair(int64_t e, VecF& a, VecF& b) const { a = decode<B>(row, e), b = decode<B>(row, e + L); }
};
struct FromDecoded {
  const float* q;
  void pair(int64_t e, VecF& a, VecF& b) const { a = load(q + e), b = load(q + e + L); }
};

// Groups rounded up to whole vectors.
inline int64_t padded(int64_t groups) { return (groups + L - 1) / L * L; }

// The first `count` (1 to L) floats at p, the other lanes zero, reading nothing past them.
inline VecF load_first(const float* p, int64_t count) {
#if defined(__AVX512F__)
  return VecF(_mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), p));
#elif defined(__AVX2__)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return VecF(_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)), lane)));
#else
  float t[L] = {};
  std::memcpy(t, p, size_t(count) * sizeof(float));
  return load(t);
#endif
}

// The bias term of one weight row: its biases against the row of x's group sums (zero-padded to
// whole vectors), L groups per vector (the last padded with zeros), then halved.
inline float bias_dot(const float* bias, const float* xsum, int64_t groups) {
  VecF acc = splat(0.0f);
  int64_t g = 0;
  for (; g + L <= groups; g += L) acc = fmadd(load(bias + g), load(xsum + g), acc);
  if (g < groups) acc = fmadd(load_first(bias + g, groups - g), load(xsum + g), acc);
  return halving_sum(acc);
}

// Weight rows' scales and biases as floats, kQmmParamRows rows converted at a time.
struct RowParams {
  float* buf;  // kQmmParamRows rows of scales, then as many of biases (groups each)
  int64_t groups, first = -1;
  const float* scales(int64_t n) const { return buf + (n - first) * groups; }
  const float* biases(int64_t n) const { return buf + (kQmmParamRows + n - first) * groups; }
  // Makes rows [n, n + count) available (count <= kQmmParamRows; rows are asked for in increasing
  // order, below n1).
  void fetch(const QmmProblem& p, int64_t n, int64_t count, int64_t n1) {
    if (first >= 0 && n + count <= first + kQmmParamRows) return;
    first = n;
    const int64_t rows = std::min<int64_t>(kQmmParamRows, n1 - n);
    to_floats(p.scales, p.sdtype, n * groups, rows * groups, buf);
    to_floats(p.biases, p.bdtype, n * groups, rows * groups, buf + kQmmParamRows * groups);
  }
  float* end() const { return buf + 2 * kQmmParamRows * groups; }
};

// x's group sums of one row, zero-padded to whole vectors, at out.
inline const float* padded_sums(const float* xsum, int64_t groups, float* out) {
  std::copy(xsum, xsum + groups, out);
  std::fill(out + groups, out + padded(groups), 0.0f);
  return out;
}

// The weight rows a one-row product reads after the current block of R, asked for into L2 as the
// current rows go (kQmmAheadBytes in quantized.h says why spread out): their codes, one contiguous
// span, in order, a line whenever the current group's share of it crosses one; their scales and
// biases (a few lines) at once. For SmolLM2's 8-bit head (rows of 576 bytes), asking for all of the
// next rows' lines at each block read 11-13 GB/s from memory on one core, this 14-15; the scales and
// biases asked for group by group as the codes are, or the codes row by row, ran 1.4-2x slower.
struct Ahead {
  const char* w = nullptr;  // codes of the rows ahead; null: none
  int64_t step = 0;         // their bytes per group
  Ahead() = default;
  Ahead(const QmmProblem& p, int64_t n, int R) {
    if (n + R > p.n) return;
    const int64_t groups = p.k / p.group, ss = int64_t(size_of(p.sdtype)), bs = int64_t(size_of(p.bdtype));
    w = reinterpret_cast<const char*>(p.w) + n * (p.k * p.bits / 8), step = R * p.group * p.bits / 8;
    const char* s = static_cast<const char*>(p.scales) + n * groups * ss;
    const char* b = static_cast<const char*>(p.biases) + n * groups * bs;
    for (int64_t o = 0; o < R * groups * ss; o += 64) __builtin_prefetch(s + o, 0, 2);
    for (int64_t o = 0; o < R * groups * bs; o += 64) __builtin_prefetch(b + o, 0, 2);
  }
  void group(int64_t g) const {
    if (w)
      for (int64_t o = (g * step + 63) / 64 * 64; o < (g + 1) * step; o += 64) __builtin_prefetch(w + o, 0, 2);
  }
};

// y[r] for R weight rows (codes from src[r], parameters from rp) against one row of x (xsum
// padded): the transposed sequence.
template <int R, class Src> void dot_rows(const QmmProblem& p, const Src* src, const RowParams& rp, int64_t n,
                                          const float* x, const float* xsum, float* y, const Ahead& ahead = {}) {
  const int64_t groups = p.k / p.group, V = p.group / L;
  const float* sc[R];
  VecF acc[R];
  for (int r = 0; r < R; ++r) acc[r] = splat(0.0f), sc[r] = rp.scales(n + r);
  for (int64_t g = 0; g < groups; ++g) {
    ahead.group(g);
    const int64_t e = g * p.group;
    VecF d0[R], d1[R], qa, qb;
    VecF x0 = load(x + e), x1 = load(x + e + L);
    for (int r = 0; r < R; ++r) src[r].pair(e, qa, qb), d0[r] = qa * x0, d1[r] = qb * x1;
    for (int64_t v = 2; v < V; v += 2) {
      VecF xa = load(x + e + v * L), xb = load(x + e + (v + 1) * L);
      for (int r = 0; r < R; ++r) {
        src[r].pair(e + v * L, qa, qb);
        d0[r] = fmadd(qa, xa, d0[r]);
        d1[r] = fmadd(qb, xb, d1[r]);
      }
    }
    for (int r = 0; r < R; ++r) acc[r] = fmadd(splat(sc[r][g]), d0[r] + d1[r], acc[r]);
  }
  for (int r = 0; r < R; ++r) y[r] = halving_sum(acc[r]) + bias_dot(rp.biases(n + r), xsum, groups);
}

// Weight rows [n0, n1) against the rows of x, R rows at a time. One row of x streams the packed
// rows; more rows decode R weight rows into scratch first.
template <int B, int R> void rows_of(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  const int64_t words = p.k * B / 32, groups = p.k / p.group;
  RowParams rp{scratch, groups};
  float* xsum = rp.end();            // padded(groups) floats
  float* q = xsum + padded(groups);  // R decoded rows of k floats
  // One row of x streams the weights, not left to the hardware prefetchers: the rows about
  // kQmmAheadBytes of codes on (at least the next block) are asked for as the kernel goes (Ahead;
  // an 8-bit 4096-wide GEMV from memory 18 -> 23 GB/s).
  const int64_t ahead = (kQmmAheadBytes + R * words * 4 - 1) / (R * words * 4) * R;
  if (p.m == 1) padded_sums(p.xsum, groups, xsum), qmm_prefetch_rows(p, n0, std::min(ahead, n1 - n0));
  int64_t n = n0;
  for (; n + R <= n1; n += R) {
    FromPacked<B> packed[R];
    FromDecoded decoded[R];
    rp.fetch(p, n, R, n1);
    for (int r = 0; r < R; ++r) packed[r] = {p.w + (n + r) * words}, decoded[r] = {q + r * p.k};
    float y[R];
    if (p.m == 1) {
      dot_rows<R>(p, packed, rp, n, p.x, xsum, y, Ahead(p, n + ahead, R));
      for (int r = 0; r < R; ++r) p.y[n + r] = y[r];
      continue;
    }
    for (int r = 0; r < R; ++r)
      for (int64_t e = 0; e < p.k; e += 2 * L) {
        VecF a, b;
        packed[r].pair(e, a, b);
        store(q + r * p.k + e, a), store(q + r * p.k + e + L, b);
      }
    for (int64_t m = 0; m < p.m; ++m) {
      dot_rows<R>(p, decoded, rp, n, p.x + m * p.k, padded_sums(p.xsum + m * groups, groups, xsum), y);
      for (int r = 0; r < R; ++r) p.y[m * p.n + n + r] = y[r];
    }
  }
  if constexpr (R > 1) rows_of<B, 1>(p, n, n1, scratch);
}

// bsum[m * ng + j] = sum over k in order of x_mk * bias_k(g0 + j), for ng groups from g0.
void bias_sums(const QmmProblem& p, int64_t g0, int64_t ng, float* bsum) {
  const int64_t gpr = p.n / p.group;
  for (int64_t m = 0; m < p.m; ++m) {
    float* b = bsum + m * ng;
    for (int64_t j = 0; j < ng; ++j) b[j] = 0.0f;
    for (int64_t k = 0; k < p.k; ++k) {
      const float xk = p.x[m * p.k + k];
      for (int64_t j = 0; j < ng; ++j) b[j] = b[j] + xk * load_float(p.biases, p.bdtype, k * gpr + g0 + j);
    }
  }
}

// One row of x, output columns [col0, col1): kKBlockOne weight rows at a time over all the
// columns, the accumulators kept in y between blocks (a float32 store and reload changes no bits).
constexpr int kKBlockOne = 8;
template <int B> void plain_one(const QmmProblem& p, int64_t col0, int64_t col1, float* scratch) {
  const int64_t words = p.n * B / 32, gpr = p.n / p.group, g0 = col0 / p.group, ng = (col1 - col0) / p.group;
  const int64_t vg = p.group / L;
  float* bsum = scratch;
  float* t = scratch + ng;  // x_k * scale_kg for the block's rows
  bias_sums(p, g0, ng, bsum);
  float* y = p.y + col0;
  for (int64_t kb = 0; kb < p.k; kb += kKBlockOne) {
    const int64_t nk = std::min<int64_t>(kKBlockOne, p.k - kb);
    const uint32_t* rows[kKBlockOne];
    for (int64_t i = 0; i < nk; ++i) {
      rows[i] = p.w + (kb + i) * words;
      to_floats(p.scales, p.sdtype, (kb + i) * gpr + g0, ng, t + i * ng);
      for (int64_t j = 0; j < ng; ++j) t[i * ng + j] = p.x[kb + i] * t[i * ng + j];
    }
    for (int64_t j = 0; j < ng; ++j)
      for (int64_t v = j * vg; v < (j + 1) * vg; ++v) {
        const int64_t c = col0 + v * L;
        VecF acc = kb == 0 ? splat(0.0f) : load(y + v * L);
        if (nk == kKBlockOne) {  // the same steps with a constant count (unrolled)
          for (int i = 0; i < kKBlockOne; ++i) acc = fmadd(splat(t[i * ng + j]), decode<B>(rows[i], c), acc);
        } else {
          for (int64_t i = 0; i < nk; ++i) acc = fmadd(splat(t[i * ng + j]), decode<B>(rows[i], c), acc);
        }
        if (kb + nk == p.k) acc = acc + splat(bsum[j]);
        store(y + v * L, acc);
      }
  }
}

// Many rows of x, one chunk of kQmmChunk columns (fewer at the end): kQmmKBlock weight rows
// decoded once, then every row of x over them.
template <int B> void plain_many(const QmmProblem& p, int64_t col0, int64_t col1, float* scratch) {
  const int64_t words = p.n * B / 32, gpr = p.n / p.group, width = col1 - col0, nv = width / L;
  const int64_t g0 = col0 / p.group, ng = width / p.group, vg = p.group / L;
  float* bsum = scratch;
  float* q = scratch + p.m * ng;
  bias_sums(p, g0, ng, bsum);
  for (int64_t kb = 0; kb < p.k; kb += kQmmKBlock) {
    const int64_t ke = std::min<int64_t>(p.k, kb + kQmmKBlock);
    for (int64_t k = kb; k < ke; ++k)
      for (int64_t v = 0; v < nv; ++v) store(q + (k - kb) * width + v * L, decode<B>(p.w + k * words, col0 + v * L));
    for (int64_t m = 0; m < p.m; ++m) {
      VecF acc[kQmmChunk / L];
      float* y = p.y + m * p.n + col0;
      for (int64_t v = 0; v < nv; ++v) acc[v] = kb == 0 ? splat(0.0f) : load(y + v * L);
      for (int64_t k = kb; k < ke; ++k) {
        const float xk = p.x[m * p.k + k];
        for (int64_t j = 0; j < ng; ++j) {
          VecF t = splat(xk * load_float(p.scales, p.sdtype, k * gpr + g0 + j));
          for (int64_t v = j * vg; v < (j + 1) * vg; ++v) acc[v] = fmadd(t, load(q + (k - kb) * width + v * L), acc[v]);
        }
      }
      if (ke == p.k)
        for (int64_t v = 0; v < nv; ++v) acc[v] = acc[v] + splat(bsum[m * ng + v / vg]);
      for (int64_t v = 0; v < nv; ++v) store(y + v * L, acc[v]);
    }
  }
}

// Column chunks [c0, c1) of kQmmChunk columns (the last may be narrower, a multiple of the group).
template <int B> void plain(const QmmProblem& p, int64_t c0, int64_t c1, float* scratch) {
  if (p.m == 1) return plain_one<B>(p, c0 * kQmmChunk, std::min(p.n, c1 * kQmmChunk), scratch);
  for (int64_t c = c0; c < c1; ++c) plain_many<B>(p, c * kQmmChunk, std::min(p.n, (c + 1) * kQmmChunk), scratch);
}

}  // namespace

void qmm_group_sums(const float* x, int64_t m, int64_t k, int group, float* xsum) {
  for (int64_t i = 0; i < m * (k / group); ++i) {
    const float* g = x + i * group;
    VecF s = load(g);
    for (int64_t v = 1; v < group / L; ++v) s = s + load(g + v * L);
    xsum[i] = halving_sum(s);
  }
}

void qmm_transposed(const QmmProblem& p, int64_t n0, int64_t n1, float* scratch) {
  with_bits(p.bits, [&](auto b) { rows_of<b.value, kQmmRowBlock>(p, n0, n1, scratch); });
}

void qmm_dequantize(const QmmProblem& p, int64_t n0, int64_t n1, float* out) {
  const int64_t groups = p.k / p.group;
  std::vector<float> params(size_t(2 * groups));
  with_bits(p.bits, [&](auto b) {
    constexpr int B = b.value;
    for (int64_t n = n0; n < n1; ++n) {
      const uint32_t* row = p.w + n * (p.k * B / 32);
      to_floats(p.scales, p.sdtype, n * groups, groups, params.data());
      to_floats(p.biases, p.bdtype, n * groups, groups, params.data() + groups);
      float* o = out + (n - n0) * p.k;
      for (int64_t g = 0; g < groups; ++g) {
        const VecF sc = splat(params[size_t(g)]), bi = splat(params[size_t(groups + g)]);
        for (int64_t e = g * p.group; e < (g + 1) * p.group; e += L) store(o + e, decode<B>(row, e) * sc + bi);
      }
    }
  });
}

void qmm_plain(const QmmProblem& p, int64_t c0, int64_t c1, float* scratch) {
  with_bits(p.bits, [&](auto b) { plain<b.value>(p, c0, c1, scratch); });
}

}  // namespace nuvec::cpu::NUVEC_ISA
