"""Quantized products: nuvec's quantized_matmul against the machine's read bandwidth and PyTorch,
in one run.

    PYTHONPATH=$PWD/python python bench/quantized.py [--rounds 5]

Rows (medians over interleaved rounds, so drift hits every row alike):
- read bandwidth: nuvec's sum(x, axis=1) of a 4096x4096 float32 (the yardstick's
  `sum_axis1_4096sq`; its 64 MB stay in this VM's 480 MiB L3 between passes), and the memory's
  read bandwidth as STREAM measures it (4 x the last-level cache, 2 threads; bench/_common.py);
- q4 / q8 GEMV: x[1,4096] through 8 distinct 4096x4096 weights (group 64, float32 scales and
  biases; meant to be more than the L3 cache in all), GB/s of packed weights + scales + biases
  read, and that as a share of both read bandwidths (the issue asks >= 80%);
- PyTorch: float32 GEMV (x @ W.T over 4 distinct weights) and its int8 weight-only product
  (torch.ops.aten._weight_int8pack_mm), GB/s of weights read;
- many rows: 64x4096 @ a q4 4096x4096 weight (nuvec), beside PyTorch's float32 64x4096 @
  4096x4096, GFLOP/s.
"""

import argparse
import statistics
import time

import numpy as np

import nuvec as mx
from _common import memory_bandwidth

K = N = 4096
MATS = 8


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def nuvec_rows():
    rng = np.random.default_rng(0)
    a = mx.array(rng.standard_normal((K, N)).astype(np.float32))
    mx.eval(a)
    rows = {
        "nuvec sum(x, axis=1), read bandwidth": (
            lambda: mx.eval(mx.sum(a, axis=1)),
            a.nbytes,
            "GB/s",
        )
    }
    for bits in (4, 8):
        qs = []
        for _ in range(MATS):
            w = mx.array(rng.standard_normal((N, K)).astype(np.float32) * K**-0.5)
            q = mx.quantize(w, 64, bits)
            mx.eval(*q)
            qs.append(q)
        x = mx.array(rng.standard_normal((1, K)).astype(np.float32))
        nbytes = sum(t.nbytes for q in qs for t in q)

        def chain(qs=qs, x=x, bits=bits):
            y = x
            for q in qs:
                y = mx.quantized_matmul(y, *q, group_size=64, bits=bits)
            mx.eval(y)

        rows[f"nuvec q{bits} GEMV 1x4096 @ 8 x 4096x4096 (group 64)"] = (chain, nbytes, "GB/s")
        if bits == 4:
            x64 = mx.array(rng.standard_normal((64, K)).astype(np.float32))
            rows["nuvec q4 64x4096 @ 4096x4096"] = (
                lambda q=qs[0]: mx.eval(mx.quantized_matmul(x64, *q, group_size=64, bits=4)),
                2 * 64 * K * N,
                "GFLOP/s",
            )
    return rows


def torch_rows():
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    ws = [torch.randn(N, K, generator=g) for _ in range(4)]
    x = torch.randn(1, K, generator=g)
    rows = {
        "torch float32 GEMV 1x4096 @ 4 x 4096x4096": (
            lambda: [x @ w.T for w in ws],
            sum(w.nbytes for w in ws),
            "GB/s",
        )
    }
    w8 = [torch.randint(-128, 127, (N, K), dtype=torch.int8, generator=g) for _ in range(MATS)]
    s8 = torch.rand(N, generator=g)
    try:
        torch.ops.aten._weight_int8pack_mm(x, w8[0], s8)
        rows["torch int8 weight-only GEMV (_weight_int8pack_mm), 8 weights"] = (
            lambda: [torch.ops.aten._weight_int8pack_mm(x, w, s8) for w in w8],
            sum(w.nbytes for w in w8) + MATS * s8.nbytes,
            "GB/s",
        )
    except (RuntimeError, AttributeError):
        pass
    x64 = torch.randn(64, K, generator=g)
    rows["torch float32 64x4096 @ 4096x4096"] = (lambda: x64 @ ws[0].T, 2 * 64 * K * N, "GFLOP/s")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    rows = {**nuvec_rows(), **torch_rows()}
    for f, _, _ in rows.values():  # warm up (first-call costs, page faults)
        f(), f()
    times = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, (f, _, _) in rows.items():
            times[name].append(statistics.median(timed(f) for _ in range(args.reps)))
    rate = {name: rows[name][1] / statistics.median(t) / 1e9 for name, t in times.items()}
    bandwidth = rate["nuvec sum(x, axis=1), read bandwidth"]
    memory = statistics.median(memory_bandwidth()[0] for _ in range(3))
    print(
        f"memory read bandwidth (STREAM's rule: 4 x the last-level cache, 2 threads): "
        f"{memory:.1f} GB/s\n"
    )
    print("| row | rate | share of read bandwidth | share of memory read bandwidth |")
    print("|---|---|---|---|")
    for name, (_, _, unit) in rows.items():
        share = (
            f"{rate[name] / bandwidth:.0%} | {rate[name] / memory:.0%}" if unit == "GB/s" else " |"
        )
        print(f"| {name} | {rate[name]:.1f} {unit} | {share} |")


if __name__ == "__main__":
    main()
