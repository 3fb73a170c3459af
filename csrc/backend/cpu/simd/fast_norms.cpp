// The row normalizations' loops, built per instruction set (backend/cpu/fast_norms.h). Sums run
// in 16 lanes whatever the vector width, so every build gives the same bits.
#include "backend/cpu/fast_norms.h"

#include <cmath>

#include "backend/cpu/simd/simd.h"

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
// in the scalar tail.
template <bool kCentred, bool kWeighted, bool kBiased>
void scale_row(const float* x, const float* w, const float* b, float* y, int64_t d, float m, float r) {
  VecF vm = splat(m), vr = splat(r);
  int64_t j = 0;
  for (; j + kLanesF <= d; j += kLanesF) {
    VecF v = load(x + j);
    if (kCentred) v = v - vm;
    v = v * vr;
    if (kWeighted) v = v * load(w + j);
    if (kBiased) v = v + load(b + j);
    store(y + j, v);
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

}  // namespace

void rms_row(const float* x, const float* w, float* y, int64_t d, float eps) {
  float r = inv_root(row_sum(x, d, [](VecF v) { return v * v; }), d, eps);
  w ? scale_row<false, true, false>(x, w, nullptr, y, d, 0.0f, r)
    : scale_row<false, false, false>(x, nullptr, nullptr, y, d, 0.0f, r);
}

void layer_row(const float* x, const float* w, const float* b, float* y, int64_t d, float eps) {
  float m = row_sum(x, d, [](VecF v) { return v; }) / float(d);
  VecF vm = splat(m);
  float r = inv_root(row_sum(x, d, [vm](VecF v) { return (v - vm) * (v - vm); }), d, eps);
  if (w && b) scale_row<true, true, true>(x, w, b, y, d, m, r);
  else if (w) scale_row<true, true, false>(x, w, nullptr, y, d, m, r);
  else if (b) scale_row<true, false, true>(x, nullptr, b, y, d, m, r);
  else scale_row<true, false, false>(x, nullptr, nullptr, y, d, m, r);
}

}  // namespace nuvec::cpu::NUVEC_ISA
