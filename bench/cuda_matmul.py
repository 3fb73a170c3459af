"""Matrix products on the GPU, nuvec against PyTorch in the same run (docs/cuda.md).

bf16 8192^3 (TFLOP/s: cuBLASLt's fixed algorithm above ROW_INDEPENDENT_ROWS rows) and the batch-1
bf16 matrix-vector products x @ W.T and x @ W with W 8192 x 8192 (GB/s of W read: nuvec's
row-wise and columns kernels). A matrix-vector run is 10 products with different x in one eval,
so either side's per-call overhead counts little against the ~30 us a product takes at HBM
speed. Each time is the median of 10 runs after warm-ups, the GPU synchronized around each run.
Run on a machine with a CUDA device: `python bench/cuda_matmul.py`.
"""

import os
import sys

import numpy as np
import torch

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import median_time  # noqa: E402


def median_seconds(run, sync):
    return median_time(run, reps=10, warmup=3, sync=sync)


def nuvec_time(f, *args):
    """f(*args) evaluated on the GPU (eval waits for the GPU to finish)."""

    def run():
        with mx.stream(mx.gpu):
            mx.eval(f(*args))

    return median_seconds(run, lambda: None)


def torch_time(f, *args):
    return median_seconds(lambda: f(*args), torch.cuda.synchronize)


def inputs(rng, *shapes):
    """The same bfloat16 values for both: nuvec arrays moved to the GPU, torch tensors on cuda."""
    host = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    ours = [mx.array(h).astype(mx.bfloat16) for h in host]  # on the device after the warm-ups
    mx.eval(ours)
    theirs = [torch.from_numpy(h).to("cuda", torch.bfloat16) for h in host]
    return ours, theirs


def report(name, unit, ours, theirs):
    print(
        f"{name:34s} nuvec {ours:9.1f} {unit}   torch {theirs:9.1f} {unit}   ratio {ours / theirs:5.2f}"
    )


def main():
    assert mx.cuda.is_available() and torch.cuda.is_available(), "needs a CUDA device"
    print(mx.device_info(mx.gpu)["device_name"], "| torch", torch.__version__)
    rng = np.random.default_rng(0)
    n = 8192

    (a, b), (ta, tb) = inputs(rng, (n, n), (n, n))
    flops = 2 * n**3
    report(
        "bf16 8192^3 matmul",
        "TFLOP/s",
        flops / nuvec_time(mx.matmul, a, b) / 1e12,
        flops / torch_time(torch.matmul, ta, tb) / 1e12,
    )
    del a, b, ta, tb

    products = 10
    ours, theirs = inputs(rng, (n, n), *[(1, n)] * products)
    weight_bytes = 2 * n * n * products
    for name, f in [
        ("bf16 1 x 8192 @ (8192 x 8192).T", lambda w, *xs: [x @ w.T for x in xs]),
        ("bf16 1 x 8192 @ (8192 x 8192)", lambda w, *xs: [x @ w for x in xs]),
    ]:
        report(
            name,
            "GB/s",
            weight_bytes / nuvec_time(f, *ours) / 1e9,
            weight_bytes / torch_time(f, *theirs) / 1e9,
        )


if __name__ == "__main__":
    main()
