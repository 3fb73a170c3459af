"""nuvec.fast's row kernels against the machine's memory bandwidth and PyTorch, in one run.

Rows: rms_norm, layer_norm and add_rms_norm over (4096, 4096) float32, rope over
(1, 32, 2048, 128) float32 (non-traditional, base 10000, all 128 features), norm_rope writing
a (1, 32, 2048, 128) block into a 4096-row cache, and cross_entropy over (512, 32000) float32
logits. "GB/s" is the bytes a single pass must move (each input read once, each output written
once; norm_rope's cache is updated in place) over the time; "% of bw" divides it by the
bandwidth measured in the same rounds:
the best of nuvec's `a = a + 1` on 16M float32 (donated: in place) and PyTorch's `a.add_(1)`
(64 MB, which this VM's 480 MiB L3 holds between passes); "% of memory" divides it by the
memory's, measured as STREAM does (read + write in place over 4 x the last-level cache).
PyTorch (2 threads) runs a hand-written rms_norm (x * rsqrt(mean(x^2) + eps) * w),
torch.nn.functional.rms_norm and layer_norm where present, and a hand-written rope over
cached cos / sin tables. Rounds interleave every row; each row's time per round is a median
of repetitions, its rate is divided by the bandwidth of the same round, and the table shows the
median over rounds and the best round (on a shared machine other work slows rows unevenly).

    PYTHONPATH=$PWD/python python bench/fast_norms.py [--rounds 5]
"""

import argparse
import statistics
import sys

import numpy as np

import nuvec as mx

sys.path.insert(0, __import__("os").path.dirname(__file__))
from _common import median_time, memory_bandwidth  # noqa: E402

N, D = 4096, 4096
B, H, T, HD = 1, 32, 2048, 128
EPS = 1e-5
MB = 2**20


def nuvec_rows(rng):
    x = mx.array(rng.standard_normal((N, D), dtype=np.float32))
    r = mx.array(rng.standard_normal((N, D), dtype=np.float32))
    w = mx.array(rng.standard_normal(D, dtype=np.float32))
    b = mx.array(rng.standard_normal(D, dtype=np.float32))
    q = mx.array(rng.standard_normal((B, H, T, HD), dtype=np.float32))
    wk = mx.array(rng.standard_normal(HD, dtype=np.float32))
    logits = mx.array(rng.standard_normal((512, 32000), dtype=np.float32))
    targets = mx.array(rng.integers(0, 32000, 512).astype(np.int32))
    state = {"a": mx.array(rng.standard_normal(16 * MB, dtype=np.float32))}
    state["cache"] = mx.zeros((B, H, 2 * T, HD))
    mx.eval(x, r, w, b, q, wk, logits, targets, state["a"], state["cache"])
    nbytes = N * D * 4

    def bump():
        state["a"] = state["a"] + 1  # the old array is dropped: its buffer is donated
        mx.eval(state["a"])

    def norm_rope():
        y, state["cache"] = mx.fast.norm_rope(q, wk, EPS, state["cache"], T, dims=HD)
        mx.eval(y, state["cache"])

    return {
        "bandwidth: nuvec a = a + 1 (16M f32, in place)": (bump, 2 * 64 * MB),
        "rms_norm (4096, 4096) f32: nuvec fast": (
            lambda: mx.eval(mx.fast.rms_norm(x, w, EPS)),
            2 * nbytes,
        ),
        "layer_norm (4096, 4096) f32: nuvec fast": (
            lambda: mx.eval(mx.fast.layer_norm(x, w, b, EPS)),
            2 * nbytes,
        ),
        "add_rms_norm (4096, 4096) f32: nuvec fast": (
            lambda: mx.eval(mx.fast.add_rms_norm(x, r, w, EPS)),
            4 * nbytes,
        ),
        "rope (1, 32, 2048, 128) f32: nuvec fast": (
            lambda: mx.eval(
                mx.fast.rope(q, HD, traditional=False, base=10000.0, scale=1.0, offset=0)
            ),
            2 * q.nbytes,
        ),
        "norm_rope (1, 32, 2048, 128) f32 into a cache: nuvec fast": (norm_rope, 3 * q.nbytes),
        "cross_entropy (512, 32000) f32: nuvec fast": (
            lambda: mx.eval(mx.fast.cross_entropy(logits, targets)),
            logits.nbytes,
        ),
    }


def torch_rows(rng):
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(2)
    x = torch.from_numpy(rng.standard_normal((N, D), dtype=np.float32))
    w = torch.from_numpy(rng.standard_normal(D, dtype=np.float32))
    b = torch.from_numpy(rng.standard_normal(D, dtype=np.float32))
    q = torch.from_numpy(rng.standard_normal((B, H, T, HD), dtype=np.float32))
    a = torch.from_numpy(rng.standard_normal(16 * MB, dtype=np.float32))
    half = HD // 2
    inv = 10000.0 ** (-torch.arange(half, dtype=torch.float32) / half)
    theta = torch.arange(T, dtype=torch.float32)[:, None] * inv
    cos, sin = theta.cos(), theta.sin()  # cached, as model code caches them
    nbytes = N * D * 4

    def rope():
        x1, x2 = q[..., :half], q[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)

    rows = {
        "bandwidth: torch a.add_(1) (16M f32)": (lambda: a.add_(1), 2 * 64 * MB),
        "rms_norm (4096, 4096) f32: torch hand-written": (
            lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w,
            2 * nbytes,
        ),
        "layer_norm (4096, 4096) f32: torch F.layer_norm": (
            lambda: torch.nn.functional.layer_norm(x, (D,), w, b, EPS),
            2 * nbytes,
        ),
        "rope (1, 32, 2048, 128) f32: torch hand-written": (rope, 2 * q.nbytes),
    }
    if hasattr(torch.nn.functional, "rms_norm"):
        rows["rms_norm (4096, 4096) f32: torch F.rms_norm"] = (
            lambda: torch.nn.functional.rms_norm(x, (D,), w, EPS),
            2 * nbytes,
        )
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = {**nuvec_rows(rng), **torch_rows(rng)}
    times = {k: [] for k in rows}
    memory = []  # STREAM's rule (bench/_common.py): read + write in place beyond the cache
    for _ in range(args.rounds):
        for k, (f, _) in rows.items():
            times[k].append(median_time(f, reps=args.reps, warmup=2))
        memory.append(memory_bandwidth()[1])
    rates = {k: [rows[k][1] / t / 1e9 for t in ts] for k, ts in times.items()}
    bws = [max(rates[k][r] for k in rates if k.startswith("bandwidth")) for r in range(args.rounds)]
    # Each round's rate over the same round's bandwidth: noise from other work hits both.
    pct = {k: [100 * v / bw for v, bw in zip(rs, bws)] for k, rs in rates.items()}
    mem = {k: [100 * v / bw for v, bw in zip(rs, memory)] for k, rs in rates.items()}
    print(
        f"kernel build: {mx._core._cpu_isa()}; bandwidth (best copy-like row per round): median "
        f"{statistics.median(bws):.1f} GB/s, best {max(bws):.1f}; memory (read + write in place, "
        f"4 x the last-level cache, 2 threads): median {statistics.median(memory):.1f} GB/s; "
        f"{args.rounds} rounds of {args.reps} repetitions\n"
    )
    print(
        "| row | median ms | median GB/s | % of bw (median) | % of bw (best round) "
        "| % of memory (median) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for k, ts in times.items():
        print(
            f"| {k} | {statistics.median(ts) * 1e3:.2f} | {statistics.median(rates[k]):.1f} "
            f"| {statistics.median(pct[k]):.0f}% | {max(pct[k]):.0f}% | {statistics.median(mem[k]):.0f}% |"
        )


if __name__ == "__main__":
    main()
