"""Attention and quantized matrix-vector products on the GPU, nuvec against PyTorch in the same run
(docs/cuda.md).

- 4-bit (group 64) one-row products x @ W.T with W 8192 x 8192, 10 products with different x in
  one eval: microseconds a product and GB/s of packed weights (with scales and biases) read;
  PyTorch has no affine 4-bit product, so its row is the bfloat16 product (4x the bytes).
- an element-wise chain, exp(sin(x)) * 2 + 1 on 1 GiB of float32: one fused kernel for nuvec,
  four for PyTorch's eager ops (GB/s: the input read and the output written once).
- float32 attention: decode (32 heads, 1 query, 1024 keys, head dim 128) and causal prefill
  (8 heads, 2048 tokens), against torch.nn.functional.scaled_dot_product_attention.

Medians of 10 runs after warm-ups (bench/cuda_matmul.py's timing). Run on a machine with a CUDA
device: `python bench/cuda_fast.py`.
"""

import os
import sys

import numpy as np
import torch

import nuvec as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_matmul import inputs, nuvec_time, torch_time  # noqa: E402


def row(name, ours, theirs, extra=""):
    print(f"{name:44s} nuvec {ours * 1e6:9.1f} us   torch {theirs * 1e6:9.1f} us   "
          f"nuvec/torch {ours / theirs:5.2f}  {extra}")  # fmt: skip


def quantized(rng):
    n, products = 8192, 10
    w = mx.array(rng.standard_normal((n, n), dtype=np.float32))
    wq, s, b = mx.quantize(w, 64, 4)
    xs = [mx.array(rng.standard_normal((1, n), dtype=np.float32)) for _ in range(products)]
    mx.eval(wq, s, b, xs)
    del w
    ours = (
        nuvec_time(
            lambda *xs: [mx.quantized_matmul(x, wq, s, b, group_size=64, bits=4) for x in xs], *xs
        )
        / products
    )
    _, (tw, *txs) = inputs(rng, (n, n), *[(1, n)] * products)
    theirs = torch_time(lambda *xs: [x @ tw.T for x in xs], *txs) / products
    packed = wq.nbytes + s.nbytes + b.nbytes
    row(
        "q4 1 x 8192 @ (8192 x 8192).T (torch: bf16)",
        ours,
        theirs,
        f"GB/s nuvec {packed / ours / 1e9:.0f}, torch {tw.numel() * 2 / theirs / 1e9:.0f}",
    )


def attention(rng):
    for name, (hq, lq, lk, mask) in {
        "decode f32 32 heads 1 x 1024 d128": (32, 1, 1024, None),
        "prefill f32 8 heads 2048 causal d128": (8, 2048, 2048, "causal"),
    }.items():
        host = [
            rng.standard_normal(s, dtype=np.float32)
            for s in [(1, hq, lq, 128), (1, hq, lk, 128), (1, hq, lk, 128)]
        ]
        q, k, v = (mx.array(h) for h in host)
        mx.eval(q, k, v)
        tq, tk, tv = (torch.from_numpy(h).cuda() for h in host)
        ours = nuvec_time(
            lambda q, k, v: mx.fast.scaled_dot_product_attention(
                q, k, v, scale=128**-0.5, mask=mask
            ),
            q,
            k,
            v,
        )
        theirs = torch_time(
            lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=mask == "causal"
            ),
            tq,
            tk,
            tv,
        )
        row(name, ours, theirs)


def fused_chain(rng):
    n = 1 << 28  # 1 GiB of float32
    host = rng.standard_normal(n, dtype=np.float32)
    x = mx.array(host)
    mx.eval(x)
    tx = torch.from_numpy(host).cuda()
    del host
    ours = nuvec_time(lambda x: mx.exp(mx.sin(x)) * 2 + 1, x)
    theirs = torch_time(lambda x: torch.exp(torch.sin(x)) * 2 + 1, tx)
    row(
        "exp(sin(x)) * 2 + 1, 256M f32 (nuvec fused)",
        ours,
        theirs,
        f"GB/s nuvec {2 * 4 * n / ours / 1e9:.0f}",
    )


def main():
    assert mx.cuda.is_available() and torch.cuda.is_available(), "needs a CUDA device"
    print(mx.device_info(mx.gpu)["device_name"], "| torch", torch.__version__)
    rng = np.random.default_rng(0)
    quantized(rng)
    attention(rng)
    fused_chain(rng)


if __name__ == "__main__":
    main()
