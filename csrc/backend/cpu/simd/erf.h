// float32 erf, vectorised in-house: libmvec's took ~26 cycles a vector of sixteen here, most of
// gelu's time. Weighted minimax polynomials that tools/fit_vector_math.py fits and rounds to
// float32 (coefficients from the lowest order):
//   |x| < 0.9:  erf(x) = x + x * Q(x^2), Q of degree 5;
//   |x| >= 0.9: erf(|x|) = 1 - 2^(t * P(t)) with t = min(|x|, 3.95), P of degree 6 (past 3.95,
//               1 - erfc rounds to 1), 2^f on [-1/2, 1/2] of degree 6, the sign put back.
// Within 1.5 ulp of the correctly rounded result (tests/test_vector_math_accuracy.py). A vector
// whose lanes all take one form computes only that one; every lane's bits are its own.
#pragma once
#include "backend/cpu/simd/expsin.h"

namespace nuvec::cpu::NUVEC_ISA {

inline VecF erff_small(VecF x) {
  VecF q = horner_v(x * x, 1.283791512e-01f, -3.761250377e-01f, 1.128190830e-01f, -2.676955238e-02f, 4.996998236e-03f,
                    -6.008231430e-04f);
  return fmadd(x, q, x);
}

// erf(t) for t = |x| >= 0.9 (NaN passes through).
inline VecF erff_large(VecF t) {
  t = clamp_v(t, 0.0f, 3.95f);
  VecF p = horner_v(t, -1.628284693e+00f, -9.163733125e-01f, -1.531961560e-01f, 3.422084823e-02f, -5.226706620e-03f,
                    4.588515148e-04f, -1.552724643e-05f);
  // erfc(t) = 2^r with r in [-26, -2.3]: 2^n * 2^f, f = r - n exactly, 2^f by a polynomial. The
  // result needs erfc only to a few of its own ulps (it is at most 0.2 of a result near 1).
  VecF r = p * t;
  VecF n = round_nearest_v(r);
  VecF f = r - n;
  VecF e = horner_v(f, 1.0f, 6.931471825e-01f, 2.402264774e-01f, 5.550359935e-02f, 9.618506767e-03f, 1.339080394e-03f,
                    1.532597380e-04f);
  return 1.0f - times_pow2_v(e, n);
}

inline VecF erff_v(VecF x) {
  VecF t = (VecF)((VecI32)x & 0x7fffffff);
  VecI32 small = t < 0.9f;  // false for NaN
  if (all_set(small)) return erff_small(x);
  VecF large = (VecF)((VecI32)erff_large(t) | ((VecI32)x & int32_t(0x80000000u)));
  return any_set(small) ? blend_v((VecF)small, erff_small(x), large) : large;
}

}  // namespace nuvec::cpu::NUVEC_ISA
