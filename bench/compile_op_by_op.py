"""Issue 14's gelu bar against evaluation op by op: gelu (erf form) and exp(sin(x))*2+1 on 16M
float32, each op evaluated on its own (a pass over memory per op, as MLX's uncompiled code runs),
nuvec's uncompiled evaluation (which fuses element-wise chains: docs/design.md, "Fusion at
evaluation") and compiled, beside MLX's uncompiled and compiled where mlx is installed.

    PYTHONPATH=python python bench/compile_op_by_op.py [--rounds 9]
"""

import argparse
import math
import os
import sys

import numpy as np

import nuvec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_time  # noqa: E402

N = 16 * 2**20


def gelu(mx, x, step):
    a = step(x / math.sqrt(2))
    b = step(mx.erf(a))
    c = step(1 + b)
    return step(step(x * 0.5) * c)


def chain(mx, x, step):
    return step(step(step(mx.exp(step(mx.sin(x)))) * 2) + 1)


def median_ms(mx, f, x, rounds):
    return median_time(lambda: mx.eval(f(x)), reps=rounds) * 1e3


def rows(mx, name, rounds):
    x = mx.array(np.random.default_rng(0).standard_normal(N, dtype=np.float32))
    mx.eval(x)

    def each(a):  # evaluated on its own
        mx.eval(a)
        return a

    out = []
    for fn in (gelu, chain):
        op_by_op = median_ms(mx, lambda v, fn=fn: fn(mx, v, each), x, rounds)
        plain = median_ms(mx, lambda v, fn=fn: fn(mx, v, lambda a: a), x, rounds)
        compiled = median_ms(mx, mx.compile(lambda v, fn=fn: fn(mx, v, lambda a: a)), x, rounds)
        out.append((name, fn.__name__, op_by_op, plain, compiled))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    table = rows(nuvec, "nuvec", args.rounds)
    try:
        import mlx.core as mlx
    except ImportError:
        mlx = None
    if mlx is not None:
        table += rows(mlx, "mlx", args.rounds)
    heads = ["framework", "function", "op by op ms", "uncompiled ms", "compiled ms"]
    heads += ["compiled / op by op", "compiled / uncompiled"]
    print("| " + " | ".join(heads) + " |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, fn, a, b, c in table:
        print(f"| {name} | {fn} | {a:.2f} | {b:.2f} | {c:.2f} | {a / c:.2f}x | {b / c:.2f}x |")


if __name__ == "__main__":
    main()
