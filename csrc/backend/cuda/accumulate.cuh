// The arithmetic that reductions and scans accumulate with, as the CPU's: integers wrap (computed
// unsigned, so overflow is defined), complex numbers multiply by the textbook formula and compare
// lexicographically, float sums may carry a compensation term.
#pragma once
#include <type_traits>

#include "backend/cuda/dtypes.cuh"

namespace nuvec::cuda {

// The type T computes in: half types in float32.
template <class T> using Compute = std::conditional_t<is_half_v<T>, float, T>;

// The dtype whose device type is T.
template <class T> Dtype dtype_of() {
  constexpr Dtype all[] = {Dtype::bool_,   Dtype::uint8,   Dtype::uint16,   Dtype::uint32,   Dtype::uint64,
                           Dtype::int8,    Dtype::int16,   Dtype::int32,    Dtype::int64,    Dtype::float16,
                           Dtype::float32, Dtype::float64, Dtype::bfloat16, Dtype::complex64};
  for (Dtype d : all)
    if (visit_dtype(d, [](auto tag) { return std::is_same_v<T, ctype_t<tag.value>>; })) return d;
  return Dtype::complex64;
}

template <class A> __device__ __forceinline__ bool is_nan(A v) {
  if constexpr (is_complex_v<A>)
    return isnan(v.real()) || isnan(v.imag());
  else if constexpr (std::is_floating_point_v<A>)
    return isnan(v);
  else
    return false;
}

template <class A> __device__ __forceinline__ A add(A a, A b) {
  if constexpr (is_complex_v<A>)
    return A(a.real() + b.real(), a.imag() + b.imag());
  else if constexpr (std::is_same_v<A, bool>)
    return a || b;
  else if constexpr (std::is_integral_v<A>)
    return A(std::make_unsigned_t<A>(a) + std::make_unsigned_t<A>(b));
  else
    return a + b;
}

template <class A> __device__ __forceinline__ A mul(A a, A b) {
  if constexpr (is_complex_v<A>)  // the textbook product, as the CPU's
    return A(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else if constexpr (std::is_same_v<A, bool>)
    return a && b;
  else if constexpr (std::is_integral_v<A>)  // 64 bits wide: no promotion to a signed int
    return A(uint64_t(std::make_unsigned_t<A>(a)) * uint64_t(std::make_unsigned_t<A>(b)));
  else
    return a * b;
}

// a > b; complex numbers lexicographically.
template <class A> __device__ __forceinline__ bool greater(A a, A b) {
  if constexpr (is_complex_v<A>)
    return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
  else
    return a > b;
}

// The largest (or smallest) value of A: infinities for inexact types.
template <class A> __device__ __forceinline__ A extreme(bool highest) {
  if constexpr (is_complex_v<A>) {
    float inf = __int_as_float(0x7f800000);
    return highest ? A(inf, inf) : A(-inf, -inf);
  } else if constexpr (std::is_same_v<A, float>) {
    return __int_as_float(highest ? 0x7f800000 : int(0xff800000u));
  } else if constexpr (std::is_same_v<A, double>) {
    return __longlong_as_double(highest ? 0x7ff0000000000000ll : (long long)0xfff0000000000000ull);
  } else if constexpr (std::is_same_v<A, bool>) {
    return highest;
  } else if constexpr (std::is_signed_v<A>) {
    A lowest = A(std::make_unsigned_t<A>(1) << (8 * sizeof(A) - 1));
    return highest ? A(~lowest) : lowest;
  } else {
    return highest ? A(~A(0)) : A(0);
  }
}

// s += x with Kahan's compensation c (floats), so that a long sequential run of one thread is as
// accurate as the CPU's pairwise sum; a plain add otherwise. Once the sum is infinite or NaN the
// compensation stays 0 (inf - inf would make it NaN).
template <class A> __device__ __forceinline__ void add_compensated(A& s, A& c, A x) {
  if constexpr (std::is_floating_point_v<A>) {
    A y = x - c;
    A t = s + y;
    c = isfinite(t) ? (t - s) - y : A(0);
    s = t;
  } else {
    s = add(s, x);
  }
}

// Shared memory for one A per thread of a block of N (raw: a complex value's constructor is not
// allowed on a __shared__ variable).
template <class A, int N> __device__ __forceinline__ A* shared_slots() {
  __shared__ alignas(16) unsigned char raw[N * sizeof(A)];
  return reinterpret_cast<A*>(raw);
}

// Each group of `tpo` consecutive threads (a power of two dividing the block) joins its values
// by a fixed tree: lane i with lane i + s for s = tpo/2, ..., 1. Every lane gets the group's
// result. Every thread of the block must call it.
template <class A, class F> __device__ A group_reduce(A* smem, A v, int lane, int tpo, F f) {
  int t = threadIdx.x;
  __syncthreads();  // earlier readers of smem are done
  smem[t] = v;
  for (int s = tpo / 2; s >= 1; s /= 2) {
    __syncthreads();
    if (lane < s) smem[t] = f(smem[t], smem[t + s]);
  }
  __syncthreads();
  return smem[t - lane];
}

}  // namespace nuvec::cuda
