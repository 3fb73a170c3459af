// The row normalizations' loops, built per instruction set (backend/cpu/fast_norms.h). Sums run
// in 16 lanes whatever the vector width, so every build gives the same bits.
#include "backend/cpu/fast_norms.h"

#include <cmath>

#include "backend/cpu/simd/fast_norms_store.h"

namespace nuvec::cpu::NUVEC_ISA {

namespace {

constexpr int kSumLanes = 16;
constexpr int kSumVecs = kSumLanes / kLanesF;

// sum_j f(x[j]): lane j % 16 adds element j in order, then the lanes combine as a fixed tree.
template <class F> float row_sum(const float* x, int64_t d, F f) {
  VecF acc[kSumVecs];
  for (auto& a : acc) a = splat(0.0f);
  int64_t j = 0;
  for (; j + kSumLanes <= d; j += kSumLanes)
    for (int k = 0; k < kSumVecs; ++k) acc[k] += f(load(x + j + k * kLanesF));
  if (j < d) {  // the tail through the same lanes, the padding's terms dropped
    float t[kSumLanes] = {};
    std::memcpy(t, x + j, size_t(d - j) * 4);
    for (int k = 0; k < kSumVecs; ++k) store(t + k * kLanesF, f(load(t + k * kLanesF)));
    for (int64_t l = d - j; l < kSumLanes; ++l) t[l] = 0.0f;
    for (int k = 0; k < kSumVecs; ++k) acc[k] += load(t + k * kLanesF);
  }
  float lanes[kSumLanes];
  for (int k = 0; k < kSumVecs; ++k) store(lanes + k * kLanesF, acc[k]);
  for (int w = kSumLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lanes[l] += lanes[l + w];
  return lanes[0];
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

inline VecF vexp(VecF v) {
#ifdef NUVEC_HAS_VECTOR_MATH
  return NUVEC_MVEC(exp)(v);
#else
  for (int l = 0; l < kLanesF; ++l) v[l] = std::exp(v[l]);
  return v;
#endif
}

}  // namespace

void rms_row(const float* x, const float* w, float* y, int64_t d, float eps, bool stream) {
  float r = inv_root(row_sum(x, d, [](VecF v) { return v * v; }), d, eps);
  w ? scale_row<false, true, false>(x, w, nullptr, y, d, 0.0f, r, stream)
    : scale_row<false, false, false>(x, nullptr, nullptr, y, d, 0.0f, r, stream);
}

void layer_row(const float* x, const float* w, const float* b, float* y, int64_t d, float eps, bool stream) {
  float m = row_sum(x, d, [](VecF v) { return v; }) / float(d);
  VecF vm = splat(m);
  float r = inv_root(row_sum(x, d, [vm](VecF v) { return (v - vm) * (v - vm); }), d, eps);
  if (w && b) scale_row<true, true, true>(x, w, b, y, d, m, r, stream);
  else if (w) scale_row<true, true, false>(x, w, nullptr, y, d, m, r, stream);
  else if (b) scale_row<true, false, true>(x, nullptr, b, y, d, m, r, stream);
  else scale_row<true, false, false>(x, nullptr, nullptr, y, d, m, r, stream);
}

float xent_row(const float* x, int64_t d, int64_t target) {
  if (target < 0 || target >= d) return NAN;
  float m = row_max(x, d);
  if (!std::isfinite(m)) m = 0.0f;  // all -inf (or an inf): no shift
  VecF vm = splat(m);
  float s = row_sum(x, d, [vm](VecF v) { return vexp(v - vm); });
  return (m + std::log(s)) - x[target];
}

}  // namespace nuvec::cpu::NUVEC_ISA
