"""nuvec's bandwidth-bound yardstick rows against the machine's bandwidth, in one run.

    python bench/bandwidth_rows.py
Bytes are counted as the yardstick counts them (the minimum the op must move); the machine's
bandwidth is NumPy copies of 64 MB on two threads (read + write), measured first and last."""

import numpy as np

import nuvec as mx
from _common import machine_bandwidth, median_time

BIG, MAT = 16 * 2**20, 4096


def main():
    rng = np.random.default_rng(0)
    a, b = (mx.array(rng.standard_normal(BIG, dtype=np.float32)) for _ in range(2))
    x = mx.array(rng.standard_normal((MAT, MAT), dtype=np.float32))
    mx.eval(a, b, x)
    m = 4 * MAT * MAT
    rows = [
        ("add_f32_16M", 12 * BIG, lambda: mx.add(a, b)),
        ("sum_axis0_4096sq", m, lambda: mx.sum(x, axis=0)),
        ("sum_axis1_4096sq", m, lambda: mx.sum(x, axis=-1)),
        ("softmax_4096sq", 2 * m, lambda: mx.softmax(x, axis=-1)),
        ("contiguous_T_4096sq", 2 * m, lambda: mx.contiguous(x.T)),
        ("transpose_add0_4096sq", 2 * m, lambda: x.T + 0),
        ("cumsum_axis1_4096sq", 2 * m, lambda: mx.cumsum(x, axis=1)),
    ]
    before = machine_bandwidth()
    rates = {name: nbytes / median_time(lambda f=f: mx.eval(f())) / 1e9 for name, nbytes, f in rows}
    after = machine_bandwidth()
    bw = (before + after) / 2
    print(f"machine bandwidth (NumPy copy, 2 threads): {before:.1f} before, {after:.1f} after GB/s")
    for name, rate in rates.items():
        print(f"{name:<24} {rate:6.1f} GB/s  {rate / bw:5.0%} of the bandwidth")


if __name__ == "__main__":
    main()
