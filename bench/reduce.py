"""Reduction speed against the machine's bandwidth and the peers, in one run.

    python bench/reduce.py [--threads 2] [--rounds 3]
Prints, per workload, GB/s (the minimum bytes the op must move) for nuvec, NumPy, PyTorch
(at --threads threads) and MLX where installed, and nuvec's share of the machine's bandwidth
(NumPy copies of 64 MB on two threads, read + write, as bench/foundation.py). Each figure is
the median over rounds of medians of repeated runs (the machine is shared); no assertion."""

import argparse
import statistics

import numpy as np

import nuvec as mx
from _common import machine_bandwidth, median_time

N = 4096


def peers(threads):
    out = {}
    try:
        import torch

        torch.set_num_threads(threads)
        out["torch"] = torch
    except ImportError:
        pass
    try:
        import mlx.core as mlx

        out["mlx"] = mlx
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    mx.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, N), dtype=np.float32)
    X = mx.array(x)
    mx.eval(X)
    libs = peers(args.threads)

    def np_softmax(a):
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    rows = [
        (
            "sum_axis0_4096sq",
            x.nbytes,
            lambda: mx.eval(mx.sum(X, axis=0)),
            lambda: x.sum(axis=0),
            lambda t, T: t.sum(T, dim=0),
            lambda m, M: m.eval(m.sum(M, axis=0)),
        ),
        (
            "sum_axis1_4096sq",
            x.nbytes,
            lambda: mx.eval(mx.sum(X, axis=1)),
            lambda: x.sum(axis=1),
            lambda t, T: t.sum(T, dim=1),
            lambda m, M: m.eval(m.sum(M, axis=1)),
        ),
        (
            "sum_all_4096sq",
            x.nbytes,
            lambda: mx.eval(mx.sum(X)),
            lambda: x.sum(),
            lambda t, T: t.sum(T),
            lambda m, M: m.eval(m.sum(M)),
        ),
        (
            "max_axis0_4096sq",
            x.nbytes,
            lambda: mx.eval(mx.max(X, axis=0)),
            lambda: x.max(axis=0),
            lambda t, T: t.amax(T, dim=0),
            lambda m, M: m.eval(m.max(M, axis=0)),
        ),
        (
            "softmax_4096sq",
            2 * x.nbytes,
            lambda: mx.eval(mx.softmax(X, axis=-1)),
            lambda: np_softmax(x),
            lambda t, T: t.softmax(T, dim=-1),
            lambda m, M: m.eval(m.softmax(M, axis=-1)),
        ),
        (
            "logsumexp_4096sq",
            x.nbytes,
            lambda: mx.eval(mx.logsumexp(X, axis=-1)),
            None,
            lambda t, T: t.logsumexp(T, dim=-1),
            lambda m, M: m.eval(m.logsumexp(M, axis=-1)),
        ),
    ]
    T = libs["torch"].from_numpy(x) if "torch" in libs else None
    M = libs["mlx"].array(x) if "mlx" in libs else None
    impls = {
        "nuvec": lambda row: row[2],
        "numpy": lambda row: row[3],
        "torch": lambda row: (lambda: row[4](libs["torch"], T)) if T is not None else None,
        "mlx": lambda row: (lambda: row[5](libs["mlx"], M)) if M is not None else None,
    }
    rates = {(row[0], k): [] for row in rows for k in impls}
    bws = []
    for _ in range(args.rounds):
        bws.append(machine_bandwidth())
        for row in rows:
            for k, get in impls.items():
                f = get(row)
                if f is not None:
                    rates[(row[0], k)].append(row[1] / median_time(f) / 1e9)
    bw = statistics.median(bws)
    print(
        f"machine bandwidth (NumPy copy of 64 MB on 2 threads, read + write): {bw:5.1f} GB/s"
        f"   nuvec threads: {args.threads}"
    )
    print(
        f"{'workload':<18} {'nuvec':>7} {'numpy':>7} {'torch':>7} {'mlx':>7}  GB/s   nuvec/bandwidth"
    )
    for row in rows:
        med = {
            k: statistics.median(rates[(row[0], k)]) if rates[(row[0], k)] else None for k in impls
        }
        cols = " ".join(f"{med[k]:7.1f}" if med[k] is not None else f"{'-':>7}" for k in impls)
        print(f"{row[0]:<18} {cols}         {med['nuvec'] / bw:4.0%}")


if __name__ == "__main__":
    main()
