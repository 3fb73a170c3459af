// The C++ type of each dtype's elements, and conversions between them.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace nuvec::cpu {

// bfloat16 storage: the high half of a float32, rounded to nearest even.
struct bf16 { uint16_t bits; };
using f16 = _Float16;
using c64 = std::complex<float>;

inline float bf16_to_float(bf16 v) {
  uint32_t u = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline bf16 float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{uint16_t((u >> 16) | 0x40)};  // quiet NaN
  return bf16{uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

template <Dtype D> struct ctype;
template <> struct ctype<Dtype::bool_> { using type = bool; };
template <> struct ctype<Dtype::uint8> { using type = uint8_t; };
template <> struct ctype<Dtype::uint16> { using type = uint16_t; };
template <> struct ctype<Dtype::uint32> { using type = uint32_t; };
template <> struct ctype<Dtype::uint64> { using type = uint64_t; };
template <> struct ctype<Dtype::int8> { using type = int8_t; };
template <> struct ctype<Dtype::int16> { using type = int16_t; };
template <> struct ctype<Dtype::int32> { using type = int32_t; };
template <> struct ctype<Dtype::int64> { using type = int64_t; };
template <> struct ctype<Dtype::float16> { using type = f16; };
template <> struct ctype<Dtype::float32> { using type = float; };
template <> struct ctype<Dtype::float64> { using type = double; };
template <> struct ctype<Dtype::bfloat16> { using type = bf16; };
template <> struct ctype<Dtype::complex64> { using type = c64; };
template <Dtype D> using ctype_t = typename ctype<D>::type;

template <class T> constexpr bool is_complex_v = std::is_same_v<T, c64>;
template <class T> constexpr bool is_float_v = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Calls f(std::integral_constant<Dtype, D>{}) for every dtype.
template <class F> void for_each_dtype(F&& f) {
  f(std::integral_constant<Dtype, Dtype::bool_>{});
  f(std::integral_constant<Dtype, Dtype::uint8>{});
  f(std::integral_constant<Dtype, Dtype::uint16>{});
  f(std::integral_constant<Dtype, Dtype::uint32>{});
  f(std::integral_constant<Dtype, Dtype::uint64>{});
  f(std::integral_constant<Dtype, Dtype::int8>{});
  f(std::integral_constant<Dtype, Dtype::int16>{});
  f(std::integral_constant<Dtype, Dtype::int32>{});
  f(std::integral_constant<Dtype, Dtype::int64>{});
  f(std::integral_constant<Dtype, Dtype::float16>{});
  f(std::integral_constant<Dtype, Dtype::float32>{});
  f(std::integral_constant<Dtype, Dtype::float64>{});
  f(std::integral_constant<Dtype, Dtype::bfloat16>{});
  f(std::integral_constant<Dtype, Dtype::complex64>{});
}

// Calls f for the dtypes kernels compute in (everything but the half types).
template <class F> void for_each_compute_dtype(F&& f) {
  for_each_dtype([&](auto d) {
    if constexpr (d.value != Dtype::float16 && d.value != Dtype::bfloat16) f(d);
  });
}

// A float to a 32- or 64-bit unsigned integer with the bits of x86-64's vector code, which MLX's
// array conversions run: values from 2^(n-1) up are shifted down before the signed truncation and
// the top bit is put back; the signed truncation gives its "integer indefinite" (the lowest value)
// out of range or for NaN. C++ leaves those conversions undefined, and AVX-512's unsigned
// instructions (and scalar code, which MLX runs for 0-d arrays: docs/compat.md) give other bits;
// this keeps nuvec's the same on every instruction set and path. Elsewhere (Arm) the native
// conversion is MLX's too.
template <class U, class F> inline U float_to_unsigned(F x) {
#if defined(__x86_64__)
  constexpr bool wide = sizeof(U) == 8;
  using S = std::make_signed_t<U>;
  auto truncate = [](F v) -> S {
    if constexpr (sizeof(F) == 8)
      return wide ? S(_mm_cvttsd_si64(_mm_set_sd(v))) : S(_mm_cvttsd_si32(_mm_set_sd(v)));
    else
      return wide ? S(_mm_cvttss_si64(_mm_set_ss(v))) : S(_mm_cvttss_si32(_mm_set_ss(v)));
  };
  constexpr F half = F(wide ? 9223372036854775808.0 : 2147483648.0);
  if (x >= half) return U(truncate(x - half)) ^ (U(1) << (sizeof(U) * 8 - 1));
  return U(truncate(x));
#else
  return static_cast<U>(x);
#endif
}

// Element conversion with NumPy's meaning (complex -> real keeps the real part).
template <class To, class From> inline To convert(From v) {
  if constexpr (std::is_same_v<From, bf16>) {
    return convert<To>(bf16_to_float(v));
  } else if constexpr (std::is_same_v<To, bf16>) {
    return float_to_bf16(convert<float>(v));
  } else if constexpr (std::is_same_v<From, c64>) {
    if constexpr (std::is_same_v<To, c64>)
      return v;
    else if constexpr (std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, c64>) {
    return c64(convert<float>(v), 0.0f);
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_unsigned_v<To> && sizeof(To) >= 4 && std::is_same_v<From, f16>) {
    return float_to_unsigned<To>(float(v));
  } else if constexpr (std::is_unsigned_v<To> && sizeof(To) >= 4 && std::is_floating_point_v<From>) {
    return float_to_unsigned<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Element i of a float32, float16 or bfloat16 buffer of dtype d, as a float (the kernels that
// compute half types in float32 read and write through these).
inline float load_float(const void* p, Dtype d, int64_t i) {
  if (d == Dtype::float16) return float(static_cast<const f16*>(p)[i]);
  if (d == Dtype::bfloat16) return bf16_to_float(static_cast<const bf16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}
inline void store_float(void* p, Dtype d, int64_t i, float v) {
  if (d == Dtype::float16)
    static_cast<f16*>(p)[i] = f16(v);
  else if (d == Dtype::bfloat16)
    static_cast<bf16*>(p)[i] = float_to_bf16(v);
  else
    static_cast<float*>(p)[i] = v;
}

}  // namespace nuvec::cpu
