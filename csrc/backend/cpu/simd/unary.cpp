// Unary kernels: one functor per op; the loop template owns vectorisation.
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/erf.h"
#include "backend/cpu/simd/erfinv.h"
#include "backend/cpu/simd/expsin.h"
#include "backend/cpu/simd/logf.h"
#include "backend/cpu/simd/mlx_math.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class T> constexpr bool real_float = is_float_v<T>;
template <class T> constexpr bool inexact = is_float_v<T> || is_complex_v<T>;
template <class T> constexpr bool any_type = true;

// Newton steps on erf refine the float32 estimate to double precision.
inline double erfinv_d(double x) {
  if (!(std::fabs(x) < 1.0)) {
    if (std::fabs(x) == 1.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return std::numeric_limits<double>::quiet_NaN();
  }
  double y = erfinv_f(float(x));
  if (!std::isfinite(y)) y = std::copysign(5.9, x);
  for (int i = 0; i < 3; ++i) y -= (std::erf(y) - x) / (1.1283791670955126 * std::exp(-y * y));
  return y;
}

#define NUVEC_SCALAR_OP(Name, Ok, expr)                              \
  struct Name {                                                      \
    template <class T> static constexpr bool ok = Ok<T>;             \
    template <class T> static auto f(T x, NoParams) { return expr; } \
  };

// Ops whose float32 form has a libmvec vector version.
#ifdef NUVEC_HAS_VECTOR_MATH
#define NUVEC_VEC_MATH(fn) \
  static VecF vec(VecF v) { return NUVEC_MVEC(fn)(v); }
#else
#define NUVEC_VEC_MATH(fn)
#endif
#define NUVEC_MATH_OP(Name, fn, complex_expr)                 \
  struct Name {                                               \
    template <class T> static constexpr bool ok = inexact<T>; \
    template <class T> static auto f(T x, NoParams) {         \
      if constexpr (is_complex_v<T>)                          \
        return T(complex_expr);                               \
      else                                                    \
        return T(std::fn(x));                                 \
    }                                                         \
    NUVEC_VEC_MATH(fn)                                        \
  };

// exp and sin in float32: nuvec's own vector code (expsin.h); other dtypes the C library.
#define NUVEC_OWN_MATH_OP(Name, fn, vec_fn)                                   \
  struct Name {                                                               \
    template <class T> static constexpr bool ok = inexact<T>;                 \
    template <class T> static auto f(T x, NoParams) { return T(std::fn(x)); } \
    static VecF vec(VecF v) { return vec_fn(v); }                             \
  };
NUVEC_OWN_MATH_OP(Exp, exp, expf_v)
NUVEC_MATH_OP(Expm1, expm1, std::exp(x) - T(1))
// log and log1p give glibc's scalar bits (MLX's): log through the vectorised copy of glibc's
// logf, log1p through glibc itself (libmvec's differ in the last bit).
struct Log {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) { return std::log(x); }
#if defined(__AVX2__)
  static VecF vec(VecF v) { return logf_v(v); }
#endif
};
struct Log1p {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) {
    if constexpr (is_complex_v<T>)
      return std::log(T(1) + x);
    else
      return std::log1p(x);
  }
};
NUVEC_MATH_OP(Log2, log2, std::log(x) / T(std::log(2.0f)))
NUVEC_MATH_OP(Log10, log10, std::log10(x))
NUVEC_OWN_MATH_OP(Sin, sin, sinf_v)
NUVEC_MATH_OP(Cos, cos, std::cos(x))
NUVEC_MATH_OP(Tan, tan, std::tan(x))
NUVEC_MATH_OP(Arcsin, asin, std::asin(x))
NUVEC_MATH_OP(Arccos, acos, std::acos(x))
NUVEC_MATH_OP(Arctan, atan, std::atan(x))
NUVEC_MATH_OP(Sinh, sinh, std::sinh(x))
NUVEC_MATH_OP(Cosh, cosh, std::cosh(x))
NUVEC_MATH_OP(Tanh, tanh, std::tanh(x))
NUVEC_MATH_OP(Arcsinh, asinh, std::asinh(x))
NUVEC_MATH_OP(Arccosh, acosh, std::acosh(x))
NUVEC_MATH_OP(Arctanh, atanh, std::atanh(x))

struct Erf {
  template <class T> static constexpr bool ok = real_float<T>;
  template <class T> static T f(T x, NoParams) { return std::erf(x); }
  static VecF vec(VecF v) { return erff_v(v); }  // float32: nuvec's own (erf.h)
};

// MLX's approximations: computed in float32 for every dtype (as MLX), the sign test on the input.
struct MlxExp {
  template <class T> static constexpr bool ok = real_float<T>;
  template <class T> static T f(T x, NoParams) { return T(mlx_expf(float(x))); }
#if defined(__AVX512F__)
  static VecF vec(VecF v) { return VecF(mlx_expf16(__m512(v))); }
#endif
};
struct MlxErf {
  template <class T> static constexpr bool ok = real_float<T>;
  template <class T> static T f(T x, NoParams) {
    float r = mlx_erf_magnitude(float(x));
    return x > T(0) ? T(r) : T(-r);
  }
};

struct Erfinv {
  template <class T> static constexpr bool ok = real_float<T>;
  template <class T> static T f(T x, NoParams) {
    if constexpr (std::is_same_v<T, float>) {
      if (!(std::fabs(x) < 1.0f)) return std::fabs(x) == 1.0f ? std::copysign(INFINITY, x) : NAN;
      return erfinv_f(x);
    } else {
      return erfinv_d(x);
    }
  }
};

struct Sigmoid {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) { return T(1) / (T(1) + std::exp(-x)); }
#ifdef NUVEC_HAS_VECTOR_MATH
  static VecF vec(VecF v) { return 1.0f / (1.0f + expf_v(-v)); }
#endif
};

struct Sqrt {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) { return std::sqrt(x); }
};
struct Rsqrt {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) { return T(1) / std::sqrt(x); }
};
struct Reciprocal {
  template <class T> static constexpr bool ok = inexact<T>;
  template <class T> static T f(T x, NoParams) { return T(1) / x; }
};

struct Abs {
  template <class T> static constexpr bool ok = true;
  template <class T> static auto f(T x, NoParams) {
    if constexpr (is_complex_v<T>) {
      // In double: no overflow or underflow for any float32 parts, and it vectorises.
      double re = x.real(), im = x.imag();
      return float(std::sqrt(re * re + im * im));
    } else if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (is_float_v<T>) {
      return std::fabs(x);
    } else {
      return T(x < 0 ? -x : x);
    }
  }
};

struct Negative {
  template <class T> static constexpr bool ok = !std::is_same_v<T, bool>;
  template <class T> static T f(T x, NoParams) { return T(-x); }
};

struct Sign {
  template <class T> static constexpr bool ok = true;
  template <class T> static T f(T x, NoParams) {
    if constexpr (is_complex_v<T>)
      return x == T(0) ? T(0) : x / std::abs(x);
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
  template <class T> static T f(T x, NoParams) {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return T(x * x);
  }
};

// floor/ceil/round leave integers as they are (round with negative decimals rounds them).
struct Floor {
  template <class T> static constexpr bool ok = !is_complex_v<T>;
  template <class T> static T f(T x, NoParams) {
    if constexpr (is_float_v<T>)
      return std::floor(x);
    else
      return x;
  }
};
struct Ceil {
  template <class T> static constexpr bool ok = !is_complex_v<T>;
  template <class T> static T f(T x, NoParams) {
    if constexpr (is_float_v<T>)
      return std::ceil(x);
    else
      return x;
  }
};
struct Round {
  using Params = RoundParams;
  template <class T> static constexpr bool ok = true;
  template <class T> static T f(T x, const RoundParams& p) {
    if constexpr (is_complex_v<T>) {
      return T(f(x.real(), p), f(x.imag(), p));
    } else if constexpr (is_float_v<T>) {
      if (p.decimals == 0) return std::nearbyint(x);
      T scale = T(std::pow(10.0, std::abs(p.decimals)));
      return p.decimals > 0 ? std::nearbyint(x * scale) / scale : std::nearbyint(x / scale) * scale;
    } else if constexpr (is_int_v<T>) {
      if (p.decimals >= 0) return x;
      double scale = std::pow(10.0, -p.decimals);
      return T(std::nearbyint(double(x) / scale) * scale);
    } else {
      return x;
    }
  }
};

template <class T> bool nan_of(T x) {
  if constexpr (is_complex_v<T>)
    return std::isnan(x.real()) || std::isnan(x.imag());
  else if constexpr (is_float_v<T>)
    return std::isnan(x);
  else
    return false;
}
template <class T> bool inf_of(T x, int sign) {  // sign 0: either infinity
  if constexpr (is_complex_v<T>)                 // a signed infinity is real, as MLX's x == -inf compares
    return sign == 0 ? std::isinf(x.real()) || std::isinf(x.imag())
                     : std::isinf(x.real()) && (sign > 0) == (x.real() > 0) && x.imag() == 0;
  else if constexpr (is_float_v<T>)
    return std::isinf(x) && (sign == 0 || (sign > 0) == (x > 0));
  else
    return false;
}

NUVEC_SCALAR_OP(Isnan, any_type, nan_of(x))
NUVEC_SCALAR_OP(Isinf, any_type, inf_of(x, 0))
NUVEC_SCALAR_OP(Isposinf, any_type, inf_of(x, 1))
NUVEC_SCALAR_OP(Isneginf, any_type, inf_of(x, -1))
NUVEC_SCALAR_OP(Isfinite, any_type, !(nan_of(x) | inf_of(x, 0)))  // | not ||: no branch per element
NUVEC_SCALAR_OP(LogicalNot, any_type, bool(x == T(0)))

struct BitwiseInvert {
  template <class T> static constexpr bool ok = std::is_integral_v<T>;
  template <class T> static T f(T x, NoParams) {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else
      return T(~x);
  }
};

struct Conjugate {
  template <class T> static constexpr bool ok = true;
  template <class T> static T f(T x, NoParams) {
    if constexpr (is_complex_v<T>)
      return std::conj(x);
    else
      return x;
  }
};
struct Real {
  template <class T> static constexpr bool ok = true;
  template <class T> static auto f(T x, NoParams) {
    if constexpr (is_complex_v<T>)
      return x.real();
    else
      return x;
  }
};
struct Imag {
  template <class T> static constexpr bool ok = true;
  template <class T> static auto f(T x, NoParams) {
    if constexpr (is_complex_v<T>)
      return x.imag();
    else
      return T(0);
  }
};

template <class R> R replace_non_finite(R x, const NanToNumParams& p) {
  if (std::isnan(x)) return R(p.nan);
  if (std::isinf(x)) return R(x > 0 ? p.posinf : p.neginf);
  return x;
}
struct NanToNum {
  using Params = NanToNumParams;
  template <class T> static constexpr bool ok = true;
  template <class T> static T f(T x, const NanToNumParams& p) {
    if constexpr (is_complex_v<T>)
      return T(replace_non_finite(x.real(), p), replace_non_finite(x.imag(), p));
    else if constexpr (is_float_v<T>)
      return replace_non_finite(x, p);
    else
      return x;
  }
};

template <class Op, class = void> struct has_vec : std::false_type {};
template <class Op> struct has_vec<Op, std::void_t<decltype(Op::vec(VecF{}))>> : std::true_type {};

template <class Op, class T>
void unary_kernel(const void* const* in, const bool*, void* out, int64_t n, const OpParams& params) {
  const T* a = static_cast<const T*>(in[0]);
  const auto& p = functor_params<Op>(params);
  using O = decltype(Op::f(T{}, p));
  O* o = static_cast<O*>(out);
  if constexpr (std::is_same_v<T, float> && has_vec<Op>::value) {
    map_vec(a, o, n, [](VecF v) { return Op::vec(v); });
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], p);
  }
}

template <class Op> void fill_op(KernelTable& t, UnaryOp op) {
  for_each_compute_dtype([&](auto d) {
    using T = ctype_t<d.value>;
    if constexpr (Op::template ok<T>) t.unary[int(op)][int(d.value)] = &unary_kernel<Op, T>;
  });
}

}  // namespace

// Each op of the registry with a kernel, filled with its functor (a missing one fails to compile).
void fill_unary(KernelTable& t) {
#define NUVEC_FILL_ENTRY(name, Functor) fill_op<Functor>(t, UnaryOp::name);
  NUVEC_UNARY_KERNELS(NUVEC_FILL_ENTRY)
#undef NUVEC_FILL_ENTRY
}

}  // namespace nuvec::cpu::NUVEC_ISA
