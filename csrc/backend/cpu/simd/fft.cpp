// The FFT's loops, built per instruction set (backend/cpu/fft.h says what each does). All of
// them work on kFftLanes-wide vectors of one fixed width (GCC's vector extension: two SSE
// registers in the portable build, one AVX register in the others), lane by lane and without
// contraction, so every build gives the same bits.
#include <cstring>
#include <initializer_list>

#include "backend/cpu/fft.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {
typedef float V __attribute__((vector_size(kFftLanes * 4)));
constexpr int64_t L = kFftLanes;
constexpr int64_t kAhead = 16;  // rows to prefetch ahead in gathers and scatters

inline V ld(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void st(float* p, V v) { std::memcpy(p, &v, sizeof(v)); }
inline float ld1(const float* p) { return *p; }
inline void st1(float* p, float v) { *p = v; }

// A complex vector in split form.
struct C {
  V r, i;
};
inline C operator+(C a, C b) { return {a.r + b.r, a.i + b.i}; }
inline C operator-(C a, C b) { return {a.r - b.r, a.i - b.i}; }
inline C mul(C a, float wr, float wi) { return {a.r * wr - a.i * wi, a.r * wi + a.i * wr}; }
inline C scale(C a, float c) { return {a.r * c, a.i * c}; }
inline C neg_i(C a) { return {a.i, -a.r}; }  // -i a
inline C ldc(const float* re, const float* im, int64_t o) { return {ld(re + o), ld(im + o)}; }
inline void stc(float* re, float* im, int64_t o, C v) {
  st(re + o, v.r);
  st(im + o, v.i);
}

// Stores b_r times the twiddle w_j^r (r >= 1), at y[q + s (p j + r)].
template <int P> struct Out {
  float *yr, *yi;
  int64_t base, s;
  const float* w;
  void operator()(int r, C b) const {
    stc(yr, yi, base + r * s, r ? mul(b, w[2 * (r - 1)], w[2 * (r - 1) + 1]) : b);
  }
};

void butterfly2(const C* a, const Out<2>& out) {
  out(0, a[0] + a[1]);
  out(1, a[0] - a[1]);
}

void butterfly3(const C* a, const Out<3>& out) {
  const float h = 0.866025403784438647f;  // sin(2 pi / 3)
  C t1 = a[1] + a[2], t2 = a[1] - a[2];
  C m = a[0] - scale(t1, 0.5f), n = scale(neg_i(t2), h);
  out(0, a[0] + t1);
  out(1, m + n);
  out(2, m - n);
}

void butterfly4(const C* a, const Out<4>& out) {
  C t0 = a[0] + a[2], t1 = a[0] - a[2], t2 = a[1] + a[3], t3 = neg_i(a[1] - a[3]);
  out(0, t0 + t2);
  out(1, t1 + t3);
  out(2, t0 - t2);
  out(3, t1 - t3);
}

// Two 4-point transforms (even and odd inputs) joined by w8^r = e^{-i pi r / 4}.
template <int P> void butterfly8(const C* a, const Out<P>& out) {
  const float h = 0.707106781186547524f;  // sqrt(1/2)
  C e[4], o[4];
  for (int q = 0; q < 2; ++q) {
    C* y = q ? o : e;
    C t0 = a[q] + a[q + 4], t1 = a[q] - a[q + 4], t2 = a[q + 2] + a[q + 6], t3 = neg_i(a[q + 2] - a[q + 6]);
    y[0] = t0 + t2, y[1] = t1 + t3, y[2] = t0 - t2, y[3] = t1 - t3;
  }
  o[1] = {(o[1].r + o[1].i) * h, (o[1].i - o[1].r) * h};
  o[2] = neg_i(o[2]);
  o[3] = {(o[3].i - o[3].r) * h, -((o[3].r + o[3].i) * h)};
  for (int r = 0; r < 4; ++r) {
    out(r, e[r] + o[r]);
    out(r + 4, e[r] - o[r]);
  }
}

void butterfly5(const C* a, const Out<5>& out) {
  const float c1 = 0.309016994374947424f, c2 = -0.809016994374947424f;  // cos(2 pi k / 5)
  const float s1 = 0.951056516295153572f, s2 = 0.587785252292473129f;   // sin(2 pi k / 5)
  C t1 = a[1] + a[4], t2 = a[2] + a[3], t3 = a[1] - a[4], t4 = a[2] - a[3];
  C m1 = a[0] + scale(t1, c1) + scale(t2, c2), m2 = a[0] + scale(t1, c2) + scale(t2, c1);
  C n1 = neg_i(scale(t3, s1) + scale(t4, s2)), n2 = neg_i(scale(t3, s2) - scale(t4, s1));
  out(0, a[0] + t1 + t2);
  out(1, m1 + n1);
  out(4, m1 - n1);
  out(2, m2 + n2);
  out(3, m2 - n2);
}

// Odd p: pairs (k, p - k) give b_r and b_{p-r} from the same sums.
void butterfly_odd(int p, const C* a, const float* cs, const Out<0>& out) {
  C sum[64], dif[64];
  int h = (p - 1) / 2;
  C b0 = a[0];
  for (int k = 1; k <= h; ++k) {
    sum[k] = a[k] + a[p - k];
    dif[k] = a[k] - a[p - k];
    b0 = b0 + sum[k];
  }
  out(0, b0);
  for (int r = 1; r <= h; ++r) {
    C re = a[0], im = {V{}, V{}};
    for (int k = 1; k <= h; ++k) {
      int rk = (r * k) % p;
      re = re + scale(sum[k], cs[2 * rk]);
      im = im + scale(dif[k], cs[2 * rk + 1]);
    }
    C n = neg_i(im);
    out(r, re + n);
    out(p - r, re - n);
  }
}

template <int P> void pass_radix(int p, int64_t m, int64_t s, const float* tw, const float* cs, const float* xr,
                                 const float* xi, float* yr, float* yi) {
  C a[P ? P : 64];
  for (int64_t j = 0; j < m; ++j) {
    const float* w = tw + 2 * (p - 1) * j;
    for (int64_t q = 0; q < s; q += L) {
      for (int k = 0; k < p; ++k) a[k] = ldc(xr, xi, q + s * (j + k * m));
      Out<P> out{yr, yi, q + s * p * j, s, w};
      if constexpr (P == 2) butterfly2(a, out);
      if constexpr (P == 3) butterfly3(a, out);
      if constexpr (P == 4) butterfly4(a, out);
      if constexpr (P == 5) butterfly5(a, out);
      if constexpr (P == 8) butterfly8(a, out);
      if constexpr (P == 0) butterfly_odd(p, a, cs, out);
    }
  }
}

// The r2c / c2r passes, on T = V (a block, row stride L) or T = float (one interleaved sequence,
// row stride 2): lanes of the rows k and h - k together, so in place.
template <class T> struct Lanes;
template <> struct Lanes<V> {
  static V load(const float* p) { return ld(p); }
  static void store(float* p, V v) { st(p, v); }
};
template <> struct Lanes<float> {
  static float load(const float* p) { return ld1(p); }
  static void store(float* p, float v) { st1(p, v); }
};

// X_k = E + w^k O and X_{h-k} = conj(E - w^k O), E = (A + B) / 2, O = -i (A - B) / 2, A = Z_k, B =
// conj(Z_{h-k}) (Z_h = Z_0, row h gets X_h).
template <class T> void real_post(float* re, float* im, int64_t rs, int64_t h, const float* w, int64_t k0, int64_t k1) {
  using Ln = Lanes<T>;
  for (int64_t k = k0; k < k1; ++k) {
    int64_t kp = k ? h - k : 0;
    T ar = Ln::load(re + k * rs), ai = Ln::load(im + k * rs);
    T br = Ln::load(re + kp * rs), bi = -Ln::load(im + kp * rs);
    T er = (ar + br) * 0.5f, ei = (ai + bi) * 0.5f;
    T dr = (ar - br) * 0.5f, di = (ai - bi) * 0.5f;
    T orr = di, oi = -dr;
    float wr = w[2 * k], wi = w[2 * k + 1];
    T tr = orr * wr - oi * wi, ti = orr * wi + oi * wr;
    Ln::store(re + k * rs, er + tr);
    Ln::store(im + k * rs, ei + ti);
    if (k == h - k) continue;
    int64_t ko = h - k;
    Ln::store(re + ko * rs, er - tr);
    Ln::store(im + ko * rs, -(ei - ti));
  }
}

// Z_k = S + T and Z_{h-k} = conj(S - T), S = X_k + C, T = i (X_k - C) conj(w^k), C = conj(X_{h-k});
// the imaginary parts of X_0 and X_h are ignored (as NumPy does).
template <class T> void real_pre(float* re, float* im, int64_t rs, int64_t h, const float* w, int64_t k0, int64_t k1) {
  using Ln = Lanes<T>;
  for (int64_t k = k0; k < k1; ++k) {
    int64_t kp = h - k;
    T ar = Ln::load(re + k * rs), ai = Ln::load(im + k * rs);
    T cr = Ln::load(re + kp * rs), ci = -Ln::load(im + kp * rs);
    if (k == 0) ai = T{}, ci = T{};
    T sr = ar + cr, si = ai + ci;
    T dr = ar - cr, di = ai - ci;
    float wr = w[2 * k], wi = -w[2 * k + 1];
    T ur = dr * wr - di * wi, ui = dr * wi + di * wr;
    T tr = -ui, ti = ur;
    Ln::store(re + k * rs, sr + tr);
    Ln::store(im + k * rs, si + ti);
    if (k == kp || k == 0) continue;  // row h is not part of Z
    Ln::store(re + kp * rs, sr - tr);
    Ln::store(im + kp * rs, -(si - ti));
  }
}
}  // namespace

void fft_pass(int p, int64_t m, int64_t s, const float* tw, const float* cs, const float* xr, const float* xi,
              float* yr, float* yi) {
  switch (p) {
    case 2: return pass_radix<2>(p, m, s, tw, cs, xr, xi, yr, yi);
    case 3: return pass_radix<3>(p, m, s, tw, cs, xr, xi, yr, yi);
    case 4: return pass_radix<4>(p, m, s, tw, cs, xr, xi, yr, yi);
    case 5: return pass_radix<5>(p, m, s, tw, cs, xr, xi, yr, yi);
    case 8: return pass_radix<8>(p, m, s, tw, cs, xr, xi, yr, yi);
    default: return pass_radix<0>(p, m, s, tw, cs, xr, xi, yr, yi);
  }
}

// Interleaved complex data moves by whole vectors where the layout allows: rows of eight
// neighbouring values (deinterleaved by shuffles), or eight rows of a row-major array at once
// (and an 8 x 8 transpose); pure data movement, so no bit changes. Other layouts go one value at
// a time. Rows far apart (columns of a large array) defeat the hardware prefetcher: ask ahead.
namespace {
typedef int32_t VI __attribute__((vector_size(kFftLanes * 4)));

inline V evens(V a, V b) { return __builtin_shuffle(a, b, VI{0, 2, 4, 6, 8, 10, 12, 14}); }
inline V odds(V a, V b) { return __builtin_shuffle(a, b, VI{1, 3, 5, 7, 9, 11, 13, 15}); }
inline V inter_lo(V a, V b) { return __builtin_shuffle(a, b, VI{0, 8, 1, 9, 2, 10, 3, 11}); }
inline V inter_hi(V a, V b) { return __builtin_shuffle(a, b, VI{4, 12, 5, 13, 6, 14, 7, 15}); }

void transpose8(V* m) {
  for (int k = 0; k < 8; k += 2) {
    V a = m[k], b = m[k + 1];
    m[k] = __builtin_shuffle(a, b, VI{0, 8, 2, 10, 4, 12, 6, 14});
    m[k + 1] = __builtin_shuffle(a, b, VI{1, 9, 3, 11, 5, 13, 7, 15});
  }
  for (int k : {0, 1, 4, 5}) {
    V a = m[k], b = m[k + 2];
    m[k] = __builtin_shuffle(a, b, VI{0, 1, 8, 9, 4, 5, 12, 13});
    m[k + 2] = __builtin_shuffle(a, b, VI{2, 3, 10, 11, 6, 7, 14, 15});
  }
  for (int k = 0; k < 4; ++k) {
    V a = m[k], b = m[k + 4];
    m[k] = __builtin_shuffle(a, b, VI{0, 1, 2, 3, 8, 9, 10, 11});
    m[k + 4] = __builtin_shuffle(a, b, VI{4, 5, 6, 7, 12, 13, 14, 15});
  }
}

inline void ahead(const float* p, int64_t stride, bool write) {
  if (write)
    __builtin_prefetch(p + kAhead * stride, 1);
  else
    __builtin_prefetch(p + kAhead * stride);
}

// Rows r0 .. r0 + 7 of eight row-major interleaved sequences (lanes) to the block, or back.
void rows_in(const float* src, int64_t ls, int64_t r0, int valid, float* br, float* bi) {
  V re[8], im[8];
  for (int l = 0; l < 8; ++l) {
    V a = l < valid ? ld(src + l * ls + 2 * r0) : V{}, b = l < valid ? ld(src + l * ls + 2 * r0 + L) : V{};
    re[l] = evens(a, b), im[l] = odds(a, b);
  }
  transpose8(re);
  transpose8(im);
  for (int j = 0; j < 8; ++j) st(br + (r0 + j) * L, re[j]), st(bi + (r0 + j) * L, im[j]);
}

// The same for split arrays (re and im apart): rows r0 .. r0 + 7 of eight rows at stride ls.
void split_rows_in(const float* re, const float* im, int64_t ls, int64_t r0, int valid, float* br, float* bi) {
  V vr[8], vi[8];
  for (int l = 0; l < 8; ++l) {
    vr[l] = l < valid ? ld(re + l * ls + r0) : V{};
    vi[l] = l < valid ? ld(im + l * ls + r0) : V{};
  }
  transpose8(vr);
  transpose8(vi);
  for (int j = 0; j < 8; ++j) st(br + (r0 + j) * L, vr[j]), st(bi + (r0 + j) * L, vi[j]);
}

void rows_out(const float* br, const float* bi, int64_t r0, int valid, float scale, float* dst, int64_t ls) {
  V re[8], im[8];
  for (int j = 0; j < 8; ++j) re[j] = ld(br + (r0 + j) * L), im[j] = ld(bi + (r0 + j) * L);
  transpose8(re);
  transpose8(im);
  for (int l = 0; l < valid; ++l) {
    V a = re[l], b = im[l];
    if (scale != 1.0f) a = a * scale, b = b * scale;
    st(dst + l * ls + 2 * r0, inter_lo(a, b));
    st(dst + l * ls + 2 * r0 + L, inter_hi(a, b));
  }
}
}  // namespace

void fft_gather(const float* re, const float* im, int64_t rs, int64_t ls, int64_t rows, int lanes_valid, float* br,
                float* bi) {
  bool interleaved = im == re + 1, split = im && !interleaved;
  int64_t r = 0;
  if (interleaved && rs == 2)  // eight rows of a row-major array
    for (; r + 8 <= rows; r += 8) rows_in(re, ls, r, lanes_valid, br, bi);
  if (split && rs == 1)
    for (; r + 8 <= rows; r += 8) split_rows_in(re, im, ls, r, lanes_valid, br, bi);
  for (; r < rows; ++r) {
    float* orr = br + r * L;
    float* oi = bi + r * L;
    const float* pr = re + r * rs;
    if (r + kAhead < rows) {
      ahead(pr, rs, false);
      if (im) ahead(im + r * rs, rs, false);
    }
    if (interleaved && ls == 2 && lanes_valid == L) {  // eight neighbouring values
      V a = ld(pr), b = ld(pr + L);
      st(orr, evens(a, b)), st(oi, odds(a, b));
      continue;
    }
    if (split && ls == 1 && lanes_valid == L) {
      st(orr, ld(pr)), st(oi, ld(im + r * rs));
      continue;
    }
    int l = 0;
    for (; l < lanes_valid; ++l) {
      orr[l] = pr[l * ls];
      oi[l] = im ? im[r * rs + l * ls] : 0.0f;
    }
    for (; l < L; ++l) orr[l] = oi[l] = 0.0f;
  }
}

void fft_scatter(const float* br, const float* bi, int64_t rows, int lanes_valid, float scale, float* re, float* im,
                 int64_t rs, int64_t ls) {
  bool interleaved = im == re + 1;
  int64_t r = 0;
  if (interleaved && rs == 2)
    for (; r + 8 <= rows; r += 8) rows_out(br, bi, r, lanes_valid, scale, re, ls);
  for (; r < rows; ++r) {
    V vr = ld(br + r * L), vi = ld(bi + r * L);
    if (scale != 1.0f) vr = vr * scale, vi = vi * scale;
    float* pr = re + r * rs;
    if (r + kAhead < rows) {
      ahead(pr, rs, true);
      if (im) ahead(im + r * rs, rs, true);
    }
    if (interleaved && ls == 2 && lanes_valid == L) {
      st(pr, inter_lo(vr, vi)), st(pr + L, inter_hi(vr, vi));
      continue;
    }
    if (im && !interleaved && ls == 1 && lanes_valid == L) {
      st(pr, vr), st(im + r * rs, vi);
      continue;
    }
    for (int l = 0; l < lanes_valid; ++l) pr[l * ls] = vr[l];
    if (im) {
      float* pi = im + r * rs;
      for (int l = 0; l < lanes_valid; ++l) pi[l * ls] = vi[l];
    }
  }
}

void fft_mul_rows(float* br, float* bi, int64_t rows, const float* w) {
  for (int64_t r = 0; r < rows; ++r) stc(br, bi, r * L, mul(ldc(br, bi, r * L), w[2 * r], w[2 * r + 1]));
}

void fft_mul_cells(float* br, float* bi, int64_t rows, const float* wr, const float* wi, int64_t ws) {
  for (int64_t r = 0; r < rows; ++r) {
    C a = ldc(br, bi, r * L);
    V cr = ld(wr + r * ws), ci = ld(wi + r * ws);
    stc(br, bi, r * L, {a.r * cr - a.i * ci, a.r * ci + a.i * cr});
  }
}

void fft_real_post(float* re, float* im, int64_t rs, int64_t h, int lanes, const float* w, int64_t k0, int64_t k1) {
  if (lanes == 1) return real_post<float>(re, im, rs, h, w, k0, k1);
  real_post<V>(re, im, rs, h, w, k0, k1);
}

void fft_real_pre(float* re, float* im, int64_t rs, int64_t h, int lanes, const float* w, int64_t k0, int64_t k1) {
  if (lanes == 1) return real_pre<float>(re, im, rs, h, w, k0, k1);
  real_pre<V>(re, im, rs, h, w, k0, k1);
}

}  // namespace nuvec::cpu::NUVEC_ISA
