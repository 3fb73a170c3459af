"""nuvec.linalg's LU / triangular / Cholesky family against numpy.linalg and torch.linalg in one
run, every framework on 2 threads, float32:

    PYTHONPATH=$PWD/python python bench/linalg.py [--threads 2] [--rounds 2]

Rows: solve 2048 x 2048 with b 2048 x 2048 and 2048 x 1, inv 2048, cholesky 2048, det 2048, and
a batch of 10000 4 x 4 inverses. Each row runs the frameworks in turn after a pause (bench/
matmul.py's `timed`) and prints medians in milliseconds and nuvec / numpy (below 1: nuvec is
faster). The machine may be shared: these are one noisy measurement.
"""

import argparse
import os
import sys

_threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "2"
os.environ["OPENBLAS_NUM_THREADS"] = _threads  # NumPy's OpenBLAS reads it at import

import numpy as np  # noqa: E402

import nuvec as mx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul import timed  # noqa: E402


def inputs(n, batch=()):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(batch + (n, n)) + np.sqrt(n) * np.eye(n)).astype(np.float32)
    return a, (a @ np.swapaxes(a, -1, -2)).astype(np.float32)


# name: (shape of a's batch and size, b's columns or None, {framework: call})
def rows():
    a, s = inputs(2048)
    small, _ = inputs(4, (10000,))
    rng = np.random.default_rng(1)
    b_mat = rng.standard_normal((2048, 2048)).astype(np.float32)
    b_vec = rng.standard_normal((2048, 1)).astype(np.float32)
    return {
        "solve 2048, b 2048x2048": ("solve", a, b_mat),
        "solve 2048, b 2048x1": ("solve", a, b_vec),
        "inv 2048": ("inv", a, None),
        "cholesky 2048": ("cholesky", s, None),
        "det 2048": ("det", a, None),
        "inv 10000 x 4x4": ("inv", small, None),
    }


def nuvec_fn(op, a, b):
    A = mx.array(a)
    B = mx.array(b) if b is not None else None
    f = getattr(mx.linalg, op)
    return (lambda: mx.eval(f(A, B))) if B is not None else (lambda: mx.eval(f(A)))


def numpy_fn(op, a, b):
    f = getattr(np.linalg, op)

    def call():
        with np.errstate(over="ignore"):  # det 2048 overflows float32 in every framework
            return f(a, b) if b is not None else f(a)

    return call


def torch_fn(torch, op, a, b):
    A = torch.from_numpy(a)
    B = torch.from_numpy(b) if b is not None else None
    f = getattr(torch.linalg, op)
    return (lambda: f(A, B)) if B is not None else (lambda: f(A))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    mx.set_num_threads(args.threads)
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    print(f"| float32, {args.threads} threads | nuvec ms | numpy ms | torch ms | nuvec / numpy |")
    print("|---|---:|---:|---:|---:|")
    for name, (op, a, b) in rows().items():
        fns = [nuvec_fn(op, a, b), numpy_fn(op, a, b)] + (
            [torch_fn(torch, op, a, b)] if torch else []
        )
        t = [x * 1e3 for x in timed(fns, args.rounds, 0)]
        torch_ms = f"{t[2]:.1f}" if torch else "-"
        print(f"| {name} | {t[0]:.1f} | {t[1]:.1f} | {torch_ms} | {t[0] / t[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
