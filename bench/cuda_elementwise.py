"""Element-wise bandwidth on the GPU: nuvec's `a + b` against PyTorch's on CUDA (docs/cuda.md).

    PYTHONPATH=$PWD/python python bench/cuda_elementwise.py [--elements N]
The default is the 1 GiB float32 add (two inputs of 256M elements, 3 GiB moved: two reads and a
write); each side times the median of 10 runs after warm-ups, with the device synchronised
around each run. Rows for float16 and bfloat16, a broadcast row add and a converting copy follow.
The target: nuvec at >= 80% of PyTorch's bandwidth on the H200."""

import argparse
import os
import sys

import torch

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_time  # noqa: E402


def median_seconds(run, sync):
    return median_time(run, reps=10, warmup=3, sync=sync)


def rows(n):
    """(name, bytes moved, nuvec work, torch work)."""
    with mx.stream(mx.gpu):  # made on the GPU (the random kernels still run on the host)
        a32 = mx.arange(n, dtype=mx.float32) * 1e-6
        b32 = mx.sin(a32)
        a16, b16 = a32.astype(mx.float16), b32.astype(mx.float16)
        abf, bbf = a32.astype(mx.bfloat16), b32.astype(mx.bfloat16)
        side = 1 << 12
        m, r = a32[: (n // side) * side].reshape(-1, side), b32[:side]
        mx.eval(a32, b32, a16, b16, abf, bbf, m, r)
    ta32, tb32 = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    ta16, tb16 = ta32.half(), tb32.half()
    tabf, tbbf = ta32.bfloat16(), tb32.bfloat16()
    tm, tr = ta32[: (n // side) * side].view(-1, side), tb32[:side]
    out = []
    for name, (x, y), (tx, ty) in [
        ("add float32", (a32, b32), (ta32, tb32)),
        ("add float16", (a16, b16), (ta16, tb16)),
        ("add bfloat16", (abf, bbf), (tabf, tbbf)),
    ]:
        out.append(
            (
                name,
                3 * x.nbytes,
                lambda x=x, y=y: mx.eval(mx.add(x, y, stream=mx.gpu)),
                lambda tx=tx, ty=ty: tx + ty,
            )
        )
    out.append(
        (
            "add rows + row (broadcast)",
            2 * m.nbytes,
            lambda: mx.eval(mx.add(m, r, stream=mx.gpu)),
            lambda: tm + tr,
        )
    )
    out.append(
        (
            "astype float32 -> bfloat16",
            a32.nbytes + abf.nbytes,
            lambda: mx.eval(a32.astype(mx.bfloat16, stream=mx.gpu)),
            lambda: ta32.bfloat16(),
        )
    )
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--elements", type=int, default=1 << 28)
    args = p.parse_args()
    assert mx.cuda.is_available() and torch.cuda.is_available(), "needs a CUDA device"
    print(f"{mx.device_info(mx.gpu)['device_name']}, {args.elements} elements per input")
    print(f"{'row':30} {'nuvec GB/s':>11} {'torch GB/s':>11} {'ratio':>7}")
    for name, nbytes, ours, theirs in rows(args.elements):
        t_ours = median_seconds(ours, mx.synchronize)
        t_theirs = median_seconds(theirs, torch.cuda.synchronize)
        g_ours, g_theirs = nbytes / t_ours / 1e9, nbytes / t_theirs / 1e9
        print(f"{name:30} {g_ours:11.0f} {g_theirs:11.0f} {g_ours / g_theirs:7.2f}")


if __name__ == "__main__":
    main()
