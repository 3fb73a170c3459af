// Each nuvec dtype's type in device code, and the conversions kernels compute through: half types
// compute in float32 (as on the CPU), complex64 is a pair of floats.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/dtype.h"

namespace nuvec::cuda {

struct Complex { float re, im; };

template <class T> constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T> constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
// The type T computes in.
template <class T> using Compute = std::conditional_t<is_half_v<T>, float, T>;

template <Dtype D> struct DeviceTypeOf;
#define NUVEC_DEVICE_TYPE(D, T) \
  template <> struct DeviceTypeOf<Dtype::D> { using type = T; };
NUVEC_DEVICE_TYPE(bool_, bool)
NUVEC_DEVICE_TYPE(uint8, uint8_t)
NUVEC_DEVICE_TYPE(uint16, uint16_t)
NUVEC_DEVICE_TYPE(uint32, uint32_t)
NUVEC_DEVICE_TYPE(uint64, uint64_t)
NUVEC_DEVICE_TYPE(int8, int8_t)
NUVEC_DEVICE_TYPE(int16, int16_t)
NUVEC_DEVICE_TYPE(int32, int32_t)
NUVEC_DEVICE_TYPE(int64, int64_t)
NUVEC_DEVICE_TYPE(float16, __half)
NUVEC_DEVICE_TYPE(float32, float)
NUVEC_DEVICE_TYPE(float64, double)
NUVEC_DEVICE_TYPE(bfloat16, __nv_bfloat16)
NUVEC_DEVICE_TYPE(complex64, Complex)
#undef NUVEC_DEVICE_TYPE
template <Dtype D> using device_t = typename DeviceTypeOf<D>::type;

// The dtype whose device type is T.
template <class T> constexpr Dtype dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return Dtype::bool_;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return Dtype::uint8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return Dtype::uint16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return Dtype::uint32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return Dtype::uint64;
  else if constexpr (std::is_same_v<T, int8_t>)
    return Dtype::int8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return Dtype::int16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return Dtype::int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return Dtype::int64;
  else if constexpr (std::is_same_v<T, __half>)
    return Dtype::float16;
  else if constexpr (std::is_same_v<T, float>)
    return Dtype::float32;
  else if constexpr (std::is_same_v<T, double>)
    return Dtype::float64;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return Dtype::bfloat16;
  else
    return Dtype::complex64;
}

// f(T{}) with T the device type of d.
template <class F> void dispatch(Dtype d, F&& f) {
  switch (d) {
    case Dtype::bool_: return f(bool{});
    case Dtype::uint8: return f(uint8_t{});
    case Dtype::uint16: return f(uint16_t{});
    case Dtype::uint32: return f(uint32_t{});
    case Dtype::uint64: return f(uint64_t{});
    case Dtype::int8: return f(int8_t{});
    case Dtype::int16: return f(int16_t{});
    case Dtype::int32: return f(int32_t{});
    case Dtype::int64: return f(int64_t{});
    case Dtype::float16: return f(__half{});
    case Dtype::float32: return f(float{});
    case Dtype::float64: return f(double{});
    case Dtype::bfloat16: return f(__nv_bfloat16{});
    case Dtype::complex64: return f(Complex{});
  }
}

// A value of S as T (S or T may be a half type, computed through float; to bool: nonzero).
template <class T, class S> __device__ __forceinline__ T to(S v) {
  if constexpr (std::is_same_v<T, S>) {
    return v;
  } else if constexpr (std::is_same_v<S, Complex>) {
    if constexpr (std::is_same_v<T, bool>)
      return v.re != 0 || v.im != 0;
    else
      return to<T>(v.re);
  } else if constexpr (is_half_v<S>) {
    return to<T>(float(v));
  } else if constexpr (std::is_same_v<T, Complex>) {
    return Complex{to<float>(v), 0.0f};
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(float(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != S(0);
  } else {
    return T(v);
  }
}

template <class T> __device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_same_v<T, Complex>)
    return v.re != v.re || v.im != v.im;
  else if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

}  // namespace nuvec::cuda
