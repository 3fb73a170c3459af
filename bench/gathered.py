"""Gathered products and the Hadamard transform: nuvec against PyTorch in one run.

    PYTHONPATH=python python bench/gathered.py

- gather_mm in a mixture-of-experts layer (tokens x top-k of E experts, D x D expert weights),
  unsorted (x (T, 1, 1, D), indices (T, k)) and sorted (rows ordered by expert, as SwitchGLU
  does for many tokens); PyTorch: a loop over the experts, each a matmul of its tokens' rows.
- hadamard_transform of R rows of N; PyTorch has no Hadamard transform: x @ H with the N x N
  matrix (scaled) built beforehand.

The frameworks alternate round by round (a few timed calls each, after a warm-up call), and each
row reports the median over all rounds, so load that comes and goes on a shared machine falls on
both; read the ratios.
"""

import argparse
import os
import sys

import numpy as np

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_time  # noqa: E402


def interleaved(fns, rounds):
    """Median seconds per call of each fn, the fns taking turns for `rounds` rounds."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for f, t in zip(fns, times):
            t.append(median_time(f, reps=3, warmup=1))
    return [float(np.median(t)) for t in times]


def moe_inputs(tokens, experts, top_k, dim, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, dim)).astype(np.float32)
    w = (rng.standard_normal((experts, dim, dim)) / np.sqrt(dim)).astype(np.float32)
    idx = np.stack([rng.permutation(experts)[:top_k] for _ in range(tokens)]).astype(np.int64)
    return x, w, idx


def nuvec_moe(x, w, idx, sorted_rows):
    X, W = mx.array(x), mx.array(w)
    if sorted_rows:
        flat = idx.reshape(-1)
        order = np.argsort(flat, kind="stable")
        xs = X[mx.array((order // idx.shape[1]).astype(np.uint32))][:, None, :]
        rhs = mx.array(flat[order].astype(np.uint32))
        mx.eval(xs, rhs)
        return lambda: mx.eval(mx.gather_mm(xs, W, None, rhs, sorted_indices=True))
    xe, I = X[:, None, None, :], mx.array(idx.astype(np.uint32))
    mx.eval(xe, I)
    return lambda: mx.eval(mx.gather_mm(xe, W, None, I))


def torch_moe(torch, x, w, idx):
    X, W, I = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(idx)
    flat = I.reshape(-1)
    tok = torch.arange(x.shape[0]).repeat_interleave(idx.shape[1])

    def run():
        out = torch.empty(flat.shape[0], w.shape[2])
        for e in range(w.shape[0]):
            pos = (flat == e).nonzero().squeeze(1)
            if pos.numel():
                out[pos] = X[tok[pos]] @ W[e]
        return out

    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7, help="rounds of turns")
    args = ap.parse_args()
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    rows = []
    for tokens, experts, top_k, dim in ((64, 8, 2, 1024), (1, 8, 2, 1024), (256, 8, 2, 1024)):
        x, w, idx = moe_inputs(tokens, experts, top_k, dim)
        fns = [nuvec_moe(x, w, idx, False), nuvec_moe(x, w, idx, True)]
        fns += [torch_moe(torch, x, w, idx)] if torch else []
        t = interleaved(fns, args.reps) + ([] if torch else [float("nan")])
        for sorted_rows in (False, True):
            order = "sorted" if sorted_rows else "unsorted"
            name = f"gather_mm {tokens} tokens x {top_k} of {experts}, {dim}x{dim}, {order}"
            rows.append((name, t[sorted_rows], t[2]))
    for r, n in ((4096, 4096), (4096, 28 * 128), (64, 4096)):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((r, n)).astype(np.float32)
        X = mx.array(x)
        mx.eval(X)
        fns = [lambda: mx.eval(mx.hadamard_transform(X))]
        if torch:
            H = torch.from_numpy(
                np.array(mx.hadamard_transform(mx.eye(n, dtype=mx.float32))).T.copy()
            )
            Xt = torch.from_numpy(x)
            fns.append(lambda: Xt @ H.T)
        t = interleaved(fns, args.reps) + ([] if torch else [float("nan")])
        rows.append((f"hadamard_transform {r} x {n} float32 (torch: x @ H)", t[0], t[1]))
    print("| case | nuvec ms | PyTorch ms | PyTorch / nuvec |")
    print("|---|---:|---:|---:|")
    for name, t, tt in rows:
        print(f"| {name} | {t * 1e3:.3f} | {tt * 1e3:.3f} | {tt / t:.2f} |")


if __name__ == "__main__":
    main()
