"""Fits the float32 erf's coefficients in csrc/backend/cpu/simd/erf.h and reports their error.

    python tools/fit_erf.py

Two pieces, each a weighted minimax fit (Lawson's reweighted least squares on a dense grid, in
float64), its coefficients then rounded to float32 one at a time from the lowest order, the
others refitted after each rounding so they absorb its error:

- |x| < 0.9: erf(x) = x + x * Q(x^2), Q of degree 5 fitting erf(x)/x - 1 (the final fused
  multiply-add rounds once, close to x).
- 0.9 <= t < 3.95: erf(t) = 1 - exp(t * P(t) - t), P of degree 6 fitting (log(erfc(t)) + t) / t,
  weighted by erfc(t) * t: the error a result near 1 takes from P. The last operation's rounding,
  half an ulp of the exponent, reaches the result scaled by erfc(t) <= 0.2.

The report evaluates both in float32 as the kernel does (an exp correctly rounded) against
SciPy's float64 erf: the kernel's tests (tests/test_vector_math_accuracy.py) hold the real code to
1.5 ulp with nuvec's own exp.
"""

import numpy as np
from scipy.special import erf, erfc

F32 = np.float32
SPLIT, LAST = 0.9, 3.95
POW2_DEGREE = 6


def fit(xs, ys, weight, degree, fixed=None, rounds=100):
    """Weighted minimax coefficients (lowest order first) with those in `fixed` held."""
    fixed = fixed or {}
    basis = np.vander(xs, degree + 1, increasing=True)
    rest = ys - sum(basis[:, j] * c for j, c in fixed.items())
    free = [j for j in range(degree + 1) if j not in fixed]
    a = basis[:, free] * weight[:, None]
    b = rest * weight
    lw = np.full(len(xs), 1.0 / len(xs))
    for _ in range(rounds):
        sw = np.sqrt(lw)
        c, *_ = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)
        err = np.abs(a @ c - b)
        lw = lw * err
        lw /= lw.sum()
    return dict(zip(free, c))


def fit_float32(xs, ys, weight, degree):
    fixed = {}
    for j in range(degree + 1):
        fixed[j] = float(F32(fit(xs, ys, weight, degree, fixed)[j]))
    return [fixed[j] for j in range(degree + 1)]


def rounded(v):
    return np.asarray(v, np.float64).astype(F32).astype(np.float64)


def horner(coefs, x):
    p = np.full_like(x, coefs[-1])
    for c in coefs[-2::-1]:
        p = rounded(p * x + c)  # a fused multiply-add: one rounding
    return p


def main():
    xs = np.linspace(0, SPLIT, 20001)
    s = xs * xs
    q = np.where(xs > 0, erf(xs) / np.where(xs > 0, xs, 1) - 1, 2 / np.sqrt(np.pi) - 1)
    core = fit_float32(s, q, np.ones_like(s), 5)
    ts = np.linspace(SPLIT, LAST, 40001)
    tail = fit_float32(ts, np.log2(erfc(ts)) / ts, erfc(ts) * ts, 6)
    fs = np.linspace(-0.5, 0.5, 20001)
    pow2 = fit_float32(fs, 2.0**fs, 2.0**-fs, POW2_DEGREE)

    x = rounded(np.linspace(0, LAST, 400001)[1:])
    small = x < SPLIT
    got = np.where(small, rounded(x * horner(core, rounded(x * x)) + x), 0.0)
    r = rounded(horner(tail, x) * x)
    n = np.round(r)
    e = rounded(horner(pow2, r - n) * 2.0**n)
    got = np.where(small, got, rounded(1 - e))
    want = erf(x)
    ulps = np.abs(got - want) / np.spacing(want.astype(F32)).astype(np.float64)
    print("Q:", ", ".join(f"{c:.9e}f" for c in core))
    print("P:", ", ".join(f"{c:.9e}f" for c in tail))
    print("E:", ", ".join(f"{c:.9e}f" for c in pow2))
    print(
        f"max error {ulps[small].max():.3f} ulp below {SPLIT}, {ulps[~small].max():.3f} ulp above"
    )


if __name__ == "__main__":
    main()
