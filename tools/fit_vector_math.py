"""Fits the coefficients of nuvec's own float32 erf (csrc/backend/cpu/simd/erf.h) and sin
(simd/expsin.h) and reports their error.

    python tools/fit_vector_math.py

Each polynomial is a weighted minimax fit (Lawson's reweighted least squares on a dense grid, in
float64), its coefficients then rounded to float32 one at a time from the lowest order, the
others refitted after each rounding so they absorb its error.

erf, in two pieces:

- |x| < 0.9: erf(x) = x + x * Q(x^2), Q of degree 5 fitting erf(x)/x - 1 (the final fused
  multiply-add rounds once, close to x).
- 0.9 <= t < 3.95: erf(t) = 1 - exp(t * P(t) - t), P of degree 6 fitting (log(erfc(t)) + t) / t,
  weighted by erfc(t) * t: the error a result near 1 takes from P. The last operation's rounding,
  half an ulp of the exponent, reaches the result scaled by erfc(t) <= 0.2.

sin(x) = (-1)^q sin(r) with q the integer nearest x / pi and r = x - q * pi in [-pi/2, pi/2]
(pi as four floats whose products with q are exact): sin(r) = r + r^3 * S(r^2), S of degree 4,
weighted for the relative error of sin(r).

The report evaluates each in float32 as the kernels do against float64 (SciPy's erf, NumPy's
sin); tests/test_vector_math_accuracy.py holds the real code to its bounds.
"""

import numpy as np
from scipy.special import erf, erfc

F32 = np.float32
SPLIT, LAST = 0.9, 3.95
POW2_DEGREE = 6
# pi as four floats (4 x the pi/4 parts of Cephes' sinf): q * part is exact for |q| < 2^12.
PI_PARTS = (3.140625, 9.675025939941406e-4, 1.5099580252808664e-07, -3.4302490200117637e-15)


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


def fit_sin():
    r = np.linspace(1e-6, np.pi / 2 * 1.001, 40001)  # |r| passes pi/2 where q rounds off by one
    z = r * r
    coefs = fit_float32(z, (np.sin(r) / r - 1) / z, z * r / np.sin(r), 4)
    rng = np.random.default_rng(1)
    x = rounded(np.concatenate([rng.uniform(-8192, 8192, 1 << 21), rng.uniform(-4, 4, 1 << 20)]))
    ax = np.abs(x)
    q = np.round(rounded(ax * rounded(1 / np.pi)))
    red = ax
    for part in PI_PARTS:
        red = rounded(red - q * part)
    zz = rounded(red * red)
    got = (
        np.sign(x)
        * np.where(q % 2 == 0, 1, -1)
        * rounded(rounded(red * zz) * horner(coefs, zz) + red)
    )
    want = np.sin(x)
    ulps = np.abs(got - want) / np.spacing(want.astype(F32)).astype(np.float64)
    print("S:", ", ".join(f"{c:.9e}f" for c in coefs))
    print(f"sin: max error {ulps.max():.3f} ulp over random floats of [-8192, 8192] and [-4, 4]")


def main():
    fit_sin()
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
        f"erf: max error {ulps[small].max():.3f} ulp below {SPLIT}, {ulps[~small].max():.3f} above"
    )


if __name__ == "__main__":
    main()
