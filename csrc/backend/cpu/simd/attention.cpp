// The attention kernels, built per instruction set (backend/cpu/attention.h). Decode: a query
// row's keys in blocks, each block's scores, softmax and weighted values in float32, one chain of
// operations per score and per value column, so a row's bits depend only on its own keys. Prefill:
// tiles of queries by keys through the matrix-product micro-kernels, with an online softmax (a
// running max and sum per row); the full score matrix never exists.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/simd/expsin.h"
#include "backend/cpu/simd/fma.h"
#include "core/ops/attention.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

constexpr int L = kLanesF;
constexpr float kLowest = std::numeric_limits<float>::lowest();  // a masked score, as MLX's finfo.min
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

float exp1(float x) { return expf_v(splat(x))[0]; }

float to_f(float x) { return x; }
float to_f(f16 x) { return float(x); }
float to_f(bf16 x) { return bf16_to_float(x); }

// L elements of T as float32 (exact for the half types): the conversion instructions where the build
// has them (lane by lane, the AVX-512 build's float16 caches decoded at half the float32 caches' speed).
template <class T> VecF load_f(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return load(p);
  } else {
#if defined(__AVX512F__)
    __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (std::is_same_v<T, f16>) return (VecF)_mm512_cvtph_ps(h);
    return (VecF)_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
#elif defined(__AVX2__)
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_same_v<T, f16>) return (VecF)_mm256_cvtph_ps(h);
    return (VecF)_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
#else
    VecF v;
    for (int l = 0; l < L; ++l) v[l] = to_f(p[l]);
    return v;
#endif
  }
}

// The first n (< L) elements of T as float32, zero past them.
template <class T> VecF load_f_tail(const T* p, int64_t n) {
  T t[L] = {};
  std::memcpy(static_cast<void*>(t), p, size_t(n) * sizeof(T));
  return load_f(t);
}

// The point a softmax step subtracts: the max, or 0 when every score is -inf (an additive mask's),
// so the exps are 0 rather than NaN.
float ref_of(float m) { return m == kNegInf ? 0.0f : m; }

// The scores of H query heads (q: H rows, DL floats apart) against N key rows at once, into
// s[r][j0 + n]: each score one chain of multiply-adds over D in vectors (the tail through a
// zero-padded copy; q's padding is zero), every chain independent; each key vector is read once
// for the H heads (a key head's group shares its keys).
template <int H, int N, class T>
void dots(const float* q, int64_t DL, const T* const* kr, int64_t D, float* const* s, int64_t j0) {
  VecF acc[H][N];
  for (int r = 0; r < H; ++r)
    for (int n = 0; n < N; ++n) acc[r][n] = VecF{};
  int64_t d = 0;
  for (; d + L <= D; d += L)
    for (int n = 0; n < N; ++n) {
      const VecF kv = load_f(kr[n] + d);
      for (int r = 0; r < H; ++r) acc[r][n] = fmadd(load(q + r * DL + d), kv, acc[r][n]);
    }
  if (d < D)
    for (int n = 0; n < N; ++n) {
      const VecF kv = load_f_tail(kr[n] + d, D - d);
      for (int r = 0; r < H; ++r) acc[r][n] = fmadd(load(q + r * DL + d), kv, acc[r][n]);
    }
  for (int r = 0; r < H; ++r) halving_sums<N>(acc[r], s[r] + j0);
}

// Row i of head (b, h)'s mask, or null.
const char* mask_row(const AttentionOperands& a, int64_t b, int64_t h, int64_t i) {
  if (a.mask != AttentionMask::additive && a.mask != AttentionMask::boolean) return nullptr;
  const int64_t* st = a.mask_strides;
  int64_t item = a.mask == AttentionMask::additive ? 4 : 1;
  return a.mask_data + (b * st[0] + h * st[1] + i * st[2]) * item;
}

// Scores s[0, n) of keys k0 + [0, n) with the row's array mask applied.
void apply_mask(const AttentionOperands& a, const char* row, int64_t k0, float* s, int64_t n) {
  if (!row) return;
  int64_t st = a.mask_strides[3];
  if (a.mask == AttentionMask::additive) {
    const float* m = reinterpret_cast<const float*>(row);
    for (int64_t j = 0; j < n; ++j) s[j] = s[j] + m[(k0 + j) * st];
  } else {
    for (int64_t j = 0; j < n; ++j) s[j] = row[(k0 + j) * st] ? s[j] : kLowest;
  }
}

float vmax(const float* s, int64_t n) {  // n a multiple of L
  VecF m = splat(kNegInf);
  for (int64_t j = 0; j < n; j += L) {
    VecF v = load(s + j);
    m = v > m ? v : m;
  }
  float r = m[0];
  for (int k = 1; k < L; ++k) r = m[k] > r ? m[k] : r;
  return r;
}

// s[j] = exp(s[j] - ref) for j < n (a multiple of L); returns their sum.
float exp_sum(float* s, int64_t n, float ref) {
  VecF r = splat(ref), acc = VecF{};
  for (int64_t j = 0; j < n; j += L) {
    VecF e = expf_v(load(s + j) - r);
    store(s + j, e);
    acc += e;
  }
  return halving_sum(acc);
}

// Keys and values stream from memory once a cache outgrows the caches, and the hardware's
// prefetchers alone left a core at 6-7 GB/s (a step of 600 positions): rows this far ahead are asked
// for as the loops go.
constexpr int64_t kAheadRows = 16;

// Asks the caches for the lines of [p, p + bytes).
inline void prefetch_span(const void* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o);
}

// acc[r][c] += Σ_j p[r][j] * V[j * ldv + c] for H heads (acc rows DVL floats apart) and the NV
// vectors of columns from c0, j in order: one chain per head and column, each value vector read
// once for the H heads.
template <int H, int NV, class T>
void weighted(const float* const* p, const T* V, int64_t ldv, int64_t n, int64_t c0, float* acc, int64_t DVL) {
  VecF r[H][NV];
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < NV; ++t) r[h][t] = load(acc + h * DVL + c0 + t * L);
  for (int64_t j = 0; j < n; ++j) {
    if (j + kAheadRows < n) prefetch_span(V + (j + kAheadRows) * ldv + c0, NV * L * int64_t(sizeof(T)));
    VecF pj[H];
    for (int h = 0; h < H; ++h) pj[h] = splat(p[h][j]);
    const T* vj = V + j * ldv + c0;
    for (int t = 0; t < NV; ++t) {
      const VecF v = load_f(vj + t * L);
      for (int h = 0; h < H; ++h) r[h][t] = fmadd(pj[h], v, r[h][t]);
    }
  }
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < NV; ++t) store(acc + h * DVL + c0 + t * L, r[h][t]);
}

// acc[r][0, Dv) += Σ_j p[r][j] * V_j for H heads, rows ldv apart (acc rows DVL = round_up(Dv, L)
// floats apart); at most twelve accumulators at a time, so none spills, and at least eight, so the
// multiply-adds' latency (each accumulator's chain takes one per key) is hidden: three heads with
// six ran a pass over the keys per 16 columns at about 5 cycles a key.
template <int H, class T>
void weighted_sum(const float* const* p, const T* V, int64_t ldv, int64_t n, int64_t Dv, float* acc, int64_t DVL) {
  constexpr int NV = H == 1 ? 8 : H <= 3 ? 4 : 2;
  int64_t full = Dv / L * L, c = 0;
  for (; c + NV * L <= full; c += NV * L) weighted<H, NV>(p, V, ldv, n, c, acc, DVL);
  for (; c < full; c += L) weighted<H, 1>(p, V, ldv, n, c, acc, DVL);
  if (c == Dv) return;
  for (int h = 0; h < H; ++h) {
    VecF r = load(acc + h * DVL + c);
    for (int64_t j = 0; j < n; ++j) r = fmadd(splat(p[h][j]), load_f_tail(V + j * ldv + c, Dv - c), r);
    store(acc + h * DVL + c, r);
  }
}

// Row r of head (b, h) of an operand with strides st (elements of batch, head, row).
template <class T> const T* row_of(const void* x, const int64_t* st, int64_t b, int64_t h, int64_t r) {
  return static_cast<const T*>(x) + b * st[0] + h * st[1] + r * st[2];
}

// Key or value row r of key head (b, g): strided, or through batch b's page table.
template <class T>
const T* kv_row(const AttentionOperands& a, const void* x, const int64_t* st, int64_t b, int64_t g, int64_t r) {
  if (!a.pages) return row_of<T>(x, st, b, g, r);
  const int shift = std::countr_zero(uint64_t(a.page_size));  // page sizes divide 256: powers of two
  int64_t page = a.pages[b * a.pages_stride + (r >> shift)];
  return static_cast<const T*>(x) + page * st[0] + g * st[1] + (r & (a.page_size - 1)) * st[2];
}

// A row's final values: its (m, l, acc) with the head's sink taken in, divided out.
void finish_row(const AttentionOperands& a, int64_t h, float m, float l, float* acc, float* out) {
  if (a.sinks) {
    float s = a.sinks[h], m2 = std::max(m, s), r = ref_of(m2), fa = exp1(m - r);
    l = l * fa + exp1(s - r);
    for (int64_t c = 0; c < a.Dv; ++c) acc[c] = acc[c] * fa;
  }
  for (int64_t c = 0; c < a.Dv; ++c) out[c] = acc[c] / l;
}

}  // namespace

namespace {

// Query heads h0 .. h0 + H - 1 (of one key head) of row i over keys [k0, k1), head h0 + r's part
// at part + r * part_step: for each head the one-head sequence (docs/attention.md), the key and
// value rows read once for all H.
template <class T, int H> void decode_heads(const AttentionOperands& a, int64_t b, int64_t h0, int64_t i, int64_t k0,
                                            int64_t k1, bool all_masked, float* part, int64_t part_step) {
  const int64_t D = a.D, Dv = a.Dv, n = k1 - k0, g = h0 / (a.Hq / a.Hkv), DL = round_up(D, L), DVL = round_up(Dv, L);
  thread_local std::vector<float> qs, acc;
  qs.assign(size_t(H * DL), 0.0f);
  for (int r = 0; r < H; ++r) {
    const float* q = row_of<float>(a.q, a.qst, b, h0 + r, i);
    for (int64_t d = 0; d < D; ++d) qs[size_t(r * DL + d)] = q[d] * a.scale;
  }
  alignas(64) float sbuf[H][kAttentionKeyBlock + 16];
  float* s[H];
  for (int r = 0; r < H; ++r) s[r] = sbuf[r];
  // Keys N at a time: independent chains in flight keep both FMA units busy, H * N accumulators.
  constexpr int N = H == 1 ? 8 : 12 / H;
  int64_t j = 0;
  for (; j + N <= n; j += N) {
    const T* kr[N];
    for (int t = 0; t < N; ++t) kr[t] = kv_row<T>(a, a.k, a.kst, b, g, k0 + j + t);
    for (int64_t t = j + kAheadRows; t < std::min(n, j + kAheadRows + N); ++t)
      prefetch_span(kv_row<T>(a, a.k, a.kst, b, g, k0 + t), D * int64_t(sizeof(T)));
    // The same keys' values, read after the softmax: asked for now, so they come in while the
    // dot products run (in a decode step they come from memory, the products having streamed
    // ~100 MB since: SmolLM2's float32 decode, 12.7-13.2 -> 11.9-12.1 us a call).
    for (int64_t t = j; t < j + N; ++t) prefetch_span(kv_row<T>(a, a.v, a.vst, b, g, k0 + t), Dv * int64_t(sizeof(T)));
    dots<H, N>(qs.data(), DL, kr, D, s, j);
  }
  for (; j < n; ++j) {
    const T* kr[1] = {kv_row<T>(a, a.k, a.kst, b, g, k0 + j)};
    dots<H, 1>(qs.data(), DL, kr, D, s, j);
  }
  const int64_t np = round_up(n, L);
  for (int r = 0; r < H; ++r) {
    if (all_masked)
      std::fill(s[r], s[r] + n, kLowest);
    else
      apply_mask(a, mask_row(a, b, h0 + r, i), k0, s[r], n);
    std::fill(s[r] + n, s[r] + np, kNegInf);
    const float m = vmax(s[r], np);
    part[r * part_step] = m;
    part[r * part_step + 1] = exp_sum(s[r], np, ref_of(m));
  }
  acc.assign(size_t(H * DVL), 0.0f);
  // Runs of rows contiguous in one page (all n when not paged): each column's chain of
  // multiply-adds over the keys in order is the same however the keys are split.
  for (int64_t j0 = 0, run; j0 < n; j0 += run) {
    run = a.pages ? std::min(n - j0, a.page_size - (k0 + j0) % a.page_size) : n;
    const float* p[H];
    for (int r = 0; r < H; ++r) p[r] = s[r] + j0;
    weighted_sum<H>(p, kv_row<T>(a, a.v, a.vst, b, g, k0 + j0), a.vst[2], run, Dv, acc.data(), DVL);
  }
  for (int r = 0; r < H; ++r) std::copy_n(acc.begin() + r * DVL, Dv, part + r * part_step + 2);
}

template <class T> void decode_block(const AttentionOperands& a, int64_t b, int64_t h0, int heads, int64_t i,
                                     int64_t k0, int64_t k1, bool all_masked, float* part, int64_t part_step) {
  switch (heads) {
    case 1: return decode_heads<T, 1>(a, b, h0, i, k0, k1, all_masked, part, part_step);
    case 2: return decode_heads<T, 2>(a, b, h0, i, k0, k1, all_masked, part, part_step);
    case 3: return decode_heads<T, 3>(a, b, h0, i, k0, k1, all_masked, part, part_step);
    default: return decode_heads<T, 4>(a, b, h0, i, k0, k1, all_masked, part, part_step);
  }
}

}  // namespace

void attention_decode_block(const AttentionOperands& a, int64_t b, int64_t h0, int heads, int64_t i, int64_t k0,
                            int64_t k1, bool all_masked, float* part, int64_t part_step) {
  switch (a.kv) {
    case Dtype::float16: return decode_block<f16>(a, b, h0, heads, i, k0, k1, all_masked, part, part_step);
    case Dtype::bfloat16: return decode_block<bf16>(a, b, h0, heads, i, k0, k1, all_masked, part, part_step);
    default: return decode_block<float>(a, b, h0, heads, i, k0, k1, all_masked, part, part_step);
  }
}

void attention_decode_merge(const AttentionOperands& a, const float* parts, int64_t nb, int64_t h, float* out) {
  const int64_t Dv = a.Dv, stride = Dv + 2;
  thread_local std::vector<float> acc;
  acc.assign(parts + 2, parts + 2 + Dv);
  float m = parts[0], l = parts[1];
  for (int64_t t = 1; t < nb; ++t) {
    const float* p = parts + t * stride;
    float m2 = std::max(m, p[0]), r = ref_of(m2), fa = exp1(m - r), fb = exp1(p[0] - r);
    l = l * fa + p[1] * fb;
    for (int64_t c = 0; c < Dv; ++c) acc[size_t(c)] = acc[size_t(c)] * fa + p[2 + c] * fb;
    m = m2;
  }
  finish_row(a, h, m, l, acc.data(), out);
}

namespace {

template <class T>
void prefill_pack(const AttentionOperands& a, int64_t b, int64_t g, int64_t j0, float* kp, float* vp) {
  const MatmulKernels& mm = *a.mm;
  const int64_t mr = mm.f32_shape.mr, TK = kAttentionTileK, D = a.D, Dv = a.Dv;
  const int64_t C = std::min(TK, a.Lk - j0);
  const T* K = row_of<T>(a.k, a.kst, b, g, j0);
  const T* V = row_of<T>(a.v, a.vst, b, g, j0);
  const int64_t ldk = a.kst[2], ldv = a.vst[2];
  std::fill(kp, kp + prefill_k_floats(mr, D), 0.0f);
  for (int64_t p = 0; p * mr < C; ++p) {  // k as panels of mr keys: [d * mr + i] = k[p * mr + i][d]
    int64_t rows = std::min(mr, C - p * mr);
    if constexpr (std::is_same_v<T, float>) {
      mm.transpose32(reinterpret_cast<const char*>(K + p * mr * ldk), ldk * 4, rows, D, kp + p * mr * D, mr);
    } else {
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t d = 0; d < D; ++d) kp[p * mr * D + d * mr + i] = to_f(K[(p * mr + i) * ldk + d]);
    }
  }
  for (int64_t p = 0; p * mr < Dv; ++p) {  // v as panels of mr columns: [c * mr + i] = v[c][p * mr + i]
    float* dst = vp + p * TK * mr;
    int64_t w = std::min(mr, Dv - p * mr);
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t i = 0; i < w; ++i) dst[c * mr + i] = to_f(V[c * ldv + p * mr + i]);
      std::fill(dst + c * mr + w, dst + (c + 1) * mr, 0.0f);
    }
  }
}

}  // namespace

void attention_prefill_pack(const AttentionOperands& a, int64_t b, int64_t g, int64_t j0, float* kp, float* vp) {
  switch (a.kv) {
    case Dtype::float16: return prefill_pack<f16>(a, b, g, j0, kp, vp);
    case Dtype::bfloat16: return prefill_pack<bf16>(a, b, g, j0, kp, vp);
    default: return prefill_pack<float>(a, b, g, j0, kp, vp);
  }
}

// The tile works transposed: scores S^T = k q^T land, per panel of nr queries, in the k-major
// layout the micro-kernels read as B, so the softmax runs down columns (a vector of nr / L
// queries at a time) and O^T += v^T P^T needs no repacking of P.
void attention_prefill_tile(const AttentionOperands& a, const float* kpack, const float* vpack, int64_t b, int64_t h,
                            int64_t i0, int64_t i1) {
  const MatmulKernels& mm = *a.mm;
  const int64_t mr = mm.f32_shape.mr, nr = mm.f32_shape.nr, TK = kAttentionTileK;
  const int64_t R = i1 - i0, D = a.D, Dv = a.Dv, off = a.Lk - a.Lq;
  const int64_t nq = (R + nr - 1) / nr, ldo = nq * nr, tkp = round_up(TK, mr), pvv = (Dv + mr - 1) / mr;
  const int64_t ksize = prefill_k_floats(mr, D), vsize = prefill_v_floats(mr, Dv);
  const float* Q = row_of<float>(a.q, a.qst, b, h, i0);
  const bool causal = a.mask == AttentionMask::causal;
  // Keys past the last row's causal end are masked for every row of the tile (exp gives 0 for
  // them exactly), so they are skipped; unless some row sees no key at all, then it averages all.
  int64_t kend = a.Lk;
  if (causal && i0 + off >= 0) kend = std::min(a.Lk, i1 + off);

  thread_local std::vector<float> QT, ST, OT, ms, ls, al;
  thread_local std::vector<int64_t> cols;
  cols.resize(size_t(nq));
  QT.assign(size_t(nq * D * nr), 0.0f);
  ST.resize(size_t(nq * tkp * nr));
  OT.assign(size_t(pvv * mr * ldo), 0.0f);
  ms.assign(size_t(ldo), kNegInf);
  ls.assign(size_t(ldo), 0.0f);
  al.resize(size_t(ldo));
  for (int64_t j = 0; j < R; ++j)  // q^T in panels of nr queries, scaled
    for (int64_t d = 0; d < D; ++d) QT[size_t((j / nr) * D * nr + d * nr + j % nr)] = Q[j * a.qst[2] + d] * a.scale;

  for (int64_t j0 = 0; j0 < kend; j0 += TK) {
    const int64_t t = j0 / TK;
    const float* Kp = kpack + t * ksize;
    const float* Vp = vpack + t * vsize;
    // The keys of this tile a panel of queries from q0 works on: under a causal mask, none past
    // its last query's end (their weights are exactly 0, so leaving them out changes no bits).
    auto visible = [&](int64_t q0) {
      int64_t c = std::min(TK, kend - j0);
      return causal && i0 + off >= 0 ? std::clamp<int64_t>(q0 + nr + off - j0, 0, c) : c;
    };
    for (int64_t n = 0; n < nq; ++n) {
      const int64_t q0 = i0 + n * nr, C = cols[size_t(n)] = visible(q0);
      if (C == 0) continue;
      float* st = ST.data() + n * tkp * nr;
      for (int64_t p = 0; p * mr < C; ++p)
        mm.f32[std::min(mr, C - p * mr)](D, Kp + p * mr * D, QT.data() + n * D * nr, st + p * mr * nr, nr, false);
      if (causal) {  // query q0 + jj masks key j0 + c when jj < j0 + c - off - q0
        for (int64_t c = 0; c < C; ++c)
          for (int64_t jj = 0, e = std::min(nr, j0 + c - off - q0); jj < e; ++jj) st[c * nr + jj] = kLowest;
      } else if (a.mask != AttentionMask::none) {
        for (int64_t jj = 0; jj < nr && q0 + jj < i1; ++jj) {
          float col[kAttentionTileK];
          for (int64_t c = 0; c < C; ++c) col[c] = st[c * nr + jj];
          apply_mask(a, mask_row(a, b, h, q0 + jj), j0, col, C);
          for (int64_t c = 0; c < C; ++c) st[c * nr + jj] = col[c];
        }
      }
      bool rescale = false;
      for (int64_t v = 0; v < nr; v += L) {  // online softmax down the columns
        VecF mx = splat(kNegInf);
        for (int64_t c = 0; c < C; ++c) {
          VecF x = load(st + c * nr + v);
          mx = x > mx ? x : mx;
        }
        float* mp = ms.data() + n * nr + v;
        VecF mo = load(mp), m2 = mx > mo ? mx : mo;
        VecF ref = m2 == splat(kNegInf) ? splat(0.0f) : m2, sum = VecF{};
        VecF alpha = expf_v(mo - ref);
        for (int64_t c = 0; c < C; ++c) {
          VecF e = expf_v(load(st + c * nr + v) - ref);
          store(st + c * nr + v, e);
          sum += e;
        }
        store(ls.data() + n * nr + v, load(ls.data() + n * nr + v) * alpha + sum);
        store(mp, m2);
        store(al.data() + n * nr + v, alpha);
        for (int l = 0; l < L; ++l) rescale |= alpha[l] != 1.0f;
      }
      if (rescale)  // (a factor of 1 changes no bits)
        for (int64_t d = 0; d < pvv * mr; ++d)
          for (int64_t v = 0; v < nr; v += L) {
            float* o = OT.data() + d * ldo + n * nr + v;
            store(o, load(o) * load(al.data() + n * nr + v));
          }
    }
    for (int64_t p = 0; p < pvv; ++p)
      for (int64_t n = 0; n < nq; ++n)
        if (cols[size_t(n)])
          mm.f32[std::min(mr, Dv - p * mr)](cols[size_t(n)], Vp + p * TK * mr, ST.data() + n * tkp * nr,
                                            OT.data() + p * mr * ldo + n * nr, ldo, true);
  }
  float* out = a.out + ((b * a.Hq + h) * a.Lq + i0) * Dv;
  thread_local std::vector<float> acc;
  acc.resize(size_t(Dv));
  for (int64_t j = 0; j < R; ++j) {
    for (int64_t d = 0; d < Dv; ++d) acc[size_t(d)] = OT[size_t(d * ldo + j)];
    finish_row(a, h, ms[size_t(j)], ls[size_t(j)], acc.data(), out + j * Dv);
  }
}

}  // namespace nuvec::cpu::NUVEC_ISA
