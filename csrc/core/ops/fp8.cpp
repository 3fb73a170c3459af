// to_fp8 rounds with integer arithmetic on the float's bits (normal values) and with a float
// addition (subnormal ones); from_fp8 takes from a table of the 256 decoded values.
#include "core/ops/fp8.h"

#include <cmath>
#include <cstring>

#include "core/errors.h"
#include "core/ops.h"

namespace nuvec {

namespace {

bool is_real_float(Dtype d) {
  return d == Dtype::float16 || d == Dtype::bfloat16 || d == Dtype::float32 || d == Dtype::float64;
}

// The value of an e4m3 code (NaN for 0x7F and 0xFF).
double decode(int code) {
  const double sign = code & 0x80 ? -1.0 : 1.0;
  const int e = (code >> 3) & 0xF, m = code & 7;
  if (e == 0xF && m == 7) return std::nan("");
  return sign * (e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1 + m / 8.0) * std::ldexp(1.0, e - 7));
}

uint32_t float32_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The bits of an e4m3 value in float16, where each is normal or zero.
uint16_t float16_bits(double v) {
  const uint32_t b = float32_bits(float(v));
  const uint16_t sign = uint16_t((b >> 16) & 0x8000);
  if ((b & 0x7FFFFFFF) == 0) return sign;
  return uint16_t(sign | ((((b >> 23) & 0xFF) - 127 + 15) << 10) | ((b >> 13) & 0x3FF));
}

// Each code's value in `dtype`, written as `Bits` (a type of the dtype's width), with the NaN bits
// MLX's from_fp8 gives (by sign): MLX decodes to float32 NaN 0x7FF00000 and narrows with its
// float16 conversion; its bfloat16 NaN is the canonical one.
template <class Bits> Array table(Dtype dtype, Bits (*of)(double), Bits nan_pos, Bits nan_neg) {
  Array t = Array::allocate({256}, dtype);
  auto* out = reinterpret_cast<Bits*>(t.data_bytes());
  for (int code = 0; code < 256; ++code) {
    const double v = decode(code);
    out[code] = std::isnan(v) ? (code & 0x80 ? nan_neg : nan_pos) : of(v);
  }
  return t;
}

Array decoded_table(Dtype dtype) {
  switch (dtype) {
    case Dtype::float16: return table<uint16_t>(dtype, float16_bits, 0x7D00, 0xFD00);
    case Dtype::bfloat16:
      return table<uint16_t>(dtype, [](double v) { return uint16_t(float32_bits(float(v)) >> 16); }, 0x7FC0, 0x7FC0);
    case Dtype::float32:
      return table<uint32_t>(dtype, [](double v) { return float32_bits(float(v)); }, 0x7FF00000u, 0xFFF00000u);
    case Dtype::float64:  // the values, NaN as Python's (MLX's float64 results are wrong, docs/io.md)
      return table<double>(dtype, [](double v) { return v; }, std::nan(""), std::nan(""));
    default: throw std::logic_error("from_fp8: not a real floating type");  // checked by from_fp8
  }
}

}  // namespace

Array from_fp8(const Array& x, Dtype dtype, Stream s) {
  if (x.dtype() != Dtype::uint8)
    throw OpError("from_fp8", std::string("the input must have type uint8, not ") + name_of(x.dtype()));
  if (!is_real_float(dtype))
    throw OpError("from_fp8", std::string("only real floating types are supported, not ") + name_of(dtype));
  return take(decoded_table(dtype), x, std::nullopt, s);
}

Array to_fp8(const Array& x, Stream s) {
  if (!is_real_float(x.dtype()))
    throw OpError("to_fp8", std::string("only real floating types are supported, not ") + name_of(x.dtype()));
  // The half types are exact in float32; the rounding works on float32 or float64 bits.
  const Array wide = x.dtype() == Dtype::float64 ? x : astype(x, Dtype::float32, s);
  const Dtype ft = wide.dtype();
  const bool dbl = ft == Dtype::float64;
  const Dtype ut = dbl ? Dtype::uint64 : Dtype::uint32;
  const int mant = dbl ? 52 : 23, bias = dbl ? 1023 : 127;
  auto U = [&](int64_t v) { return scalar_array(v, ut); };
  auto F = [&](double v) { return scalar_array(v, ft); };
  auto B = [&](BinaryOp op, const Array& a, const Array& b) { return binary(op, a, b, s); };

  const Array bits = view(wide, ut, s);
  const Array sign = B(BinaryOp::bitwise_and, B(BinaryOp::right_shift, bits, U(dbl ? 56 : 24)), U(0x80));
  Array mag = unary(UnaryOp::abs, wide, s);
  const Array big = B(BinaryOp::logical_or, unary(UnaryOp::isnan, mag, s), B(BinaryOp::greater_equal, mag, F(448.0)));
  mag = where(big, F(448.0), mag, s);
  // Normal e4m3 values: rebias the exponent and round the mantissa to 3 bits, ties to even.
  const Array mbits = view(mag, ut, s);
  const int drop = mant - 3;
  const Array odd = B(BinaryOp::bitwise_and, B(BinaryOp::right_shift, mbits, U(drop)), U(1));
  const int64_t rebias = (int64_t(bias - 7) << mant) - ((int64_t(1) << (drop - 1)) - 1);
  const Array normal =
      B(BinaryOp::right_shift, B(BinaryOp::add, B(BinaryOp::subtract, mbits, U(rebias)), odd), U(drop));
  // Subnormal ones (below 2**-6): adding 2**(mant - 9) leaves the rounded multiple of 2**-9 in the
  // low bits, rounded by the float addition itself.
  const Array magic = F(std::ldexp(1.0, mant - 9));
  const Array sub = B(BinaryOp::subtract, view(B(BinaryOp::add, mag, magic), ut, s), view(magic, ut, s));
  const Array code = where(B(BinaryOp::less, mag, F(std::ldexp(1.0, -6))), sub, normal, s);
  return B(BinaryOp::bitwise_or, astype(code, Dtype::uint8, s), astype(sign, Dtype::uint8, s));
}

}  // namespace nuvec
