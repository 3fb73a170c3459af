// The CPU kernels of quantize and dequantize (affine mode): MLX's float32 arithmetic, group by
// group, so the packed words, scales and biases are MLX's bit for bit. Groups are independent, so
// any split over threads gives the same bits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/sort.h"
#include "core/primitives/quantized.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kRowGrain = 1 << 14;  // elements per piece below which one thread runs it

// Appends `bits`-bit codes to a little-endian stream of uint32 words.
struct BitWriter {
  uint32_t* out;
  uint64_t acc = 0;
  int fill = 0;
  void put(uint32_t code, int bits) {
    acc |= uint64_t(code) << fill;
    fill += bits;
    if (fill >= 32) *out++ = uint32_t(acc), acc >>= 32, fill -= 32;
  }
};

// One group of MLX's affine rule (COMPAT.md "Affine quantization"): min and max skip NaN as
// std::max/std::min do; 1 bit keeps the minimum as the bias.
template <class T> void quantize_group(const T* w, int g, int bits, BitWriter& out, T* scale_out, T* bias_out) {
  float n_bins = float((1 << bits) - 1), eps = 1e-7f;
  float w_min = INFINITY, w_max = -INFINITY;
  for (int j = 0; j < g; ++j) {
    float v = convert<float>(w[j]);
    w_max = std::max(w_max, v), w_min = std::min(w_min, v);
  }
  float scale, bias;
  if (bits == 1) {
    scale = std::max(w_max - w_min, eps), bias = w_min;
  } else {
    bool mask = std::abs(w_min) > std::abs(w_max);
    scale = std::max((w_max - w_min) / n_bins, eps);
    scale = mask ? scale : -scale;
    float edge = mask ? w_min : w_max;
    float q0 = std::rint(edge / scale);
    bias = 0;
    if (q0 != 0) scale = edge / q0, bias = edge;
  }
  for (int j = 0; j < g; ++j) {
    float q = std::rint((convert<float>(w[j]) - bias) / scale);
    q = std::min(std::max(q, 0.0f), n_bins);
    out.put(q == q ? uint32_t(q) : 0u, bits);  // NaN (undefined in MLX) packs as 0
  }
  *scale_out = convert<T>(scale);
  *bias_out = convert<T>(bias);
}

template <class T> void quantize_rows(const Quantize& p, const Array& w, std::vector<Array>& out) {
  const QuantSpec& q = p.spec();
  int64_t k = w.shape(-1), rows = w.size() / std::max<int64_t>(k, 1), gpr = k / q.group_size;
  const T* src = w.data<T>();
  uint32_t* words = out[0].data<uint32_t>();
  T *scales = out[1].data<T>(), *biases = out[2].data<T>();
  parallel_for(rows, std::max<int64_t>(1, kRowGrain / std::max<int64_t>(k, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      BitWriter bw{words + r * q.words(k)};
      for (int64_t g = 0; g < gpr; ++g)
        quantize_group(src + r * k + g * q.group_size, q.group_size, q.bits, bw, scales + r * gpr + g,
                       biases + r * gpr + g);
    }
  });
}

void eval_quantize(const Quantize& p, const std::vector<Array>& in, std::vector<Array>& out) {
  for (Array& o : out) o.allocate_contiguous();
  if (in[0].size() == 0) return;
  Array w = row_contiguous(in[0]);
  if (p.spec().mode != QuantMode::affine) return quantize_fp(p.spec(), w, out[0], out[1]);
  switch (w.dtype()) {
    case Dtype::float16: return quantize_rows<f16>(p, w, out);
    case Dtype::bfloat16: return quantize_rows<bf16>(p, w, out);
    case Dtype::float32: return quantize_rows<float>(p, w, out);
    case Dtype::float64: return quantize_rows<double>(p, w, out);
    default: throw OpError("quantize", "unsupported dtype");
  }
}

// x rounded to dtype d (float32 or a half type), as MLX rounds each op of its chain.
inline float round_as(Dtype d, float x) {
  if (d == Dtype::float16) return float(f16(x));
  if (d == Dtype::bfloat16) return bf16_to_float(float_to_bf16(x));
  return x;
}

double as_double(const Array& a, int64_t i) {
  switch (a.dtype()) {
    case Dtype::float16: return double(a.data<f16>()[i]);
    case Dtype::bfloat16: return bf16_to_float(a.data<bf16>()[i]);
    case Dtype::float32: return a.data<float>()[i];
    default: return a.data<double>()[i];
  }
}

// MLX's chain: q * scale in the scales' dtype S, + bias in promote(S, B), then the output dtype.
template <class O> void dequantize_rows(const Dequantize& p, const Array& w, const Array& s, const Array& b, Array& out) {
  const QuantSpec& q = p.spec();
  int64_t k = out.shape(-1), rows = out.size() / std::max<int64_t>(k, 1), gpr = k / q.group_size;
  Dtype sd = s.dtype(), pd = promote(sd, b.dtype());
  const uint32_t* words = w.data<uint32_t>();
  O* dst = out.data<O>();
  uint32_t mask = uint32_t((uint64_t(1) << q.bits) - 1);
  parallel_for(rows, std::max<int64_t>(1, kRowGrain / std::max<int64_t>(k, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const uint32_t* row = words + r * q.words(k);
      for (int64_t g = 0; g < gpr; ++g) {
        double sc = as_double(s, r * gpr + g), bi = as_double(b, r * gpr + g);
        for (int64_t j = g * q.group_size; j < (g + 1) * q.group_size; ++j) {
          int64_t bit = j * q.bits;
          uint64_t two = row[bit / 32];
          if (bit % 32 + q.bits > 32) two |= uint64_t(row[bit / 32 + 1]) << 32;
          double code = double(uint32_t(two >> (bit % 32)) & mask);
          double v = sd == Dtype::float64 ? code * sc : round_as(sd, float(code) * float(sc));
          v = pd == Dtype::float64 ? v + bi : round_as(pd, float(v) + float(bi));
          dst[r * k + j] = convert<O>(v);
        }
      }
    }
  });
}

void eval_dequantize(const Dequantize& p, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  if (p.spec().mode != QuantMode::affine) return dequantize_fp(p.spec(), row_contiguous(in[0]), row_contiguous(in[1]), out[0]);
  Array w = row_contiguous(in[0]), s = row_contiguous(in[1]), b = row_contiguous(in[2]);
  switch (out[0].dtype()) {
    case Dtype::float16: return dequantize_rows<f16>(p, w, s, b, out[0]);
    case Dtype::bfloat16: return dequantize_rows<bf16>(p, w, s, b, out[0]);
    case Dtype::float32: return dequantize_rows<float>(p, w, s, b, out[0]);
    case Dtype::float64: return dequantize_rows<double>(p, w, s, b, out[0]);
    default: throw OpError("dequantize", "unsupported dtype");
  }
}

}  // namespace

void register_quantized_kernels(Backend& b) {
  b.add<Quantize, eval_quantize>();
  b.add<Dequantize, eval_dequantize>();
}

}  // namespace nuvec::cpu
