// The CPU kernels of quantize and dequantize in MLX 0.32's floating-point modes (mxfp4, mxfp8,
// nvfp4), MLX's arithmetic step by step: per group, t = max|w| / (6 or 448) rounded to w's dtype
// T; the scale is 2^ceil(log2 t) as an e8m0 byte (mx modes; 1 when t is 0) or t as an e4m3 byte
// (nvfp4); each value w / scale, rounded to T (0 when the scale is 0), becomes an e2m1 code (round
// to nearest, ties toward zero; no negative zero) or an e4m3 byte. dequantize multiplies the
// code's value by the scale in the output dtype. Groups are independent.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/ctypes.h"
#include "backend/cpu/quantized.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kGrain = 1 << 14;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// MLX's float -> e4m3 byte (saturating at 448; NaN and infinities saturate too, keeping the sign).
uint8_t to_e4m3(float f) {
  const uint32_t fp8_max = uint32_t(1087) << 20, denorm_mask = uint32_t(141) << 23;
  uint32_t u = bits_of(f), sign = u & 0x80000000u;
  u ^= sign;
  uint8_t r;
  if (u >= fp8_max) {
    r = 0x7E;
  } else if (u < (uint32_t(121) << 23)) {
    r = uint8_t(bits_of(float_of(u) + float_of(denorm_mask)) - denorm_mask);
  } else {
    uint32_t odd = (u >> 20) & 1;
    u += (uint32_t(7 - 127) << 23) + 0x7FFFF + odd;
    r = uint8_t(u >> 20);
    if (r == 0x7F) r = 0x7E;  // [464, 480) rounds to 480, which is NaN's code: MLX saturates
  }
  return uint8_t(r | (sign >> 24));
}

float from_e4m3(uint8_t b) {
  int e = (b >> 3) & 0xF, m = b & 7;
  float v = (b & 0x7F) == 0x7F ? NAN : e == 0 ? std::ldexp(float(m), -9) : std::ldexp(1.0f + float(m) / 8, e - 7);
  return b & 0x80 ? -v : v;
}

constexpr float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

uint8_t to_e2m1(float x) {
  float a = std::abs(x);
  uint8_t c = a > 5.0f ? 7 : a > 3.5f ? 6 : a > 2.5f ? 5 : a > 1.75f ? 4 : a > 1.25f ? 3 : a > 0.75f ? 2 : a > 0.25f ? 1 : 0;
  return uint8_t(c | (c && std::signbit(x) ? 8 : 0));
}

float e2m1_value(uint8_t c) { return c & 8 ? -kE2m1[c & 7] : kE2m1[c & 7]; }

// x rounded to T's precision (T the element type), as a float.
template <class T> float round_to(float x) { return convert<float>(convert<T>(x)); }

template <class T> void quantize_rows(QuantSpec q, const T* w, int64_t groups, uint8_t* codes, uint8_t* scales) {
  const float maxval = q.mode == QuantMode::mxfp8 ? 448.0f : 6.0f;
  const int g = q.group_size, bytes = g * q.bits / 8;
  parallel_for(groups, std::max<int64_t>(1, kGrain / g), [&](int64_t g0, int64_t g1) {
    for (int64_t i = g0; i < g1; ++i) {
      const T* v = w + i * g;
      float amax = 0.0f;
      for (int j = 0; j < g; ++j) amax = std::max(amax, std::abs(convert<float>(v[j])));
      float t = round_to<T>(amax / maxval), scale;
      if (q.mode == QuantMode::nvfp4) {
        scales[i] = to_e4m3(t);
        scale = from_e4m3(scales[i]);
      } else {
        int e = t == 0.0f ? 0 : int(std::clamp(std::ceil(std::log2(t)), -127.0f, 127.0f));
        scales[i] = uint8_t(e + 127);
        scale = std::ldexp(1.0f, e);
      }
      scale = round_to<T>(scale);
      uint8_t* out = codes + i * bytes;
      for (int j = 0; j < g; ++j) {
        float x = scale == 0.0f ? 0.0f : round_to<T>(convert<float>(v[j]) / scale);
        if (q.bits == 8)
          out[j] = to_e4m3(x);
        else
          out[j / 2] = uint8_t(j % 2 ? out[j / 2] | (to_e2m1(x) << 4) : to_e2m1(x));
      }
    }
  });
}

template <class O> void dequantize_rows(QuantSpec q, const uint8_t* codes, const uint8_t* scales, int64_t groups, O* out) {
  const int g = q.group_size, bytes = g * q.bits / 8;
  parallel_for(groups, std::max<int64_t>(1, kGrain / g), [&](int64_t g0, int64_t g1) {
    for (int64_t i = g0; i < g1; ++i) {
      // In the output dtype, as MLX multiplies.
      float scale = round_to<O>(q.mode == QuantMode::nvfp4 ? from_e4m3(scales[i]) : std::ldexp(1.0f, int(scales[i]) - 127));
      const uint8_t* c = codes + i * bytes;
      for (int j = 0; j < g; ++j) {
        float v = q.bits == 8 ? from_e4m3(c[j]) : e2m1_value(uint8_t(j % 2 ? c[j / 2] >> 4 : c[j / 2] & 15));
        out[i * g + j] = convert<O>(v * scale);
      }
    }
  });
}

}  // namespace

void quantize_fp(QuantSpec q, const Array& w, Array& codes, Array& scales) {
  int64_t groups = w.size() / q.group_size;
  auto* c = reinterpret_cast<uint8_t*>(codes.data_bytes());
  auto* s = scales.data<uint8_t>();
  switch (w.dtype()) {
    case Dtype::float16: return quantize_rows(q, w.data<f16>(), groups, c, s);
    case Dtype::bfloat16: return quantize_rows(q, w.data<bf16>(), groups, c, s);
    case Dtype::float64: return quantize_rows(q, w.data<double>(), groups, c, s);
    default: return quantize_rows(q, w.data<float>(), groups, c, s);
  }
}

void dequantize_fp(QuantSpec q, const Array& codes, const Array& scales, Array& out) {
  int64_t groups = out.size() / q.group_size;
  auto* c = reinterpret_cast<const uint8_t*>(codes.data_bytes());
  auto* s = scales.data<uint8_t>();
  switch (out.dtype()) {
    case Dtype::float16: return dequantize_rows(q, c, s, groups, out.data<f16>());
    case Dtype::bfloat16: return dequantize_rows(q, c, s, groups, out.data<bf16>());
    case Dtype::float64: return dequantize_rows(q, c, s, groups, out.data<double>());
    default: return dequantize_rows(q, c, s, groups, out.data<float>());
  }
}

}  // namespace nuvec::cpu
