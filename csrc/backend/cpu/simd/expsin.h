// float32 exp and sin, vectorised in-house: libmvec's take ~2 cycles per element on the machines
// here, which bounds any chain that uses them (exp(sin(x)) * 2 + 1 ran at 40% of the memory
// bandwidth). These are Cody-Waite reductions with minimax polynomials (exp: Cephes' coefficients;
// sin: one odd polynomial over half a period, tools/fit_vector_math.py's). Accuracy: within 1 ulp
// of the correctly rounded result for exp, within 2 ulp for sin on |x| < 8192 (with fused multiply-
// adds) (larger arguments take the C library's sinf lane by lane). Every lane is computed alone, so
// a result never depends on its neighbours or its position (tails run through the same code,
// padded).
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/cpu/simd/fma.h"
#include "backend/cpu/simd/simd.h"

namespace nuvec::cpu::NUVEC_ISA {

typedef int32_t VecI32 __attribute__((vector_size(kVecBytes)));

// Round to the nearest integer (ties to even), for |v| < 2^22: the magic-number trick (kept by
// the compiler: the build does not allow reassociation).
inline VecF round_v(VecF v) {
  const VecF magic = VecF{} + 12582912.0f;  // 1.5 * 2^23
  return (v + magic) - magic;
}

// c0 + x * (c1 + x * (c2 + ...)): Horner's rule, one fused multiply-add a coefficient.
template <class... C> inline VecF horner_v(VecF x, float c0, C... rest) {
  if constexpr (sizeof...(rest) == 0)
    return VecF{} + c0;
  else
    return fmadd(horner_v(x, rest...), x, VecF{} + c0);
}

// Round to the nearest integer, ties to even (one instruction on AVX-512; else for |v| < 2^22).
inline VecF round_nearest_v(VecF v) {
#if defined(__AVX512F__)
  return VecF(_mm512_roundscale_ps(__m512(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  return round_v(v);
#endif
}

// p * 2^n for an integral n from -150 to 128, rounded once into the subnormals too.
inline VecF times_pow2_v(VecF p, VecF n) {
#if defined(__AVX512F__)
  return VecF(_mm512_scalef_ps(__m512(p), __m512(n)));
#else
  // As two powers of two, so n never wraps the exponent field.
  VecI32 ni = __builtin_convertvector(n, VecI32);
  VecI32 half = ni >> 1;
  return p * (VecF)((half + 127) << 23) * (VecF)((ni - half + 127) << 23);
#endif
}

// Whether every lane of a comparison's mask is set (one instruction, not a lane-by-lane walk).
inline bool all_set(VecI32 mask) {
#if defined(__AVX512F__)
  return _mm512_cmpeq_epi32_mask((__m512i)mask, _mm512_setzero_si512()) == 0;
#elif defined(__AVX2__)
  return _mm256_movemask_ps((__m256)mask) == 0xff;
#else
  bool all = true;
  for (int l = 0; l < kLanesF; ++l) all &= mask[l] != 0;
  return all;
#endif
}

// Whether any lane of a comparison's mask is set.
inline bool any_set(VecI32 mask) {
#if defined(__AVX512F__)
  return _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask) != 0;
#elif defined(__AVX2__)
  return _mm256_movemask_ps((__m256)mask) != 0;
#else
  bool any = false;
  for (int l = 0; l < kLanesF; ++l) any |= mask[l] != 0;
  return any;
#endif
}

// Lane-wise a where the mask's sign bit is set, else b (one blend instruction).
inline VecF blend_v(VecF mask, VecF a, VecF b) {
#if defined(__AVX512F__)
  return (VecF)_mm512_mask_blend_ps(_mm512_movepi32_mask((__m512i)mask), (__m512)b, (__m512)a);
#elif defined(__AVX2__)
  return (VecF)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)mask);
#else
  VecI32 m = (VecI32)mask >> 31;
  return (VecF)((m & (VecI32)a) | (~m & (VecI32)b));
#endif
}

// max(lo, x) and min(hi, x) that keep a NaN x (the x86 instructions return their second operand
// when either is NaN).
inline VecF clamp_v(VecF x, float lo, float hi) {
#if defined(__AVX512F__)
  return (VecF)_mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), (__m512)x));
#elif defined(__AVX2__)
  return (VecF)_mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), (__m256)x));
#else
  VecF y = x;
  for (int l = 0; l < kLanesF; ++l) y[l] = x[l] < lo ? lo : x[l] > hi ? hi : x[l];
  return y;
#endif
}

// exp(x) by `exp` (nuvec's below, or libmvec's), with the lanes below -104 (a mask's -inf among
// them) set to +0 without computing them: exp is +0 there in both (the true value is under half
// the least subnormal), but getting there goes through subnormal arithmetic, which this processor
// runs in microcode: a softmax row of 49152 mostly masked logits took 338 us against 29 us.
template <class F> inline VecF exp_or_zero(VecF x, F exp) {
#if defined(__AVX512F__)
  const __mmask16 kept = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-104.0f), _CMP_NLT_UQ);  // NaN kept
  if (kept == 0xFFFF) return exp(x);
  return (VecF)_mm512_maskz_mov_ps(kept, (__m512)exp((VecF)_mm512_maskz_mov_ps(kept, (__m512)x)));
#else
  const VecI32 under = (VecI32)(x < -104.0f);
  if (!any_set(under)) return exp(x);
  return blend_v((VecF)under, VecF{}, exp(blend_v((VecF)under, VecF{}, x)));
#endif
}

inline VecF expf_in_range(VecF x) {
  // Past the bounds the result is 2^128 * p (inf) or 2^-150 * p (0) by itself, so clamping is
  // all the range handling there is; a NaN passes through the arithmetic.
  VecF xc = clamp_v(x, -104.0f, 89.0f);
  VecF n = round_nearest_v(xc * 1.44269504088896341f);
  VecF r = fmadd(n, VecF{} - 0.693359375f, xc);
  r = fmadd(n, VecF{} + 2.12194440e-4f, r);
  VecF p = horner_v(r, 5.0000001201e-1f, 1.6666665459e-1f, 4.1665795894e-2f, 8.3334519073e-3f, 1.3981999507e-3f,
                    1.9875691500e-4f);
  p = fmadd(p, r * r, r + 1.0f);
  return times_pow2_v(p, n);
}

inline VecF expf_v(VecF x) { return exp_or_zero(x, expf_in_range); }

// exp through libmvec where the build has it (else the C library lane by lane), whose bits
// softmax, logsumexp and cross_entropy keep: for lanes known to be at least -104, then any lanes
// (those below -104 as exp_or_zero).
inline VecF expf_mvec_in_range(VecF v) {
#ifdef NUVEC_HAS_VECTOR_MATH
  return NUVEC_MVEC(exp)(v);
#else
  for (int l = 0; l < kLanesF; ++l) v[l] = std::exp(v[l]);
  return v;
#endif
}
inline VecF expf_mvec(VecF x) { return exp_or_zero(x, expf_mvec_in_range); }

// Lanes of x at or past 8192 in magnitude (or NaN, or infinite) take the C library's sinf, out of
// line: inlined, its lane-by-lane calls make the common path keep its vectors on the stack.
[[gnu::noinline]] inline VecF sinf_large_lanes(VecF x, VecF s, VecI32 small) {
  for (int l = 0; l < kLanesF; ++l)
    if (small[l] == 0) s[l] = std::sin(x[l]);
  return s;
}

inline VecF sinf_v(VecF x) {
  // sin(x) = +-sin(r), r = |x| - q * pi in [-pi/2, pi/2] with q the integer nearest |x| / pi (the
  // magic number's add leaves it in the low mantissa bits: bit 0 is its parity, the sign's flip).
  VecF ax = (VecF)((VecI32)x & 0x7fffffff);
  VecF qm = fmadd(ax, VecF{} + 0.318309886183790672f, VecF{} + 12582912.0f);
  VecF q = qm - 12582912.0f;
  // pi as four floats (their sum is pi to 2e-23): with fused products each term is exact, so the
  // reduced argument keeps its accuracy up to |x| = 8192.
  VecF r = fmadd(q, VecF{} - 3.140625f, ax);
  r = fmadd(q, VecF{} - 9.675025939941406e-4f, r);
  r = fmadd(q, VecF{} - 1.5099580252808664e-07f, r);
  r = fmadd(q, VecF{} + 3.4302490200117637e-15f, r);
  // sin(r) = r + r^3 * S(r^2), S fitted by tools/fit_vector_math.py.
  VecF z = r * r;
  VecF s = horner_v(z, -1.666666716e-01f, 8.333350532e-03f, -1.984309347e-04f, 2.762704980e-06f, -2.550259559e-08f);
  s = fmadd(r * z, s, r);
  VecI32 sign = (((VecI32)qm << 31) ^ (VecI32)x) & int32_t(0x80000000u);  // odd q, and odd symmetry
  s = (VecF)((VecI32)s ^ sign);
  VecI32 small = ax < 8192.0f;  // false for NaN and infinities too
  return all_set(small) ? s : sinf_large_lanes(x, s, small);
}

}  // namespace nuvec::cpu::NUVEC_ISA
