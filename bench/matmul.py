"""Matrix-product speed: nuvec against NumPy (OpenBLAS) and PyTorch in one run, and against the
machine's own ceilings (float32 FMA peak and memory read bandwidth, from bench/peak.c).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH=... python bench/matmul.py

(unsetting those two gives OpenBLAS its best kernel). Every row runs the frameworks in turn, a few reps
each with a pause between them, and prints medians. The matrix-vector rows cycle through 4
distinct weight matrices, so the weights come from memory, not from the 32 MiB L3.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import nuvec as mx

HERE = os.path.dirname(os.path.abspath(__file__))


def machine_peaks(threads):
    """(float32 FMA GFLOP/s, read GB/s) from bench/peak.c."""
    exe = os.path.join(tempfile.gettempdir(), "nuvec_peak")
    subprocess.run(
        ["gcc", "-O2", "-mavx512f", "-mfma", "-pthread", os.path.join(HERE, "peak.c"), "-o", exe],
        check=True,
    )
    # The best of 5 runs: other work on the machine only ever lowers a ceiling.
    run = lambda mode: max(
        float(
            subprocess.run(
                [exe, mode, str(threads)], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    )
    return run("fma"), run("read")


def timed(fns, rounds, min_s):
    """Median seconds per call of each fn. Each round runs every fn a few times in turn, after a
    pause: OpenBLAS's and OpenMP's worker threads spin for a while after a call, which would slow
    whichever framework runs next on a 2-core machine."""
    times = [[] for _ in fns]
    start = time.perf_counter()
    done = 0
    while done < rounds or time.perf_counter() - start < min_s * len(fns):
        for f, t in zip(fns, times):
            time.sleep(0.3)
            f()  # warm up after the pause
            for _ in range(3):
                t0 = time.perf_counter()
                f()
                t.append(time.perf_counter() - t0)
        done += 1
        if time.perf_counter() - start > 10 * min_s * len(fns) and done >= 2:
            break
    return [statistics.median(t) for t in times]


def frameworks(a_np, b_list, bf16, wt):
    """Callables computing a @ b[i] (cycling over b_list) per framework; with `wt`, b_list holds
    weights W (n x k, contiguous along k) and the product is a @ W.T, a linear layer's layout."""
    out = {}
    counter = {"i": 0}

    def pick(xs):
        counter["i"] = (counter["i"] + 1) % len(xs)
        return xs[counter["i"]]

    dt = mx.bfloat16 if bf16 else mx.float32
    a = mx.array(a_np).astype(dt)
    bs = [mx.array(b).astype(dt) for b in b_list]
    mx.eval(a, *bs)
    out["nuvec"] = (
        (lambda: mx.eval(mx.matmul(a, pick(bs).T)))
        if wt
        else (lambda: mx.eval(mx.matmul(a, pick(bs))))
    )
    if not bf16:
        bn = [np.ascontiguousarray(b) for b in b_list]
        out["numpy"] = (
            (lambda: np.matmul(a_np, pick(bn).T)) if wt else (lambda: np.matmul(a_np, pick(bn)))
        )
    try:
        import torch

        tdt = torch.bfloat16 if bf16 else torch.float32
        ta = torch.from_numpy(a_np).to(tdt)
        tb = [torch.from_numpy(b).to(tdt) for b in b_list]
        out["torch"] = (
            (lambda: torch.matmul(ta, pick(tb).T)) if wt else (lambda: torch.matmul(ta, pick(tb)))
        )
    except ImportError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--min-s", type=float, default=1.0, help="seconds per row and framework at least"
    )
    args = ap.parse_args()
    threads = mx.get_num_threads()
    try:
        import torch

        torch.set_num_threads(threads)
        torch_version = torch.__version__
    except ImportError:
        torch_version = "absent"
    fma, bw = machine_peaks(threads)
    print(
        f"nuvec {mx.__version__} ({mx._core._cpu_isa()}), {threads} threads; numpy {np.__version__}; "
        f"torch {torch_version}"
    )
    print(
        f"machine: float32 FMA peak {fma:.0f} GFLOP/s, memory read {bw:.1f} GB/s ({threads} threads)\n"
    )
    rng = np.random.default_rng(0)
    rows = [
        ("f32 1024^3", 1024, 1024, 1024, False, 1, False),
        ("f32 2048^3", 2048, 2048, 2048, False, 1, False),
        ("bf16 1024^3", 1024, 1024, 1024, True, 1, False),
        ("bf16 2048^3", 2048, 2048, 2048, True, 1, False),
        ("f32 64x4096x4096", 64, 4096, 4096, False, 1, False),
        ("f32 1x4096x4096", 1, 4096, 4096, False, 4, False),
        ("f32 1x4096x4096 x@W.T", 1, 4096, 4096, False, 4, True),
        ("bf16 1x4096x4096", 1, 4096, 4096, True, 4, False),
    ]
    print("| workload | unit | nuvec | numpy | torch | nuvec / ceiling |")
    print("|---|---|---|---|---|---|")
    for name, m, k, n, bf16, mats, wt in rows:
        a = rng.standard_normal((m, k)).astype(np.float32)
        bs = [rng.standard_normal((n, k) if wt else (k, n)).astype(np.float32) for _ in range(mats)]
        fns = frameworks(a, bs, bf16, wt)
        secs = dict(zip(fns, timed(list(fns.values()), 3, args.min_s)))
        if m == 1:
            unit, per = "GB/s", k * n * (2 if bf16 else 4) / 1e9
            ceiling = f"{per / secs['nuvec'] / bw:.0%} of read bandwidth"
        else:
            unit, per = "GFLOP/s", 2 * m * k * n / 1e9
            ceiling = f"{per / secs['nuvec'] / fma:.0%} of f32 FMA peak"
        cell = lambda f: f"{per / secs[f]:.1f}" if f in secs else "-"
        print(
            f"| {name} | {unit} | {cell('nuvec')} | {cell('numpy')} | {cell('torch')} | {ceiling} |"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
