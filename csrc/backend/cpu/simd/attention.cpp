// The attention kernels, built per instruction set (backend/cpu/attention.h). Decode: a query
// row's keys in blocks, each block's scores, softmax and weighted values in float32, one chain of
// operations per score and per value column, so a row's bits depend only on its own keys. Prefill:
// tiles of queries by keys through the matrix-product micro-kernels, with an online softmax (a
// running max and sum per row); the full score matrix never exists.
#include <algorithm>
#include <cmath>
#include <limits>
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

float hsum(VecF v) {  // lanes summed in a fixed tree
  for (int w = L / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) v[k] += v[k + w];
  return v[0];
}

float exp1(float x) { return expf_v(splat(x))[0]; }

// The point a softmax step subtracts: the max, or 0 when every score is -inf (an additive mask's),
// so the exps are 0 rather than NaN.
float ref_of(float m) { return m == kNegInf ? 0.0f : m; }

// N scores q . k_n at once (independent chains, the same operations for each key): one chain of
// multiply-adds over D in vectors, the tail through a zero-padded copy (q's padding is zero).
template <int N> void dots(const float* q, const float* const* kr, int64_t D, float* s) {
  VecF acc[N];
  for (int n = 0; n < N; ++n) acc[n] = VecF{};
  int64_t d = 0;
  for (; d + L <= D; d += L) {
    VecF qv = load(q + d);
    for (int n = 0; n < N; ++n) acc[n] = fmadd(qv, load(kr[n] + d), acc[n]);
  }
  if (d < D) {
    VecF qv = load(q + d);
    for (int n = 0; n < N; ++n) {
      float t[L] = {};
      std::memcpy(t, kr[n] + d, size_t(D - d) * 4);
      acc[n] = fmadd(qv, load(t), acc[n]);
    }
  }
  for (int n = 0; n < N; ++n) s[n] = hsum(acc[n]);
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
  return hsum(acc);
}

// acc[c] += Σ_j p[j] * V[j * ldv + c] for the NV vectors of columns from c0, j in order.
template <int NV> void weighted(const float* p, const float* V, int64_t ldv, int64_t n, int64_t c0, float* acc) {
  VecF r[NV];
  for (int t = 0; t < NV; ++t) r[t] = load(acc + c0 + t * L);
  for (int64_t j = 0; j < n; ++j) {
    VecF pj = splat(p[j]);
    const float* vj = V + j * ldv + c0;
    for (int t = 0; t < NV; ++t) r[t] = fmadd(pj, load(vj + t * L), r[t]);
  }
  for (int t = 0; t < NV; ++t) store(acc + c0 + t * L, r[t]);
}

// acc[0, Dv) += Σ_j p[j] * V_j (acc holds round_up(Dv, L) floats).
void weighted_sum(const float* p, const float* V, int64_t n, int64_t Dv, float* acc) {
  int64_t full = Dv / L * L, c = 0;
  for (; c + 8 * L <= full; c += 8 * L) weighted<8>(p, V, Dv, n, c, acc);
  for (; c < full; c += L) weighted<1>(p, V, Dv, n, c, acc);
  if (c == Dv) return;
  VecF r = load(acc + c);
  for (int64_t j = 0; j < n; ++j) {
    float t[L] = {};
    std::memcpy(t, V + j * Dv + c, size_t(Dv - c) * 4);
    r = fmadd(splat(p[j]), load(t), r);
  }
  store(acc + c, r);
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

void attention_decode_block(const AttentionOperands& a, int64_t b, int64_t h, int64_t i, int64_t k0, int64_t k1,
                            bool all_masked, float* part) {
  const int64_t D = a.D, Dv = a.Dv, n = k1 - k0, g = h / (a.Hq / a.Hkv);
  const float* q = a.q + ((b * a.Hq + h) * a.Lq + i) * D;
  const float* K = a.k + ((b * a.Hkv + g) * a.Lk + k0) * D;
  const float* V = a.v + ((b * a.Hkv + g) * a.Lk + k0) * Dv;
  thread_local std::vector<float> qs, acc;
  qs.assign(size_t(round_up(D, L)), 0.0f);
  for (int64_t d = 0; d < D; ++d) qs[size_t(d)] = q[d] * a.scale;
  alignas(64) float s[kAttentionKeyBlock + 16];
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* kr[4] = {K + j * D, K + (j + 1) * D, K + (j + 2) * D, K + (j + 3) * D};
    dots<4>(qs.data(), kr, D, s + j);
  }
  for (; j < n; ++j) {
    const float* kr[1] = {K + j * D};
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
  weighted_sum(s, V, n, Dv, acc.data());
  std::copy(acc.begin(), acc.begin() + Dv, part + 2);
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

void attention_prefill_tile(const AttentionOperands& a, int64_t b, int64_t h, int64_t i0, int64_t i1) {
  const MatmulKernels& mm = *a.mm;
  const int64_t mr = mm.f32_shape.mr, nr = mm.f32_shape.nr, TK = kAttentionTileK;
  const int64_t R = i1 - i0, D = a.D, Dv = a.Dv, g = h / (a.Hq / a.Hkv), off = a.Lk - a.Lq;
  const int64_t pq = (R + mr - 1) / mr, ldS = round_up(TK, nr), ldo = round_up(Dv, nr), pv = ldo / nr;
  const float* Q = a.q + ((b * a.Hq + h) * a.Lq + i0) * D;
  const float* K = a.k + (b * a.Hkv + g) * a.Lk * D;
  const float* V = a.v + (b * a.Hkv + g) * a.Lk * Dv;
  const bool causal = a.mask == AttentionMask::causal;
  // Keys past the last row's causal end are masked for every row of the tile (exp gives 0 for
  // them exactly), so they are skipped; unless some row sees no key at all, then it averages all.
  int64_t kend = a.Lk;
  if (causal && i0 + off >= 0) kend = std::min(a.Lk, i1 + off);

  thread_local std::vector<float> Aq, Bk, S, Ap, Bv, O, ms, ls;
  Aq.assign(size_t(pq * mr * D), 0.0f);
  Bk.resize(size_t(ldS * D));
  S.resize(size_t(pq * mr * ldS));
  Ap.assign(size_t(pq * mr * TK), 0.0f);
  Bv.resize(size_t(pv * TK * nr));
  O.assign(size_t(pq * mr * ldo), 0.0f);
  ms.assign(size_t(R), kNegInf);
  ls.assign(size_t(R), 0.0f);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t d = 0; d < D; ++d) Aq[size_t((r / mr) * mr * D + d * mr + r % mr)] = Q[r * D + d] * a.scale;

  for (int64_t j0 = 0; j0 < kend; j0 += TK) {
    const int64_t C = std::min(TK, kend - j0), pk = (C + nr - 1) / nr;
    if (C % nr) std::fill(Bk.begin() + (pk - 1) * nr * D, Bk.begin() + pk * nr * D, 0.0f);
    for (int64_t c = 0; c < C; ++c) {  // K^T in panels of nr keys
      const float* kr = K + (j0 + c) * D;
      float* dst = Bk.data() + (c / nr) * nr * D + c % nr;
      for (int64_t d = 0; d < D; ++d) dst[d * nr] = kr[d];
    }
    for (int64_t p = 0; p < pq; ++p) {
      int rows = int(std::min(mr, R - p * mr));
      for (int64_t n = 0; n < pk; ++n)
        mm.f32[rows](D, Aq.data() + p * mr * D, Bk.data() + n * nr * D, S.data() + p * mr * ldS + n * nr, ldS, false);
    }
    const int64_t cp = round_up(C, L);
    for (int64_t r = 0; r < R; ++r) {
      float* s = S.data() + r * ldS;
      if (causal)
        for (int64_t c = std::max<int64_t>(0, i0 + r + off + 1 - j0); c < C; ++c) s[c] = kLowest;
      else
        apply_mask(a, mask_row(a, b, h, i0 + r), j0, s, C);
      std::fill(s + C, s + cp, kNegInf);
      float m2 = std::max(ms[size_t(r)], vmax(s, cp)), ref = ref_of(m2), alpha = exp1(ms[size_t(r)] - ref);
      ls[size_t(r)] = ls[size_t(r)] * alpha + exp_sum(s, cp, ref);
      ms[size_t(r)] = m2;
      float* o = O.data() + r * ldo;
      VecF al = splat(alpha);
      for (int64_t c = 0; c < ldo; c += L) store(o + c, load(o + c) * al);
      float* ap = Ap.data() + (r / mr) * mr * TK + r % mr;
      for (int64_t c = 0; c < C; ++c) ap[c * mr] = s[c];
    }
    for (int64_t n = 0; n < pv; ++n) {  // V in panels of nr columns, zero past Dv
      float* dst = Bv.data() + n * TK * nr;
      int64_t w = std::min(nr, Dv - n * nr);
      for (int64_t c = 0; c < C; ++c) {
        std::memcpy(dst + c * nr, V + (j0 + c) * Dv + n * nr, size_t(w) * 4);
        std::fill(dst + c * nr + w, dst + (c + 1) * nr, 0.0f);
      }
    }
    for (int64_t p = 0; p < pq; ++p) {
      int rows = int(std::min(mr, R - p * mr));
      for (int64_t n = 0; n < pv; ++n)
        mm.f32[rows](C, Ap.data() + p * mr * TK, Bv.data() + n * TK * nr, O.data() + p * mr * ldo + n * nr, ldo,
                     true);
    }
  }
  float* out = a.out + ((b * a.Hq + h) * a.Lq + i0) * Dv;
  for (int64_t r = 0; r < R; ++r) finish_row(a, h, ms[size_t(r)], ls[size_t(r)], O.data() + r * ldo, out + r * Dv);
}

}  // namespace nuvec::cpu::NUVEC_ISA
