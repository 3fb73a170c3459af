// The block layouts and formulas are ggml's (dequantize_row_*); the float operations keep its
// order so the values are its values, bit for bit.
#include "io/gguf_dequant.h"

#include <cstring>

namespace nuvec::io {
namespace {

enum : uint32_t { q5_0 = 6, q5_1 = 7, q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15 };
constexpr int kKBlock = 256;  // elements per K-quant block (ggml's QK_K)

float half(const uint8_t* p) {
  _Float16 h;
  std::memcpy(&h, p, 2);
  return float(h);
}

// Sub-block j's 6-bit scale and minimum, packed in 12 bytes (ggml's get_scale_min_k4).
void scale_min(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63, m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void q2k(const uint8_t* b, float* y) {  // scales[16], qs[64], d, dmin
  const uint8_t *sc = b, *q = b + 16;
  float d = half(b + 80), dmin = half(b + 82);
  for (int n = 0, is = 0; n < kKBlock; n += 128, q += 32)
    for (int shift = 0; shift < 8; shift += 2)
      for (int half16 = 0; half16 < 2; ++half16, ++is) {
        float dl = d * float(sc[is] & 0xF), ml = dmin * float(sc[is] >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half16] >> shift) & 3) - ml;
      }
}

void q3k(const uint8_t* b, float* y) {  // hmask[32], qs[64], scales[12], d
  const uint8_t *hm = b, *q = b + 32;
  float d = half(b + 108);
  uint32_t aux[4];
  std::memcpy(aux, b + 96, 12);
  uint32_t t = aux[2];
  constexpr uint32_t m2 = 0x03030303, m4 = 0x0f0f0f0f;
  aux[2] = ((aux[0] >> 4) & m4) | (((t >> 4) & m2) << 4);
  aux[3] = ((aux[1] >> 4) & m4) | (((t >> 6) & m2) << 4);
  aux[0] = (aux[0] & m4) | ((t & m2) << 4);
  aux[1] = (aux[1] & m4) | (((t >> 2) & m2) << 4);
  int8_t scales[16];
  std::memcpy(scales, aux, 16);
  uint8_t bit = 1;
  for (int n = 0, is = 0; n < kKBlock; n += 128, q += 32)
    for (int shift = 0; shift < 8; shift += 2, bit <<= 1)
      for (int half16 = 0; half16 < 2; ++half16, ++is) {
        float dl = d * float(scales[is] - 32);
        for (int l = 16 * half16; l < 16 * half16 + 16; ++l)
          *y++ = dl * float(((q[l] >> shift) & 3) - ((hm[l] & bit) ? 0 : 4));
      }
}

// Q4_K and Q5_K: d, dmin, scales[12], (Q5_K: qh[32]), qs[128].
void q45k(const uint8_t* b, float* y, bool five) {
  float d = half(b), dmin = half(b + 2);
  const uint8_t *scales = b + 4, *qh = b + 16, *q = b + (five ? 48 : 16);
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0, is = 0; j < kKBlock; j += 64, q += 32, is += 2, u1 <<= 2, u2 <<= 2) {
    int sc, m;
    scale_min(is, scales, sc, m);
    float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min(is + 1, scales, sc, m);
    float d2 = d * float(sc), m2 = dmin * float(m);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float((q[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float((q[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
  }
}

void q6k(const uint8_t* b, float* y) {  // ql[128], qh[64], scales[16] (int8), d
  const uint8_t *ql = b, *qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  float d = half(b + 208);
  for (int n = 0; n < kKBlock; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
    for (int l = 0; l < 32; ++l) {
      int is = l / 16;
      int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
}

// Q5_0 (d, qh[4], qs[16]: value d*(q - 16)) and Q5_1 (d, m, qh[4], qs[16]: value d*q + m).
void q5(const uint8_t* b, float* y, bool one) {
  float d = half(b), m = one ? half(b + 2) : 0.0f;
  const uint8_t* qs = b + (one ? 8 : 6);
  uint32_t qh;
  std::memcpy(&qh, b + (one ? 4 : 2), 4);
  int offset = one ? 0 : 16;
  for (int j = 0; j < 16; ++j) {
    int x0 = ((qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10)) - offset;
    int x1 = ((qs[j] >> 4) | ((qh >> (j + 12)) & 0x10)) - offset;
    y[j] = one ? float(x0) * d + m : float(x0) * d;
    y[j + 16] = one ? float(x1) * d + m : float(x1) * d;
  }
}

void q8k(const uint8_t* b, float* y) {  // d (float32), qs[256] (int8), bsums[16]
  float d;
  std::memcpy(&d, b, 4);
  for (int l = 0; l < kKBlock; ++l) y[l] = d * float(int8_t(b[4 + l]));
}

}  // namespace

DequantizedType dequantized_type(uint32_t type) {
  switch (type) {
    case q5_0: return {32, 22};
    case q5_1: return {32, 24};
    case q2_k: return {kKBlock, 84};
    case q3_k: return {kKBlock, 110};
    case q4_k: return {kKBlock, 144};
    case q5_k: return {kKBlock, 176};
    case q6_k: return {kKBlock, 210};
    case q8_k: return {kKBlock, 292};
    default: return {};
  }
}

void dequantize(uint32_t type, const uint8_t* blocks, int64_t n_blocks, _Float16* out) {
  auto [block, bytes] = dequantized_type(type);
  float y[kKBlock];
  for (int64_t i = 0; i < n_blocks; ++i, blocks += bytes, out += block) {
    switch (type) {
      case q5_0: q5(blocks, y, false); break;
      case q5_1: q5(blocks, y, true); break;
      case q2_k: q2k(blocks, y); break;
      case q3_k: q3k(blocks, y); break;
      case q4_k: q45k(blocks, y, false); break;
      case q5_k: q45k(blocks, y, true); break;
      case q6_k: q6k(blocks, y); break;
      case q8_k: q8k(blocks, y); break;
    }
    for (int l = 0; l < block; ++l) out[l] = _Float16(y[l]);
  }
}

}  // namespace nuvec::io
