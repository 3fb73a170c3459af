// The element-wise ops on the device: one functor per op of the registry, each the CPU's
// (backend/cpu/simd/unary.cpp, binary.cpp) step for step where the result must be bitwise the
// same (integer ops, rounding, floored division, comparisons), CUDA's accurate math functions
// where the CPU calls the C library (results within a few ulps). `ok<T>` is the set of compute
// types the CPU has a kernel for; `f` takes the compute type and returns the result's.
#pragma once
#include <cmath>

#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/elementwise_launch.h"
#include "nuvec_generated/elementwise_ops.h"

namespace nuvec::cuda {

// core/primitives/elementwise.h's enums, from the same generated lists (that header reaches
// core/array.h, which nvcc's front end rejects).
#define NUVEC_ENUM_ENTRY(name, ...) name,
enum class UnaryOp : int { NUVEC_UNARY_OPS(NUVEC_ENUM_ENTRY) };
enum class BinaryOp : int { NUVEC_BINARY_OPS(NUVEC_ENUM_ENTRY) };
#undef NUVEC_ENUM_ENTRY

template <class T> constexpr bool any_type = true;
template <class T> constexpr bool real_float = is_float_v<T>;
template <class T> constexpr bool inexact = is_float_v<T> || is_complex_v<T>;
template <class T> constexpr bool not_bool = !std::is_same_v<T, bool>;
template <class T> constexpr bool not_complex = !is_complex_v<T>;
template <class T> constexpr bool integral = std::is_integral_v<T>;
template <class T> constexpr bool int_only = is_int_v<T>;

template <class T> __device__ inline bool nan_of(T x) {
  if constexpr (is_complex_v<T>)
    return isnan(x.real()) || isnan(x.imag());
  else if constexpr (is_float_v<T>)
    return isnan(x);
  else
    return false;
}
template <class T> __device__ inline bool inf_of(T x, int sign) {  // sign 0: either infinity
  if constexpr (is_complex_v<T>)
    return sign == 0 ? isinf(x.real()) || isinf(x.imag())
                     : isinf(x.real()) && (sign > 0) == (x.real() > 0) && x.imag() == 0;
  else if constexpr (is_float_v<T>)
    return isinf(x) && (sign == 0 || (sign > 0) == (x > 0));
  else
    return false;
}

// ---------------------------------------------------------------- unary
#define NUVEC_CUDA_UNARY(Name, Ok, expr)                                                     \
  struct Name {                                                                              \
    template <class T> static constexpr bool ok = Ok<T>;                                     \
    template <class T> __device__ static auto f(T x, const KernelParams& p) { return expr; } \
  };
// A math function on real floats (CUDA's) and its complex form (libcu++'s) on complex64.
#define NUVEC_CUDA_MATH(Name, Ok, real_expr, complex_expr)               \
  struct Name {                                                          \
    template <class T> static constexpr bool ok = Ok<T>;                 \
    template <class T> __device__ static T f(T x, const KernelParams&) { \
      if constexpr (is_complex_v<T>)                                     \
        return T(complex_expr);                                          \
      else                                                               \
        return T(real_expr);                                             \
    }                                                                    \
  };

NUVEC_CUDA_MATH(Exp, inexact, exp(x), ::cuda::std::exp(x))
NUVEC_CUDA_MATH(Expm1, real_float, expm1(x), x)
NUVEC_CUDA_MATH(Log, inexact, log(x), ::cuda::std::log(x))
NUVEC_CUDA_MATH(Log1p, inexact, log1p(x), ::cuda::std::log(T(1) + x))
NUVEC_CUDA_MATH(Log2, inexact, log2(x), ::cuda::std::log(x) / T(0.693147182f))  // ln 2 in float, as the CPU's
NUVEC_CUDA_MATH(Log10, inexact, log10(x), ::cuda::std::log10(x))
NUVEC_CUDA_MATH(Sin, inexact, sin(x), ::cuda::std::sin(x))
NUVEC_CUDA_MATH(Cos, inexact, cos(x), ::cuda::std::cos(x))
NUVEC_CUDA_MATH(Tan, inexact, tan(x), ::cuda::std::tan(x))
NUVEC_CUDA_MATH(Arcsin, inexact, asin(x), ::cuda::std::asin(x))
NUVEC_CUDA_MATH(Arccos, inexact, acos(x), ::cuda::std::acos(x))
NUVEC_CUDA_MATH(Arctan, inexact, atan(x), ::cuda::std::atan(x))
NUVEC_CUDA_MATH(Sinh, inexact, sinh(x), ::cuda::std::sinh(x))
NUVEC_CUDA_MATH(Cosh, inexact, cosh(x), ::cuda::std::cosh(x))
NUVEC_CUDA_MATH(Tanh, inexact, tanh(x), ::cuda::std::tanh(x))
NUVEC_CUDA_MATH(Arcsinh, inexact, asinh(x), ::cuda::std::asinh(x))
NUVEC_CUDA_MATH(Arccosh, inexact, acosh(x), ::cuda::std::acosh(x))
NUVEC_CUDA_MATH(Arctanh, inexact, atanh(x), ::cuda::std::atanh(x))
NUVEC_CUDA_MATH(Erf, real_float, erf(x), x)
NUVEC_CUDA_MATH(Erfinv, real_float, erfinv(x), x)
NUVEC_CUDA_MATH(Sigmoid, inexact, T(1) / (T(1) + exp(-x)), T(1) / (T(1) + ::cuda::std::exp(-x)))
NUVEC_CUDA_MATH(Sqrt, inexact, sqrt(x), ::cuda::std::sqrt(x))
NUVEC_CUDA_MATH(Rsqrt, inexact, T(1) / sqrt(x), T(1) / ::cuda::std::sqrt(x))
NUVEC_CUDA_MATH(Reciprocal, inexact, T(1) / x, T(1) / x)

// MLX's float32 exp and erf approximations, with the CPU's (backend/cpu/simd/mlx_math.h) steps
// and fused multiply-adds: the same bits.
__device__ inline float mlx_expf(float x0) {
  if (isnan(x0)) return x0;
  if (x0 > 88.0f) return INFINITY;
  if (x0 < -88.0f) return 0.0f;
  float x = __fmul_rn(x0, 1.442695f);
  float ipart = floorf(__fadd_rn(x, 0.5f));
  float f = __fsub_rn(x, ipart);
  float q = 1.535336188319500e-4f;
  q = fmaf(q, f, 1.339887440266574e-3f);
  q = fmaf(q, f, 9.618437357674640e-3f);
  q = fmaf(q, f, 5.550332471162809e-2f);
  q = fmaf(q, f, 2.402264791363012e-1f);
  q = fmaf(q, f, 6.931472028550421e-1f);
  q = fmaf(q, f, 1.0f);
  return __fmul_rn(__int_as_float((int32_t(ipart) + 127) << 23), q);
}
__device__ inline float mlx_erf_magnitude(float v) {
  float t = __fdiv_rn(1.0f, fmaf(0.3275911f, fabsf(v), 1.0f));
  float r = fmaf(1.061405429f, t, -1.453152027f);
  r = fmaf(r, t, 1.421413741f);
  r = fmaf(r, t, -0.284496736f);
  r = fmaf(r, t, 0.254829592f);
  float e = -mlx_expf(__fmul_rn(-v, v));
  return fmaf(__fmul_rn(e, t), r, 1.0f);
}
NUVEC_CUDA_UNARY(MlxExp, real_float, T(mlx_expf(float(x))))
struct MlxErf {
  template <class T> static constexpr bool ok = real_float<T>;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    float r = mlx_erf_magnitude(float(x));
    return x > T(0) ? T(r) : T(-r);
  }
};

struct Abs {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static auto f(T x, const KernelParams&) {
    if constexpr (is_complex_v<T>) {
      double re = x.real(), im = x.imag();  // in double: as the CPU, no overflow or underflow
      return float(sqrt(re * re + im * im));
    } else if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (is_float_v<T>) {
      return T(fabs(x));
    } else {
      return T(x < 0 ? -x : x);
    }
  }
};
NUVEC_CUDA_UNARY(Negative, not_bool, T(-x))
struct Sign {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (is_complex_v<T>)
      return x == T(0) ? T(0) : x / ::cuda::std::abs(x);
    else if constexpr (std::is_same_v<T, bool>)
      return x;
    else if constexpr (std::is_unsigned_v<T>)
      return T(x > 0);
    else
      return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));  // both zeros and NaN give +0, as MLX
  }
};
struct Square {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else if constexpr (is_complex_v<T>)  // the textbook product, as the CPU's std::complex square
      return T(x.real() * x.real() - x.imag() * x.imag(), x.real() * x.imag() + x.imag() * x.real());
    else
      return T(x * x);
  }
};
struct Floor {
  template <class T> static constexpr bool ok = not_complex<T>;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (is_float_v<T>)
      return floor(x);
    else
      return x;
  }
};
struct Ceil {
  template <class T> static constexpr bool ok = not_complex<T>;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (is_float_v<T>)
      return ceil(x);
    else
      return x;
  }
};
template <class R> __device__ inline R round_real(R x, const KernelParams& p) {
  if (p.decimals == 0) return rint(x);
  R scale = R(p.round_scale);
  return p.decimals > 0 ? rint(x * scale) / scale : rint(x / scale) * scale;
}
struct Round {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static T f(T x, const KernelParams& p) {
    if constexpr (is_complex_v<T>) {
      return T(round_real(x.real(), p), round_real(x.imag(), p));
    } else if constexpr (is_float_v<T>) {
      return round_real(x, p);
    } else if constexpr (is_int_v<T>) {
      if (p.decimals >= 0) return x;
      return convert<T>(rint(double(x) / p.round_scale) * p.round_scale);
    } else {
      return x;
    }
  }
};
NUVEC_CUDA_UNARY(Isnan, any_type, nan_of(x))
NUVEC_CUDA_UNARY(Isinf, any_type, inf_of(x, 0))
NUVEC_CUDA_UNARY(Isposinf, any_type, inf_of(x, 1))
NUVEC_CUDA_UNARY(Isneginf, any_type, inf_of(x, -1))
NUVEC_CUDA_UNARY(Isfinite, any_type, !nan_of(x) && !inf_of(x, 0))
NUVEC_CUDA_UNARY(LogicalNot, any_type, bool(x == T(0)))
struct BitwiseInvert {
  template <class T> static constexpr bool ok = integral<T>;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else
      return T(~x);
  }
};
struct Conjugate {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static T f(T x, const KernelParams&) {
    if constexpr (is_complex_v<T>)
      return ::cuda::std::conj(x);
    else
      return x;
  }
};
struct Real {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static auto f(T x, const KernelParams&) {
    if constexpr (is_complex_v<T>)
      return x.real();
    else
      return x;
  }
};
struct Imag {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static auto f(T x, const KernelParams&) {
    if constexpr (is_complex_v<T>)
      return x.imag();
    else
      return T(0);
  }
};
template <class R> __device__ inline R replace_non_finite(R x, const KernelParams& p) {
  if (isnan(x)) return R(p.nan);
  if (isinf(x)) return R(x > 0 ? p.posinf : p.neginf);
  return x;
}
struct NanToNum {
  template <class T> static constexpr bool ok = true;
  template <class T> __device__ static T f(T x, const KernelParams& p) {
    if constexpr (is_complex_v<T>)
      return T(replace_non_finite(x.real(), p), replace_non_finite(x.imag(), p));
    else if constexpr (is_float_v<T>)
      return replace_non_finite(x, p);
    else
      return x;
  }
};

// ---------------------------------------------------------------- binary
#define NUVEC_CUDA_BINARY(Name, Ok, expr)                                                         \
  struct Name {                                                                                   \
    template <class T> static constexpr bool ok = Ok<T>;                                          \
    template <class T> __device__ static auto f(T a, T b, const KernelParams& p) { return expr; } \
  };

template <class T> __device__ inline T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return T(a + b);
}
template <class T> __device__ inline T sub(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else
    return T(a - b);
}
template <class T> __device__ inline T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else if constexpr (is_complex_v<T>)  // the textbook product, as the CPU (and NumPy)
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else
    return T(a * b);
}
template <class T> __device__ inline T div(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return b == 0 ? T(0) : T(a / b);  // never a compute type of divide; kept defined
  else
    return T(a / b);
}

// NumPy's floored division and remainder; integer division by zero gives 0.
template <class T> __device__ inline T floor_div(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0 - std::make_unsigned_t<T>(a));  // avoids INT_MIN / -1
      T q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      return a / b;
    }
  } else {
    if (b == 0) return a / b;
    T mod = fmod(a, b);
    T q = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) q -= T(1);
    if (q == 0) return copysign(T(0), a / b);
    T fl = floor(q);
    return q - fl > T(0.5) ? fl + T(1) : fl;
  }
}
template <class T> __device__ inline T rem(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return 0;
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      return a % b;
    }
  } else {
    if (b == 0) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != 0) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = copysign(T(0), b);
    }
    return mod;
  }
}
template <class T> __device__ inline T power(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b < 0) return 0;  // MLX's integer power: every negative exponent gives 0
    }
    std::make_unsigned_t<T> r = 1, base = a;
    for (auto e = std::make_unsigned_t<T>(b); e; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return T(r);
  } else if constexpr (is_complex_v<T>) {
    return ::cuda::std::pow(a, b);
  } else {
    return pow(a, b);
  }
}
// Real comparisons are IEEE's (false with NaN); complex ones are lexicographic.
template <class T> __device__ inline bool lt(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}
template <class T> __device__ inline bool le(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
  else
    return a <= b;
}
template <class T> __device__ inline T max_of(T a, T b) {  // NaN propagates, as MLX and NumPy
  if (nan_of(a)) return a;
  if (nan_of(b)) return b;
  return lt(a, b) ? b : a;
}
template <class T> __device__ inline T min_of(T a, T b) {
  if (nan_of(a)) return a;
  if (nan_of(b)) return b;
  return lt(b, a) ? b : a;
}
template <class T> __device__ inline bool shift_out_of_range(T b) {
  if constexpr (std::is_signed_v<T>)
    if (b < 0) return true;
  return b >= T(sizeof(T) * 8);
}
template <class T> __device__ inline T shift_left(T a, T b) {
  if (shift_out_of_range(b)) return 0;
  return T(std::make_unsigned_t<T>(a) << b);
}
template <class T> __device__ inline T shift_right(T a, T b) {
  if (shift_out_of_range(b)) return (std::is_signed_v<T> && a < T(0)) ? T(-1) : T(0);
  return T(a >> b);
}
template <class T> __device__ inline T log_add_exp(T a, T b) {
  if constexpr (is_complex_v<T>) {
    // The larger (lexicographically) plus log1p(exp(smaller - larger)), as the CPU's.
    if (nan_of(a) || nan_of(b)) return T(NAN, NAN);
    T hi = lt(a, b) ? b : a, lo = lt(a, b) ? a : b;
    if (lo.real() == -INFINITY || hi.real() == INFINITY) return hi;
    return hi + ::cuda::std::log(T(1) + ::cuda::std::exp(lo - hi));
  } else {
    if (isnan(a) || isnan(b)) return T(NAN);
    if (a == b) return a + T(0.6931471805599453);
    T m = fmax(a, b);
    return m + log1p(exp(-fabs(a - b)));
  }
}
template <class T> __device__ inline bool close(T a, T b, const KernelParams& p) {
  if (nan_of(a) || nan_of(b)) return p.equal_nan && nan_of(a) && nan_of(b);
  if (a == b) return true;
  if constexpr (is_complex_v<T>) {
    if (!isfinite(::cuda::std::abs(a)) || !isfinite(::cuda::std::abs(b))) return false;  // unequal infinities
    double d = hypot(double(a.real()) - double(b.real()), double(a.imag()) - double(b.imag()));
    return d <= p.atol + p.rtol * hypot(double(b.real()), double(b.imag()));
  } else if constexpr (is_float_v<T>) {
    if (!isfinite(a) || !isfinite(b)) return false;
    return fabs(double(a) - double(b)) <= p.atol + p.rtol * fabs(double(b));
  } else {
    return fabs(double(a) - double(b)) <= p.atol + p.rtol * fabs(double(b));
  }
}

NUVEC_CUDA_BINARY(Add, any_type, add(a, b))
NUVEC_CUDA_BINARY(Subtract, any_type, sub(a, b))
NUVEC_CUDA_BINARY(Multiply, any_type, mul(a, b))
NUVEC_CUDA_BINARY(Divide, any_type, div(a, b))
NUVEC_CUDA_BINARY(FloorDivide, not_complex, floor_div(a, b))
NUVEC_CUDA_BINARY(Remainder, not_complex, rem(a, b))
NUVEC_CUDA_BINARY(Power, any_type, power(a, b))
NUVEC_CUDA_BINARY(Maximum, any_type, max_of(a, b))
NUVEC_CUDA_BINARY(Minimum, any_type, min_of(a, b))
NUVEC_CUDA_BINARY(Equal, any_type, bool(a == b))
NUVEC_CUDA_BINARY(NotEqual, any_type, bool(a != b))
NUVEC_CUDA_BINARY(Less, any_type, lt(a, b))
NUVEC_CUDA_BINARY(LessEqual, any_type, le(a, b))
NUVEC_CUDA_BINARY(Greater, any_type, lt(b, a))
NUVEC_CUDA_BINARY(GreaterEqual, any_type, le(b, a))
NUVEC_CUDA_BINARY(LogicalAnd, any_type, bool(a != T(0) && b != T(0)))
NUVEC_CUDA_BINARY(LogicalOr, any_type, bool(a != T(0) || b != T(0)))
NUVEC_CUDA_BINARY(BitwiseAnd, integral, T(a& b))
NUVEC_CUDA_BINARY(BitwiseOr, integral, T(a | b))
NUVEC_CUDA_BINARY(BitwiseXor, integral, T(a ^ b))
NUVEC_CUDA_BINARY(LeftShift, int_only, shift_left(a, b))
NUVEC_CUDA_BINARY(RightShift, int_only, shift_right(a, b))
NUVEC_CUDA_BINARY(Arctan2, real_float, T(atan2(a, b)))
NUVEC_CUDA_BINARY(Logaddexp, inexact, log_add_exp(a, b))
NUVEC_CUDA_BINARY(Isclose, any_type, close(a, b, p))
NUVEC_CUDA_BINARY(EqualNan, any_type, bool(a == b || (nan_of(a) && nan_of(b))))

// An op's result: of the compute type, bool (predicates) or float (complex64's abs, real, imag).
template <class T> struct Result {
  T t{};
  bool b = false;
  float f = 0;
  int kind = 0;
  template <class R> __device__ void operator()(R v) {
    if constexpr (std::is_same_v<R, T>)
      t = v, kind = 0;
    else if constexpr (std::is_same_v<R, bool>)
      b = v, kind = 1;
    else
      f = v, kind = 2;
  }
  __device__ void store(void* out, Dtype d, int64_t i) const {
    if (kind == 0)
      store_as(out, d, i, t);
    else if (kind == 1)
      store_as(out, d, i, b);
    else
      store_as(out, d, i, f);
  }
};

// Ops without a kernel (copy, stop_gradient) and compute types an op has no kernel for never get
// here: the host checks both before launching.
template <class T> __device__ inline void apply(UnaryOp op, T x, const KernelParams& p, Result<T>& r) {
  switch (op) {
#define NUVEC_CASE(name, F)                         \
  case UnaryOp::name:                               \
    if constexpr (F::template ok<T>) r(F::f(x, p)); \
    return;
    NUVEC_UNARY_KERNELS(NUVEC_CASE)
#undef NUVEC_CASE
    default: return;
  }
}
template <class T> __device__ inline void apply(BinaryOp op, T a, T b, const KernelParams& p, Result<T>& r) {
  switch (op) {
#define NUVEC_CASE(name, F)                            \
  case BinaryOp::name:                                 \
    if constexpr (F::template ok<T>) r(F::f(a, b, p)); \
    return;
    NUVEC_BINARY_KERNELS(NUVEC_CASE)
#undef NUVEC_CASE
  }
}

}  // namespace nuvec::cuda
