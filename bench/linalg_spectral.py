"""nuvec.linalg's decompositions against NumPy and PyTorch (2 threads each), in one run.

Rows: svd (full U and Vt, as MLX) and eigh of 1024 x 1024 float32 and float64, qr of 1024 x 1024,
eig of 512 x 512, the matrix 2-norm of 512 x 512 (an SVD without vectors), and svd of a batch of
10000 3 x 3 matrices, all float32 unless named. nuvec runs LAPACK from scipy-openblas32, NumPy its
own OpenBLAS, PyTorch its LAPACK; "nuvec / numpy" is the ratio of median times (issue 17's
target for svd and eigh 1024: at most 1.2). Median of --reps runs after one warm-up.

    PYTHONPATH=$PWD/python python bench/linalg_spectral.py [--reps 5] [--only svd_1024 ...]
        [--nuvec-blas-threads 1]   (sets the OpenBLAS nuvec links to that many threads first)
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
    "qr": torch.linalg.qr,
    "eig": torch.linalg.eig,
    "norm2": lambda t: torch.linalg.matrix_norm(t, 2),
}


def measure(name, reps):
    a, nv, npf, tk = ROWS[name]
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
    p.add_argument("--only", nargs="*", default=list(ROWS))
    p.add_argument("--nuvec-blas-threads", type=int, default=None)
    args = p.parse_args()
    if args.nuvec_blas_threads is not None:
        from nuvec import _openblas

        _openblas._lib.scipy_openblas_set_num_threads(args.nuvec_blas_threads)
    print("| op | nuvec ms | numpy ms | torch ms | nuvec / numpy |")
    print("|---|---:|---:|---:|---:|")
    for name in args.only:
        t_nv, t_np, t_tc = measure(name, args.reps)
        tc = f"{t_tc * 1e3:.1f}" if t_tc is not None else "-"
        print(
            f"| {name} | {t_nv * 1e3:.1f} | {t_np * 1e3:.1f} | {tc} | {t_nv / t_np:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
