"""Convolution speed: nuvec against PyTorch's CPU build (oneDNN) in one run, both on the same
number of threads (default 2), forward and backward (the gradients of sum(conv(x, w) * r) with
respect to x and w, forward included), float32.

    PYTHONPATH=$PWD/python python bench/conv.py [--threads 2] [--rounds 5] [--rows target,1x1]

nuvec is channels-last (MLX's layout); PyTorch runs both NCHW and channels_last and the faster
counts. Every row runs the frameworks in turn, a few reps each after a pause (bench/matmul.py's
`timed`), and prints medians in milliseconds and nuvec / torch (below 1: nuvec is faster).
"""

import argparse
import os
import sys

import numpy as np

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul import timed  # noqa: E402

# name: (input (N, *spatial, C_in), weight (C_out, *kernel, C_in / groups), stride, padding, groups)
ROWS = {
    "target": ((64, 28, 28, 32), (64, 3, 3, 32), 1, 1, 1),
    "1x1": ((64, 28, 28, 64), (64, 1, 1, 64), 1, 0, 1),
    "stride2": ((64, 28, 28, 32), (64, 3, 3, 32), 2, 1, 1),
    "conv1d": ((32, 256, 64), (64, 5, 64), 1, 2, 1),
    "depthwise": ((64, 28, 28, 64), (64, 3, 3, 1), 1, 1, 64),
}


def nuvec_fns(x, w, r, stride, padding, groups):
    conv = getattr(mx, f"conv{x.ndim - 2}d")
    X, W, R = mx.array(x), mx.array(w), mx.array(r)
    grad = mx.grad(lambda a, b: mx.sum(conv(a, b, stride, padding, 1, groups) * R), argnums=(0, 1))
    return (
        lambda: mx.eval(conv(X, W, stride, padding, 1, groups)),
        lambda: mx.eval(grad(X, W)),
    )


def torch_fns(torch, x, w, r, stride, padding, groups, channels_last):
    conv = getattr(torch.nn.functional, f"conv{x.ndim - 2}d")

    def to(a):
        t = torch.tensor(np.moveaxis(a, -1, 1))
        if channels_last and a.ndim == 4:
            return t.contiguous(memory_format=torch.channels_last)
        return t.contiguous()

    X, W, R = to(x).requires_grad_(), to(w).requires_grad_(), to(r)

    def forward():
        with torch.no_grad():
            conv(X, W, stride=stride, padding=padding, groups=groups)

    def backward():
        y = conv(X, W, stride=stride, padding=padding, groups=groups)
        torch.autograd.grad((y * R).sum(), (X, W))

    return forward, backward


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-s", type=float, default=1.0)
    p.add_argument("--rows", default=",".join(ROWS))
    args = p.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    mx.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}, torch {torch.__version__}, medians in ms")
    print("| row | pass | nuvec | torch NCHW | torch NHWC | nuvec / best torch |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.rows.split(","):
        xs, ws, stride, padding, groups = ROWS[name]
        x = rng.standard_normal(xs, dtype=np.float32)
        w = (rng.standard_normal(ws, dtype=np.float32) * 0.1).astype(np.float32)
        y = mx.conv_general(mx.array(x), mx.array(w), stride, padding, groups=groups)
        r = rng.standard_normal(y.shape, dtype=np.float32)
        ours = nuvec_fns(x, w, r, stride, padding, groups)
        nchw = torch_fns(torch, x, w, r, stride, padding, groups, False)
        nhwc = torch_fns(torch, x, w, r, stride, padding, groups, True)
        for i, what in enumerate(("forward", "backward")):
            t = timed([ours[i], nchw[i], nhwc[i]], args.rounds, args.min_s)
            ms = [1e3 * v for v in t]
            print(
                f"| {name} {xs}x{ws} | {what} | {ms[0]:.2f} | {ms[1]:.2f} | {ms[2]:.2f} "
                f"| {ms[0] / min(ms[1:]):.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
