"""Foundation speed checks in one run: op-recording overhead, element-wise bandwidth against
the machine's (a NumPy copy of the same bytes), NumPy and nuvec side by side.

    python bench/foundation.py
Medians of repeated runs; no assertion, figures for bench/RESULTS.md."""

import statistics
import time

import numpy as np

import nuvec as mx
from _common import machine_bandwidth, median_time

N = 16 * 2**20


def main():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)
    A, B = mx.array(a), mx.array(b)
    mx.eval(A, B)

    bw = machine_bandwidth()
    print(f"machine bandwidth (NumPy copy of 64 MB on 2 threads, read+write): {bw:6.1f} GB/s")

    rows = [
        ("add_f32_16M", 12 * N, lambda: np.add(a, b), lambda: mx.eval(mx.add(A, B))),
        (
            "unary_chain_16M",
            8 * N,
            lambda: np.exp(np.sin(a)) * 2 + 1,
            lambda: mx.eval(mx.exp(mx.sin(A)) * 2 + 1),
        ),
    ]
    for name, nbytes, f_np, f_nv in rows:
        t_np, t_nv = median_time(f_np), median_time(f_nv)
        print(
            f"{name:<18} numpy {nbytes / t_np / 1e9:6.1f} GB/s   nuvec {nbytes / t_nv / 1e9:6.1f} GB/s"
            f"   nuvec/bandwidth {nbytes / t_nv / 1e9 / bw:5.0%}"
        )

    x, one = mx.array(np.float32(0)), mx.array(np.float32(1))
    mx.eval(x, one)
    n = 100_000

    def record():
        y = x
        for _ in range(n):
            y = mx.add(y, one)
        return y

    def record_once():
        t0 = time.perf_counter()
        y = record()
        elapsed = time.perf_counter() - t0
        del y
        return elapsed

    t_record = statistics.median(record_once() for _ in range(5)) / n

    def record_eval():
        for _ in range(n // 10):
            mx.eval(mx.add(x, one))

    t_small = median_time(record_eval, reps=5, warmup=1) / (n // 10)
    print(
        f"record one lazy op: {t_record * 1e6:5.2f} us   record + eval one small op: {t_small * 1e6:5.2f} us"
    )


if __name__ == "__main__":
    main()
