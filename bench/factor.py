"""nuvec's own factorisation kernels (backend/cpu/factor.h) against LAPACK (OpenBLAS, through
SciPy and NumPy) and PyTorch, 2 threads each, in one run.

    PYTHONPATH=python python bench/factor.py [--sizes 256 1024 2048] [--rounds 5]

Rows: LU with partial pivoting (scipy.linalg.lu_factor, torch.linalg.lu_factor), a triangular
solve with n right-hand sides (scipy.linalg.solve_triangular, torch.linalg.solve_triangular),
Cholesky (numpy.linalg.cholesky, torch.linalg.cholesky), and the solve built from them: LU, the
rows of B permuted, two triangular solves (numpy.linalg.solve, torch.linalg.solve), and inv as
that solve on the identity (numpy.linalg.inv, torch.linalg.inv). LAPACK runs with OpenBLAS's
default threads (2 here) and again limited to one (nuvec.linalg's policy for the LAPACK calls it
keeps, see backend/cpu/lapack.h), through threadpoolctl: in that column the three kernels are
LAPACK's own routines called directly (getrf, trtrs, potrf on column-major copies), without the
wrappers' copies and checks. Every timed call starts from a
fresh copy of its input (the kernels work in place; SciPy's overwrite flags likewise).

"expected" is the operation count over the rate nuvec's own matmul reaches on an n x n x n
product in the same run (flops: LU 2/3 n^3, a triangular solve n^3, Cholesky 1/3 n^3, the solve
8/3 n^3): the time if every flop ran at the product's speed. The frameworks
take turns round by round and each cell is the median over all rounds, so load that comes and
goes on a shared machine falls on all of them; read the ratios.
"""

import argparse
import os
import sys

import numpy as np
import scipy.linalg as sl
import scipy.linalg.lapack as sla
from threadpoolctl import threadpool_limits

import nuvec as mx
from nuvec import _core

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_time  # noqa: E402


class OneThread:
    """f run with OpenBLAS limited to one thread (nuvec.linalg's policy for the LAPACK calls it
    keeps: see backend/cpu/lapack.h), through threadpoolctl."""

    def __init__(self, f):
        self.f = f

    def __call__(self):
        return self.f()


def interleaved(fns, rounds):
    times = [[] for _ in fns]
    for _ in range(rounds):
        for f, t in zip(fns, times):
            if isinstance(f, OneThread):
                with threadpool_limits(limits=1, user_api="blas"):
                    t.append(median_time(f, reps=3, warmup=1))
            else:
                t.append(median_time(f, reps=3, warmup=1))
    return [float(np.median(t)) for t in times]


def permutation(piv):
    """Row order of P A from LAPACK-style pivots (row i swapped with piv[i], in turn)."""
    perm = np.arange(piv.size)
    for i, j in enumerate(piv.tolist()):
        if i != j:
            perm[i], perm[j] = perm[j], perm[i]
    return perm


def nuvec_lu(a):
    w = a.copy()
    piv = np.empty(a.shape[0], np.int32)
    _core._factor_lu(w, piv)
    return w, piv


def nuvec_solve(a, b):
    f, piv = nuvec_lu(a)
    x = b[permutation(piv)]
    _core._factor_triangular_solve(f, x, True, False, True)
    _core._factor_triangular_solve(f, x, False, False, False)
    return x


def cases(n, dt, torch):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dt)
    b = rng.standard_normal((n, n)).astype(dt)
    t = (np.tril(a) / np.sqrt(n) + 2 * np.eye(n)).astype(dt)
    s = (a @ a.T / n + np.eye(n)).astype(dt)
    eye = np.eye(n, dtype=dt)
    af, bf, tf, sf = (np.asfortranarray(x) for x in (a, b, t, s))
    getrf, potrf, trtrs = sla.get_lapack_funcs(("getrf", "potrf", "trtrs"), (a,))
    ta, tb, tt, ts = (torch.from_numpy(x) for x in (a, b, t, s)) if torch else (None,) * 4

    def tri(x):
        w = x.copy()
        _core._factor_triangular_solve(t, w, True, False, False)

    def chol():
        w = s.copy()
        _core._factor_cholesky(w, False)

    yield (
        "lu_factor",
        2 / 3,
        lambda: nuvec_lu(a),
        lambda: sl.lu_factor(a.copy(), overwrite_a=True, check_finite=False),
        lambda: getrf(af.copy(order="F"), overwrite_a=True),
        torch and (lambda: torch.linalg.lu_factor(ta)),
    )
    yield (
        "triangular solve, n rhs",
        1.0,
        lambda: tri(b),
        lambda: sl.solve_triangular(t, b.copy(), lower=True, overwrite_b=True, check_finite=False),
        lambda: trtrs(tf, bf.copy(order="F"), lower=1, overwrite_b=True),
        torch and (lambda: torch.linalg.solve_triangular(tt, tb, upper=False)),
    )
    yield (
        "cholesky",
        1 / 3,
        chol,
        lambda: np.linalg.cholesky(s),
        lambda: potrf(sf.copy(order="F"), lower=1, overwrite_a=True),
        torch and (lambda: torch.linalg.cholesky(ts)),
    )
    yield (
        "solve, n rhs",
        8 / 3,
        lambda: nuvec_solve(a, b),
        lambda: np.linalg.solve(a, b),
        lambda: np.linalg.solve(a, b),
        torch and (lambda: torch.linalg.solve(ta, tb)),
    )
    yield (
        "inv (solve on I)",
        8 / 3,
        lambda: nuvec_solve(a, eye),
        lambda: np.linalg.inv(a),
        lambda: np.linalg.inv(a),
        torch and (lambda: torch.linalg.inv(ta)),
    )


def matmul_rate(n, dt, rounds):
    x = mx.array(np.random.default_rng(1).standard_normal((n, n)).astype(dt))
    mx.eval(x)
    secs = interleaved([lambda: mx.eval(x @ x)], rounds)[0]
    return 2 * n**3 / secs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="*", default=[256, 1024, 2048])
    p.add_argument("--float64", type=int, nargs="*", default=[1024])
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    mx.set_num_threads(2)
    print(
        "| case | n | dtype | nuvec ms | expected ms | LAPACK ms | LAPACK 1 thread ms | PyTorch ms "
        "| LAPACK / nuvec | LAPACK 1 thread / nuvec |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    runs = [(n, np.float32) for n in args.sizes] + [(n, np.float64) for n in args.float64]
    for n, dt in runs:
        rate = matmul_rate(n, dt, args.rounds)
        for name, flops, ours, lapack, direct, tor in cases(n, dt, torch):
            fns = [ours, lapack, OneThread(direct)] + ([tor] if tor else [])
            t = interleaved(fns, args.rounds) + ([] if tor else [float("nan")])
            expected = flops * n**3 / rate
            print(
                f"| {name} | {n} | {np.dtype(dt).name} | {t[0] * 1e3:.1f} | {expected * 1e3:.1f} | "
                f"{t[1] * 1e3:.1f} | {t[2] * 1e3:.1f} | {t[3] * 1e3:.1f} | {t[1] / t[0]:.2f} | {t[2] / t[0]:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
