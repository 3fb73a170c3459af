// The row normalizations' loops, built per instruction set (backend/cpu/fast_norms.h). Sums run
// in 16 lanes whatever the vector width, so every build gives the same bits.
#include "backend/cpu/fast_norms.h"

#include <cmath>

#include "backend/cpu/simd/expsin.h"
#include "backend/cpu/simd/fast_norms_store.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

constexpr int kSumLanes = 16;
constexpr int kSumVecs = kSumLanes / kLanesF;

// sum_j f(x[j]) in 16 lanes: lane j % 16 adds element j in order (chunk by chunk through add,
// the tail through finish), then the lanes combine as a fixed tree.
struct LaneSum {
  VecF acc[kSumVecs];
  LaneSum() {
    for (auto& a : acc) a = splat(0.0f);
  }
  template <class F> void add(const float* p, F f) {  // elements p[0..16)
    for (int k = 0; k < kSumVecs; ++k) acc[k] += f(load(p + k * kLanesF));
  }
  template <class F> float finish(const float* x, int64_t j, int64_t d, F f) {  // elements j..d, j + 16 > d
    if (j < d) {                                                                // the padding's terms dropped
      float t[kSumLanes] = {};
      std::memcpy(t, x + j, size_t(d - j) * 4);
      for (int k = 0; k < kSumVecs; ++k) store(t + k * kLanesF, f(load(t + k * kLanesF)));
      for (int64_t l = d - j; l < kSumLanes; ++l) t[l] = 0.0f;
      for (int k = 0; k < kSumVecs; ++k) acc[k] += load(t + k * kLanesF);
    }
    // Lane l + lane l + 8, then + 4, + 2, + 1: across the vectors while there are several, then
    // within the one left.
    for (int n = kSumVecs; n > 1; n /= 2)
      for (int k = 0; k < n / 2; ++k) acc[k] += acc[k + n / 2];
    return halving_sum(acc[0]);
  }
};

template <class F> float row_sum(const float* x, int64_t d, F f) {
  LaneSum s;
  int64_t j = 0;
  for (; j + kSumLanes <= d; j += kSumLanes) s.add(x + j, f);
  return s.finish(x, j, d, f);
}

// y[j] = ((x[j] - m) * r) * w[j] + b[j], each factor present or not; the same ops per lane and
// in the scalar tail. `stream`: past the caches where y is aligned.
template <bool kCentred, bool kWeighted, bool kBiased>
void scale_row(const float* x, const float* w, const float* b, float* y, int64_t d, float m, float r, bool stream) {
  VecF vm = splat(m), vr = splat(r);
  stream = stream && vector_aligned(y);
  int64_t j = 0;
  for (; j + kLanesF <= d; j += kLanesF) {
    VecF v = load(x + j);
    if (kCentred) v = v - vm;
    v = v * vr;
    if (kWeighted) v = v * load(w + j);
    if (kBiased) v = v + load(b + j);
    stream ? store_stream(y + j, v) : store(y + j, v);
  }
  for (; j < d; ++j) {
    float v = x[j];
    if (kCentred) v = v - m;
    v = v * r;
    if (kWeighted) v = v * w[j];
    if (kBiased) v = v + b[j];
    y[j] = v;
  }
}

float inv_root(float sum, int64_t d, float eps) { return 1.0f / std::sqrt(sum / float(d) + eps); }

// The largest element (NaNs skipped; exact in any order).
float row_max(const float* x, int64_t d) {
  VecF acc = splat(-INFINITY);
  int64_t j = 0;
  for (; j + kLanesF <= d; j += kLanesF) {
    VecF v = load(x + j);
    acc = v > acc ? v : acc;
  }
  float m = -INFINITY;
  for (int l = 0; l < kLanesF; ++l) m = acc[l] > m ? acc[l] : m;
  for (; j < d; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

}  // namespace

void rms_row(const float* x, const float* w, float* y, int64_t d, float eps, bool stream) {
  float r = inv_root(row_sum(x, d, [](VecF v) { return v * v; }), d, eps);
  w ? scale_row<false, true, false>(x, w, nullptr, y, d, 0.0f, r, stream)
    : scale_row<false, false, false>(x, nullptr, nullptr, y, d, 0.0f, r, stream);
}

namespace {

// A row's mean (layer norm) and 1 / sqrt(var + eps) from its first sum (of x for layer norm, of
// x^2 for RMS norm), as rms_row and layer_row compute them.
template <bool kLayer> void row_stats(const float* x, int64_t d, float first, float eps, float& m, float& inv) {
  if (!kLayer) {
    m = 0.0f, inv = inv_root(first, d, eps);
    return;
  }
  m = first / float(d);
  VecF vm = splat(m);
  inv = inv_root(row_sum(x, d, [vm](VecF v) { return (v - vm) * (v - vm); }), d, eps);
}

// Row r's output pass runs beside row r + 1's first sum, so memory sees one stream of reads and
// writes (as a copy does) instead of a read burst then a write burst per row. The sums and the
// outputs are rms_row's and layer_row's, element by element.
template <bool kLayer, bool kWeighted, bool kBiased> void pipelined(const float* x, const float* w, const float* b,
                                                                    float* y, int64_t rows, int64_t d, float eps,
                                                                    bool stream) {
  auto first = [](VecF v) { return kLayer ? v : v * v; };
  float m, inv;
  row_stats<kLayer>(x, d, row_sum(x, d, first), eps, m, inv);
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * d, *xn = xr + d;
    float* yr = y + r * d;
    int64_t j = 0;
    float next_sum = 0.0f;
    if (r + 1 < rows) {
      LaneSum next;
      VecF vm = splat(m), vr = splat(inv);
      bool nt = stream && vector_aligned(yr);
      for (; j + kSumLanes <= d; j += kSumLanes) {
        next.add(xn + j, first);
        for (int k = 0; k < kSumVecs; ++k) {
          int64_t i = j + k * kLanesF;
          VecF v = load(xr + i);
          if (kLayer) v = v - vm;
          v = v * vr;
          if (kWeighted) v = v * load(w + i);
          if (kBiased) v = v + load(b + i);
          nt ? store_stream(yr + i, v) : store(yr + i, v);
        }
      }
      next_sum = next.finish(xn, j, d, first);
    }
    scale_row<kLayer, kWeighted, kBiased>(xr + j, kWeighted ? w + j : nullptr, kBiased ? b + j : nullptr, yr + j, d - j,
                                          m, inv, stream);
    if (r + 1 < rows) row_stats<kLayer>(xn, d, next_sum, eps, m, inv);
  }
}

}  // namespace

void norm_rows(bool layer, const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t d, float eps,
               bool stream) {
  if (!layer)
    w ? pipelined<false, true, false>(x, w, b, y, rows, d, eps, stream)
      : pipelined<false, false, false>(x, w, b, y, rows, d, eps, stream);
  else if (w && b)
    pipelined<true, true, true>(x, w, b, y, rows, d, eps, stream);
  else if (w)
    pipelined<true, true, false>(x, w, b, y, rows, d, eps, stream);
  else if (b)
    pipelined<true, false, true>(x, w, b, y, rows, d, eps, stream);
  else
    pipelined<true, false, false>(x, w, b, y, rows, d, eps, stream);
}

void layer_row(const float* x, const float* w, const float* b, float* y, int64_t d, float eps, bool stream) {
  float m = row_sum(x, d, [](VecF v) { return v; }) / float(d);
  VecF vm = splat(m);
  float r = inv_root(row_sum(x, d, [vm](VecF v) { return (v - vm) * (v - vm); }), d, eps);
  if (w && b)
    scale_row<true, true, true>(x, w, b, y, d, m, r, stream);
  else if (w)
    scale_row<true, true, false>(x, w, nullptr, y, d, m, r, stream);
  else if (b)
    scale_row<true, false, true>(x, nullptr, b, y, d, m, r, stream);
  else
    scale_row<true, false, false>(x, nullptr, nullptr, y, d, m, r, stream);
}

float xent_row(const float* x, int64_t d, int64_t target) {
  if (target < 0 || target >= d) return NAN;
  float m = row_max(x, d);
  if (!std::isfinite(m)) m = 0.0f;  // all -inf (or an inf): no shift
  VecF vm = splat(m);
  float s = row_sum(x, d, [vm](VecF v) { return expf_mvec(v - vm); });
  return (m + std::log(s)) - x[target];
}

}  // namespace nuvec::cpu::NUVEC_ISA
