"""The Mandelbrot set on a 1200 x 800 complex grid, computed lazily with nuvec's element-wise
ops, checked point for point against NumPy and timed against it.

    python -m nuvec.examples.demo
"""

import time

import numpy as np

import nuvec as mx

WIDTH, HEIGHT, STEPS = 1200, 800, 48
CHARS = " .:-=+*#%@"


def grid(xp, dtype):
    re = xp.linspace(-2.2, 0.8, WIDTH, dtype=dtype)
    im = xp.linspace(-1.2, 1.2, HEIGHT, dtype=dtype)
    return re, im


def escape_counts_nuvec():
    re, im = grid(mx, mx.float32)
    c = mx.reshape(re, (1, WIDTH)) + mx.reshape(im, (HEIGHT, 1)) * 1j
    z = mx.zeros((HEIGHT, WIDTH), dtype=mx.complex64)
    counts = mx.zeros((HEIGHT, WIDTH), dtype=mx.int32)
    for _ in range(STEPS):
        inside = mx.abs(z) <= 2.0
        z = mx.where(inside, z * z + c, z)
        counts = counts + inside
        mx.eval(z, counts)  # one evaluation per step keeps the graph small
    return counts


def escape_counts_numpy():
    re, im = grid(np, np.float32)
    c = (re[None, :] + im[:, None] * np.complex64(1j)).astype(np.complex64)
    z = np.zeros((HEIGHT, WIDTH), np.complex64)
    counts = np.zeros((HEIGHT, WIDTH), np.int32)
    for _ in range(STEPS):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        counts += inside
    return counts


def main():
    t0 = time.perf_counter()
    counts = escape_counts_nuvec()
    t_nuvec = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference = escape_counts_numpy()
    t_numpy = time.perf_counter() - t0

    ours = np.asarray(counts)
    agree = float(np.mean(ours == reference))
    rows = ours[:: HEIGHT // 24, :: WIDTH // 78]
    for row in rows:
        print("".join(CHARS[min(int(v) * len(CHARS) // (STEPS + 1), len(CHARS) - 1)] for v in row))
    print(
        f"\n{HEIGHT}x{WIDTH} points, {STEPS} steps: nuvec {t_nuvec:.3f} s, NumPy {t_numpy:.3f} s "
        f"({t_numpy / t_nuvec:.1f}x), {agree:.4%} of points agree with NumPy"
    )
    print(f"points inside the set after {STEPS} steps: {int((ours == STEPS).sum())}")
    if agree < 0.999:
        raise SystemExit("nuvec and NumPy disagree")


if __name__ == "__main__":
    main()
