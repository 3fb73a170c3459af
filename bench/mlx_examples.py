"""MLX's two small gradient-descent examples (its examples/python linear_regression.py and
logistic_regression.py), rewritten here with MLX's sizes: 1,000 examples of 100 features,
10,000 iterations of plain `mx.grad` steps, one `mx.eval` per step (learning rates 0.01 and 0.1).
Each prints its final loss and its iterations per second; `--json F` writes them as
{"linear_regression": it/s, "logistic_regression": it/s}.

    python bench/mlx_examples.py --impl nuvec            # or --impl mlx (mlx.core)
    python bench/mlx_examples.py --impl nuvec --only logistic --iters 2000 --json out.json

The inputs come from NumPy with fixed seeds, so both implementations train on the same data.
bench/contended.py runs this file beside a competing busy process.
"""

import argparse
import importlib
import json
import time

import numpy as np

NUM_FEATURES, NUM_EXAMPLES, NUM_ITERS = 100, 1_000, 10_000


def data(seed):
    rng = np.random.default_rng(seed)
    w_star = rng.standard_normal(NUM_FEATURES).astype(np.float32)
    X = rng.standard_normal((NUM_EXAMPLES, NUM_FEATURES)).astype(np.float32)
    w0 = (1e-2 * rng.standard_normal(NUM_FEATURES)).astype(np.float32)
    eps = (1e-2 * rng.standard_normal(NUM_EXAMPLES)).astype(np.float32)
    return w_star, X, w0, eps


def linear_regression(mx, iters):
    w_star, X, w0, eps = data(0)
    X, w = mx.array(X), mx.array(w0)
    y = X @ mx.array(w_star) + mx.array(eps)

    def loss_fn(w):
        return 0.5 * mx.mean(mx.square(X @ w - y))

    return descend(mx, loss_fn, w, 0.01, iters)


def logistic_regression(mx, iters):
    w_star, X, w0, _ = data(1)
    X, w = mx.array(X), mx.array(w0)
    y = (X @ mx.array(w_star)) > 0

    def loss_fn(w):
        logits = X @ w
        return mx.mean(mx.logaddexp(0.0, logits) - y * logits)

    return descend(mx, loss_fn, w, 0.1, iters)


def descend(mx, loss_fn, w, lr, iters):
    """(final loss, iterations per second) of `iters` gradient-descent steps from w."""
    grad_fn = mx.grad(loss_fn)
    mx.eval(w)
    tic = time.perf_counter()
    for _ in range(iters):
        w = w - lr * grad_fn(w)
        mx.eval(w)
    toc = time.perf_counter()
    return loss_fn(w).item(), iters / (toc - tic)


EXAMPLES = {"linear_regression": linear_regression, "logistic_regression": logistic_regression}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--impl", default="nuvec", help="nuvec or mlx (a module name; mlx means mlx.core)"
    )
    ap.add_argument("--iters", type=int, default=NUM_ITERS)
    ap.add_argument("--only", default="", help="run the examples whose name contains this")
    ap.add_argument("--json", help="write {example: it/s} to this file")
    args = ap.parse_args()
    mx = importlib.import_module("mlx.core" if args.impl == "mlx" else args.impl)
    results = {}
    for name, fn in EXAMPLES.items():
        if args.only not in name:
            continue
        loss, rate = fn(mx, args.iters)
        results[name] = rate
        print(f"{name:20s} loss {loss:.5f}  {rate:10.1f} it/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
