// The device type of each dtype's elements, and conversions between them with the CPU backend's
// meaning (backend/cpu/ctypes.h), so a GPU result has the CPU's bits. Half types compute in float32.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cuda/std/complex>
#include <type_traits>

#include "core/dtype.h"

namespace nuvec::cuda {

using f16 = __half;
using bf16 = __nv_bfloat16;
using c64 = ::cuda::std::complex<float>;

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
template <class T> constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T> constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Calls f(std::integral_constant<Dtype, D>{}) for the D equal to d (host or device: f decides).
#pragma nv_exec_check_disable
template <class F> __host__ __device__ inline decltype(auto) visit_dtype(Dtype d, F&& f) {
  using std::integral_constant;
  switch (d) {
    case Dtype::bool_: return f(integral_constant<Dtype, Dtype::bool_>{});
    case Dtype::uint8: return f(integral_constant<Dtype, Dtype::uint8>{});
    case Dtype::uint16: return f(integral_constant<Dtype, Dtype::uint16>{});
    case Dtype::uint32: return f(integral_constant<Dtype, Dtype::uint32>{});
    case Dtype::uint64: return f(integral_constant<Dtype, Dtype::uint64>{});
    case Dtype::int8: return f(integral_constant<Dtype, Dtype::int8>{});
    case Dtype::int16: return f(integral_constant<Dtype, Dtype::int16>{});
    case Dtype::int32: return f(integral_constant<Dtype, Dtype::int32>{});
    case Dtype::int64: return f(integral_constant<Dtype, Dtype::int64>{});
    case Dtype::float16: return f(integral_constant<Dtype, Dtype::float16>{});
    case Dtype::float32: return f(integral_constant<Dtype, Dtype::float32>{});
    case Dtype::float64: return f(integral_constant<Dtype, Dtype::float64>{});
    case Dtype::bfloat16: return f(integral_constant<Dtype, Dtype::bfloat16>{});
    case Dtype::complex64: break;
  }
  return f(integral_constant<Dtype, Dtype::complex64>{});
}

// bfloat16 as the CPU rounds it: nearest even, a NaN stays a (quiet) NaN of the same sign.
__device__ inline float bf16_to_float(bf16 v) { return __uint_as_float(uint32_t(__bfloat16_as_ushort(v)) << 16); }
__device__ inline bf16 float_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __ushort_as_bfloat16(uint16_t((u >> 16) | 0x40));
  return __ushort_as_bfloat16(uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16));
}

// A float to an integer as the CPU converts it (C++ leaves values out of range undefined): 8- and
// 16-bit results through int32; int32 and int64 give their lowest value out of range or for NaN;
// uint32 and uint64 as MLX's array code (backend/cpu/ctypes.h's float_to_unsigned): values from
// 2^(n-1) up are shifted down before the signed conversion and the top bit is put back.
template <class I, class F> __device__ inline I float_to_int(F x) {
  constexpr int bits = int(sizeof(I)) * 8;
  if constexpr (bits < 32) {
    return I(float_to_int<int32_t>(x));
  } else if constexpr (std::is_signed_v<I>) {
    double v = double(x);
    bool in_range = bits == 32 ? (v > -2147483649.0 && v < 2147483648.0) : (v >= -0x1p63 && v < 0x1p63);
    return in_range ? I(x) : I(I(1) << (bits - 1));
  } else {
    using S = std::make_signed_t<I>;
    constexpr F half = F(bits == 32 ? 0x1p31 : 0x1p63);
    if (x >= half) return I(float_to_int<S>(F(x - half))) ^ (I(1) << (bits - 1));
    return I(float_to_int<S>(x));
  }
}

template <class From> __device__ inline f16 to_f16(From v) {
  if constexpr (std::is_same_v<From, bool>)
    return __float2half_rn(v ? 1.0f : 0.0f);
  else if constexpr (std::is_same_v<From, int8_t> || std::is_same_v<From, int16_t>)
    return __short2half_rn(short(v));
  else if constexpr (std::is_same_v<From, uint8_t> || std::is_same_v<From, uint16_t>)
    return __ushort2half_rn((unsigned short)(v));
  else if constexpr (std::is_same_v<From, int32_t>)
    return __int2half_rn(v);
  else if constexpr (std::is_same_v<From, uint32_t>)
    return __uint2half_rn(v);
  else if constexpr (std::is_same_v<From, int64_t>)
    return __ll2half_rn((long long)(v));
  else if constexpr (std::is_same_v<From, uint64_t>)
    return __ull2half_rn((unsigned long long)(v));
  else if constexpr (std::is_same_v<From, double>)
    return __double2half(v);
  else
    return __float2half_rn(v);
}

// Element conversion with the CPU's meaning (complex -> real keeps the real part; bfloat16 goes
// through float32 both ways; float16 converts directly from each type).
template <class To, class From> __device__ inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, bf16>) {
    return convert<To>(bf16_to_float(v));
  } else if constexpr (std::is_same_v<From, f16>) {
    return convert<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, c64>) {
    if constexpr (std::is_same_v<To, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, bf16>) {
    return float_to_bf16(convert<float>(v));
  } else if constexpr (std::is_same_v<To, f16>) {
    return to_f16(v);
  } else if constexpr (std::is_same_v<To, c64>) {
    return c64(convert<float>(v), 0.0f);
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_int_v<To> && is_float_v<From>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Element i of a float32, float16 or bfloat16 buffer of dtype d, as a float, and back (the kernels
// that compute half types in float32; the CPU's load_float and store_float).
__device__ inline float load_float(const void* p, Dtype d, int64_t i) {
  if (d == Dtype::float16) return __half2float(static_cast<const f16*>(p)[i]);
  if (d == Dtype::bfloat16) return bf16_to_float(static_cast<const bf16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}
__device__ inline void store_float(void* p, Dtype d, int64_t i, float v) {
  if (d == Dtype::float16)
    static_cast<f16*>(p)[i] = __float2half_rn(v);
  else if (d == Dtype::bfloat16)
    static_cast<bf16*>(p)[i] = float_to_bf16(v);
  else
    static_cast<float*>(p)[i] = v;
}

// Element i of a buffer of dtype d, read as T.
template <class T> __device__ inline T load_as(const void* p, Dtype d, int64_t i) {
  return visit_dtype(d, [&](auto tag) { return convert<T>(static_cast<const ctype_t<tag.value>*>(p)[i]); });
}
// Stores v as element i of a buffer of dtype d.
template <class T> __device__ inline void store_as(void* p, Dtype d, int64_t i, T v) {
  visit_dtype(d, [&](auto tag) {
    using D = ctype_t<tag.value>;
    static_cast<D*>(p)[i] = convert<D>(v);
  });
}

}  // namespace nuvec::cuda
