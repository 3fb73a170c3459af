"""nuvec.linalg's decompositions against NumPy and PyTorch (2 threads each), in one run.

Rows: svd (full U and Vt, as MLX) and eigh of 1024 x 1024 float32 and float64, qr of 1024 x 1024,
eig of 512 x 512, the matrix 2-norm of 512 x 512 (an SVD without vectors), and svd of a batch of
10000 3 x 3 matrices, all float32 unless named; then (`--threads-table`, issue 17's OpenBLAS
threads) eigh, eigvalsh, svd, qr, inv and solve (one right-hand side) of 1024 and 2048, float32
and float64. nuvec runs LAPACK from scipy-openblas32 (the decompositions at 2 OpenBLAS threads
from order 256, docs/linalg.md "Threads"), NumPy its own OpenBLAS, PyTorch its LAPACK; "nuvec /
numpy" is the ratio of median times (issue 17's target for svd and eigh 1024: at most 1.2).
Median of --reps runs after one warm-up.

    PYTHONPATH=$PWD/python python bench/linalg_spectral.py [--reps 5] [--only svd_1024 ...]
        [--threads-table]
"""

import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")  # NumPy's OpenBLAS, read when it loads

import numpy as np  # noqa: E402

import nuvec as mx  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _common import median_time  # noqa: E402

try:
    import torch

    torch.set_num_threads(2)
except ImportError:
    torch = None

LA = mx.linalg
RNG = np.random.default_rng(0)


def inputs(shape, dtype, sym=False):
    a = RNG.standard_normal(shape).astype(dtype)
    return a + np.swapaxes(a, -1, -2) if sym else a


# name -> (numpy input, nuvec call, numpy call, torch call)
ROWS = {
    "svd_1024": (inputs((1024, 1024), np.float32), LA.svd, np.linalg.svd, "svd"),
    "svd_1024_f64": (inputs((1024, 1024), np.float64), LA.svd, np.linalg.svd, "svd"),
    "eigh_1024": (inputs((1024, 1024), np.float32, True), LA.eigh, np.linalg.eigh, "eigh"),
    "eigh_1024_f64": (inputs((1024, 1024), np.float64, True), LA.eigh, np.linalg.eigh, "eigh"),
    "qr_1024": (inputs((1024, 1024), np.float32), LA.qr, np.linalg.qr, "qr"),
    "eig_512": (inputs((512, 512), np.float32), LA.eig, np.linalg.eig, "eig"),
    "norm2_512": (
        inputs((512, 512), np.float32),
        lambda a: LA.norm(a, 2),
        lambda a: np.linalg.norm(a, 2),
        "norm2",
    ),
    "svd_10000x3x3": (inputs((10000, 3, 3), np.float32), LA.svd, np.linalg.svd, "svd"),
}

TORCH = {
    "svd": lambda t: torch.linalg.svd(t, full_matrices=True),
    "eigh": torch.linalg.eigh,
    "eigvalsh": torch.linalg.eigvalsh,
    "qr": torch.linalg.qr,
    "eig": torch.linalg.eig,
    "norm2": lambda t: torch.linalg.matrix_norm(t, 2),
    "inv": torch.linalg.inv,
    "solve": lambda t: torch.linalg.solve(t, t[:, :1]),
}


def _well_conditioned(n, dtype):
    return inputs((n, n), dtype) + np.sqrt(n) * np.eye(n, dtype=dtype)


# The OpenBLAS-threads table: op -> (symmetric input?, nuvec call, numpy call).
THREADED = {
    "eigh": (True, LA.eigh, np.linalg.eigh),
    "eigvalsh": (True, LA.eigvalsh, np.linalg.eigvalsh),
    "svd": (False, LA.svd, np.linalg.svd),
    "qr": (False, LA.qr, np.linalg.qr),
    "inv": (None, LA.inv, np.linalg.inv),
    "solve": (None, lambda a: LA.solve(a, a[:, :1]), lambda a: np.linalg.solve(a, a[:, :1])),
}
THREADED_ROWS = {
    f"{op}_{n}{suffix}": (op, n, dt)
    for op in THREADED
    for n in (1024, 2048)
    for dt, suffix in ((np.float32, ""), (np.float64, "_f64"))
}


def row(name):
    """ROWS[name], or a row of the threads table (its input made when first asked for)."""
    if name not in ROWS:
        op, n, dt = THREADED_ROWS[name]
        sym, nv, npf = THREADED[op]
        a = _well_conditioned(n, dt) if sym is None else inputs((n, n), dt, sym)
        ROWS[name] = (a, nv, npf, op)
    return ROWS[name]


def measure(name, reps):
    a, nv, npf, tk = row(name)
    x = mx.array(a, dtype=mx.float64 if a.dtype == np.float64 else mx.float32)
    t_nv = median_time(lambda: mx.eval(nv(x)), reps, 1)
    t_np = median_time(lambda: npf(a), reps, 1)
    t_tc = None
    if torch is not None:
        t = torch.from_numpy(a)
        t_tc = median_time(lambda: TORCH[tk](t), reps, 1)
    return t_nv, t_np, t_tc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--threads-table", action="store_true")
    args = p.parse_args()
    names = args.only or (
        THREADED_ROWS if args.threads_table else list(ROWS)[: len(ROWS) - len(THREADED_ROWS)]
    )
    print("| op | nuvec ms | numpy ms | torch ms | nuvec / numpy |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        t_nv, t_np, t_tc = measure(name, args.reps)
        tc = f"{t_tc * 1e3:.1f}" if t_tc is not None else "-"
        print(
            f"| {name} | {t_nv * 1e3:.1f} | {t_np * 1e3:.1f} | {tc} | {t_nv / t_np:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
