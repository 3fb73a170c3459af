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

// L elements of T as float32 (exact for the half types).
template <class T> VecF load_f(const T* p) {
  if constexpr (std::is_same_v<T, float>) {
    return load(p);
  } else {
#if defined(__AVX2__) && !defined(__AVX512F__)
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

// N scores q . k_n at once (independent chains, the same operations for each key): one chain of
// multiply-adds over D in vectors, the tail through a zero-padded copy (q's padding is zero).
template <int N, class T> void dots(const float* q, const T* const* kr, int64_t D, float* s) {
  VecF acc[N];
  for (int n = 0; n < N; ++n) acc[n] = VecF{};
  int64_t d = 0;
  for (; d + L <= D; d += L) {
    VecF qv = load(q + d);
    for (int n = 0; n < N; ++n) acc[n] = fmadd(qv, load_f(kr[n] + d), acc[n]);
  }
  if (d < D) {
    VecF qv = load(q + d);
    for (int n = 0; n < N; ++n) acc[n] = fmadd(qv, load_f_tail(kr[n] + d, D - d), acc[n]);
  }
  halving_sums<N>(acc, s);
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

// acc[c] += Σ_j p[j] * V[j * ldv + c] for the NV vectors of columns from c0, j in order.
template <int NV, class T> void weighted(const float* p, const T* V, int64_t ldv, int64_t n, int64_t c0, float* acc) {
  VecF r[NV];
  for (int t = 0; t < NV; ++t) r[t] = load(acc + c0 + t * L);
  for (int64_t j = 0; j < n; ++j) {
    VecF pj = splat(p[j]);
    const T* vj = V + j * ldv + c0;
    for (int t = 0; t < NV; ++t) r[t] = fmadd(pj, load_f(vj + t * L), r[t]);
  }
  for (int t = 0; t < NV; ++t) store(acc + c0 + t * L, r[t]);
}

// acc[0, Dv) += Σ_j p[j] * V_j, rows ldv apart (acc holds round_up(Dv, L) floats).
template <class T> void weighted_sum(const float* p, const T* V, int64_t ldv, int64_t n, int64_t Dv, float* acc) {
  int64_t full = Dv / L * L, c = 0;
  for (; c + 8 * L <= full; c += 8 * L) weighted<8>(p, V, ldv, n, c, acc);
  for (; c < full; c += L) weighted<1>(p, V, ldv, n, c, acc);
  if (c == Dv) return;
  VecF r = load(acc + c);
  for (int64_t j = 0; j < n; ++j) r = fmadd(splat(p[j]), load_f_tail(V + j * ldv + c, Dv - c), r);
  store(acc + c, r);
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

template <class T> void decode_block(const AttentionOperands& a, int64_t b, int64_t h, int64_t i, int64_t k0,
                                     int64_t k1, bool all_masked, float* part) {
  const int64_t D = a.D, Dv = a.Dv, n = k1 - k0, g = h / (a.Hq / a.Hkv);
  const float* q = row_of<float>(a.q, a.qst, b, h, i);
  thread_local std::vector<float> qs, acc;
  qs.assign(size_t(round_up(D, L)), 0.0f);
  for (int64_t d = 0; d < D; ++d) qs[size_t(d)] = q[d] * a.scale;
  alignas(64) float s[kAttentionKeyBlock + 16];
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {  // eight chains in flight keep both FMA units busy
    const T* kr[8];
    for (int t = 0; t < 8; ++t) kr[t] = kv_row<T>(a, a.k, a.kst, b, g, k0 + j + t);
    dots<8>(qs.data(), kr, D, s + j);
  }
  for (; j < n; ++j) {
    const T* kr[1] = {kv_row<T>(a, a.k, a.kst, b, g, k0 + j)};
    dots<1>(qs.data(), kr, D, s + j);
  }
  if (all_masked)
    std::fill(s, s + n, kLowest);
  else
    apply_mask(a, mask_row(a, b, h, i), k0, s, n);
  int64_t np = round_up(n, L);
  std::fill(s + n, s + np, kNegInf);
  float m = vmax(s, np);
  part[0] = m;
  part[1] = exp_sum(s, np, ref_of(m));
  acc.assign(size_t(round_up(Dv, L)), 0.0f);
  // Runs of rows contiguous in one page (all n when not paged): each column's chain of
  // multiply-adds over the keys in order is the same however the keys are split.
  for (int64_t j0 = 0, run; j0 < n; j0 += run) {
    run = a.pages ? std::min(n - j0, a.page_size - (k0 + j0) % a.page_size) : n;
    weighted_sum(s + j0, kv_row<T>(a, a.v, a.vst, b, g, k0 + j0), a.vst[2], run, Dv, acc.data());
  }
  std::copy(acc.begin(), acc.begin() + Dv, part + 2);
}

}  // namespace

void attention_decode_block(const AttentionOperands& a, int64_t b, int64_t h, int64_t i, int64_t k0, int64_t k1,
                            bool all_masked, float* part) {
  switch (a.kv) {
    case Dtype::float16: return decode_block<f16>(a, b, h, i, k0, k1, all_masked, part);
    case Dtype::bfloat16: return decode_block<bf16>(a, b, h, i, k0, k1, all_masked, part);
    default: return decode_block<float>(a, b, h, i, k0, k1, all_masked, part);
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
