// Binary kernels: one functor per op; the loop template handles scalar operands.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {
namespace {

template <class T> constexpr bool numeric = true;
template <class T> constexpr bool not_complex = !is_complex_v<T>;
template <class T> constexpr bool integral = std::is_integral_v<T>;
template <class T> constexpr bool int_only = is_int_v<T>;
template <class T> constexpr bool real_float = is_float_v<T>;
template <class T> constexpr bool inexact = is_float_v<T> || is_complex_v<T>;

#define NUVEC_BINARY(Name, Ok, expr)                                      \
  struct Name {                                                           \
    template <class T> static constexpr bool ok = Ok<T>;                  \
    template <class T> static auto f(T a, T b, NoParams) { return expr; } \
  };

// Booleans combine without short-circuit operators: those branch on every element (random masks
// mispredict half the time) where these vectorise.
template <class T> T add(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a | b;
  else
    return T(a + b);
}
template <class T> T sub(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a != b;
  else
    return T(a - b);
}
template <class T> T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a & b;
  } else if constexpr (is_complex_v<T>) {
    // The textbook product, as NumPy computes it (std::complex's checks for infinities cost 5x).
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  } else {
    return T(a * b);
  }
}

// NumPy's floored division and remainder; integer division by zero gives 0.
template <class T> T floor_div(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a & b;
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
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    return div - fl > T(0.5) ? fl + T(1) : fl;
  }
}
template <class T> T rem(T a, T b) {
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
    if (b == 0) return std::fmod(a, b);
    T mod = std::fmod(a, b);
    if (mod != 0) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = std::copysign(T(0), b);
    }
    return mod;
  }
}

template <class T> T power(T a, T b) {
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
  } else {
    return std::pow(a, b);
  }
}

template <class T> bool lt(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}
// Real comparisons are IEEE's (false with NaN) and vectorise; complex ones are lexicographic.
template <class T> bool le(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
  else
    return a <= b;
}
template <class T> bool is_nan(T a) {
  if constexpr (is_complex_v<T>)
    return std::isnan(a.real()) || std::isnan(a.imag());
  else if constexpr (is_float_v<T>)
    return std::isnan(a);
  else
    return false;
}
// maximum / minimum propagate NaN, as MLX and NumPy do.
template <class T> T max_of(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return lt(a, b) ? b : a;
}
template <class T> T min_of(T a, T b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return lt(b, a) ? b : a;
}

template <class T> T shift_left(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  if (b < 0 || b >= T(bits)) return 0;
  return T(std::make_unsigned_t<T>(a) << b);
}
template <class T> T shift_right(T a, T b) {
  constexpr int bits = sizeof(T) * 8;
  if (b < 0 || b >= T(bits)) return (std::is_signed_v<T> && a < 0) ? T(-1) : T(0);
  return T(a >> b);
}

template <class T> T log_add_exp(T a, T b) {
  if constexpr (is_complex_v<T>) {
    // MLX's complex form: the larger (lexicographically) plus log1p(exp(smaller - larger)).
    using R = typename T::value_type;
    constexpr R inf = std::numeric_limits<R>::infinity();
    if (is_nan(a) || is_nan(b)) return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
    T hi = lt(a, b) ? b : a, lo = lt(a, b) ? a : b;
    if (lo.real() == -inf || hi.real() == inf) return hi;
    return hi + std::log(T(1) + std::exp(lo - hi));
  } else {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    if (a == b) return a + T(0.6931471805599453);
    T m = std::max(a, b);
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  }
}

template <class T> bool close(T a, T b, const IsCloseParams& p) {
  if (is_nan(a) || is_nan(b)) return p.equal_nan && is_nan(a) && is_nan(b);
  if (a == b) return true;
  if constexpr (is_complex_v<T>) {
    if (!std::isfinite(std::abs(a)) || !std::isfinite(std::abs(b))) return false;  // unequal infinities
    double d = std::abs(std::complex<double>(a) - std::complex<double>(b));
    return d <= p.atol + p.rtol * std::abs(std::complex<double>(b));
  } else if constexpr (is_float_v<T>) {  // the same distances without a complex hypot
    const double x = double(a), y = double(b);
    if (!std::isfinite(x) || !std::isfinite(y)) return false;  // unequal infinities
    return std::fabs(x - y) <= p.atol + p.rtol * std::fabs(y);
  } else {
    double d = std::fabs(double(a) - double(b));
    return d <= p.atol + p.rtol * std::fabs(double(b));
  }
}

NUVEC_BINARY(Add, numeric, add(a, b))
NUVEC_BINARY(Subtract, numeric, sub(a, b))
NUVEC_BINARY(Multiply, numeric, mul(a, b))
NUVEC_BINARY(Divide, numeric, T(a / b))
NUVEC_BINARY(FloorDivide, not_complex, floor_div(a, b))
NUVEC_BINARY(Remainder, not_complex, rem(a, b))
NUVEC_BINARY(Power, numeric, power(a, b))
NUVEC_BINARY(Maximum, numeric, max_of(a, b))
NUVEC_BINARY(Minimum, numeric, min_of(a, b))
NUVEC_BINARY(Equal, numeric, bool(a == b))
NUVEC_BINARY(NotEqual, numeric, bool(a != b))
NUVEC_BINARY(Less, numeric, lt(a, b))
NUVEC_BINARY(LessEqual, numeric, le(a, b))
NUVEC_BINARY(Greater, numeric, lt(b, a))
NUVEC_BINARY(GreaterEqual, numeric, le(b, a))
NUVEC_BINARY(LogicalAnd, numeric, bool((a != T(0)) & (b != T(0))))
NUVEC_BINARY(LogicalOr, numeric, bool((a != T(0)) | (b != T(0))))
NUVEC_BINARY(BitwiseAnd, integral, T(a& b))
NUVEC_BINARY(BitwiseOr, integral, T(a | b))
NUVEC_BINARY(BitwiseXor, integral, T(a ^ b))
NUVEC_BINARY(LeftShift, int_only, shift_left(a, b))
NUVEC_BINARY(RightShift, int_only, shift_right(a, b))
NUVEC_BINARY(Arctan2, real_float, T(std::atan2(a, b)))
NUVEC_BINARY(Logaddexp, inexact, log_add_exp(a, b))
struct Isclose {
  using Params = IsCloseParams;
  template <class T> static constexpr bool ok = true;
  template <class T> static bool f(T a, T b, const IsCloseParams& p) { return close(a, b, p); }
};
NUVEC_BINARY(EqualNan, numeric, bool((a == b) | (is_nan(a) & is_nan(b))))

// Float32 forms with an explicit vector version.
template <class Op> struct VecForm { static constexpr bool has = false; };
#define NUVEC_VEC_FORM(Op, expr)                     \
  template <> struct VecForm<Op> {                   \
    static constexpr bool has = true;                \
    static VecF vec(VecF a, VecF b) { return expr; } \
  };
NUVEC_VEC_FORM(Add, a + b)
NUVEC_VEC_FORM(Subtract, a - b)
NUVEC_VEC_FORM(Multiply, a* b)
NUVEC_VEC_FORM(Divide, a / b)
#ifdef NUVEC_HAS_VECTOR_MATH
NUVEC_VEC_FORM(Power, NUVEC_MVEC2(pow)(a, b))
NUVEC_VEC_FORM(Arctan2, NUVEC_MVEC2(atan2)(a, b))
#endif

// Whether x is a normal number whose significand is 1 (a power of two).
template <class T> bool normal_power_of_two(T x) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u;
  std::memcpy(&u, &x, sizeof(u));
  return std::isnormal(x) && (u & ((U(1) << (std::numeric_limits<T>::digits - 1)) - 1)) == 0;
}

template <class Op, class T>
void binary_kernel(const void* const* in, const bool* scalar, void* out, int64_t n, const OpParams& params) {
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  const auto& p = functor_params<Op>(params);
  using O = decltype(Op::f(T{}, T{}, p));
  O* o = static_cast<O*>(out);
  if constexpr (std::is_same_v<Op, Divide> && std::is_floating_point_v<T>) {
    // By a power of two whose reciprocal is a normal number: multiplying by that reciprocal is the
    // same real number, so the same rounding, and a product costs a fraction of a division. (Bit
    // tests first: the fused engine calls this kernel once per chunk.)
    const T r = scalar[1] && !scalar[0] && normal_power_of_two(b[0]) ? T(1) / b[0] : T(0);
    if (std::isnormal(r)) {
      if constexpr (std::is_same_v<T, float>)
        map_vec2(a, false, &r, true, o, n, [](VecF x, VecF y) { return x * y; });
      else
        for (int64_t i = 0; i < n; ++i) o[i] = a[i] * r;
      return;
    }
  }
  if constexpr (std::is_same_v<T, float> && VecForm<Op>::has) {
    map_vec2(a, scalar[0], b, scalar[1], o, n, [](VecF x, VecF y) { return VecForm<Op>::vec(x, y); });
  } else if (scalar[0] && scalar[1]) {  // both broadcast along the run: one value
    std::fill(o, o + n, Op::f(a[0], b[0], p));
  } else if (scalar[1]) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], bv, p);
  } else if (scalar[0]) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::f(av, b[i], p);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], b[i], p);
  }
}

template <class Op> void fill_op(KernelTable& t, BinaryOp op) {
  for_each_compute_dtype([&](auto d) {
    using T = ctype_t<d.value>;
    if constexpr (Op::template ok<T>) t.binary[int(op)][int(d.value)] = &binary_kernel<Op, T>;
  });
}

}  // namespace

// Each op of the registry with a kernel, filled with its functor (a missing one fails to compile).
void fill_binary(KernelTable& t) {
#define NUVEC_FILL_ENTRY(name, Functor) fill_op<Functor>(t, BinaryOp::name);
  NUVEC_BINARY_KERNELS(NUVEC_FILL_ENTRY)
#undef NUVEC_FILL_ENTRY
}

}  // namespace nuvec::cpu::NUVEC_ISA
