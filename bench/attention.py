"""Attention speed: nuvec.fast.scaled_dot_product_attention against PyTorch's
torch.nn.functional.scaled_dot_product_attention in one run, both on the same number of threads
(default 2), float32, B = 1, head dim 128.

    PYTHONPATH=$PWD/python python bench/attention.py [--threads 2] [--rounds 5] [--rows decode,prefill8]

Every row runs the frameworks in turn, a few reps each after a pause (bench/matmul.py's `timed`),
and prints medians in milliseconds and nuvec / torch (below 1: nuvec is faster). Causal prefill
has Lq = Lk, where PyTorch's top-left causal alignment equals MLX's bottom-right one.
"""

import argparse
import os
import sys

import numpy as np

import nuvec as mx
from nuvec.fast import plan_attention, scaled_dot_product_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matmul import timed  # noqa: E402

# name: (query heads, key/value heads, query rows, keys, causal)
ROWS = {
    "decode": (32, 32, 1, 1024, False),
    "decode_gqa": (32, 8, 1, 1024, False),
    "verify4": (32, 8, 4, 1024, True),
    "prefill8": (8, 8, 2048, 2048, True),
    "prefill32": (32, 32, 2048, 2048, True),
}
D = 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-s", type=float, default=1.0)
    ap.add_argument("--rows", default=",".join(ROWS))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    mx.set_num_threads(args.threads)
    sdpa_t = torch.nn.functional.scaled_dot_product_attention
    print(f"threads {args.threads}, float32, B=1, D={D}; medians in ms\n")
    print("| row | shape (Hq/Hkv, Lq x Lk) | kernel | nuvec ms | torch ms | nuvec / torch |")
    print("|---|---|---|---|---|---|")
    for name in args.rows.split(","):
        hq, hkv, lq, lk, causal = ROWS[name]
        rng = np.random.default_rng(0)
        q = rng.standard_normal((1, hq, lq, D), dtype=np.float32)
        k = rng.standard_normal((1, hkv, lk, D), dtype=np.float32)
        v = rng.standard_normal((1, hkv, lk, D), dtype=np.float32)
        mask = "causal" if causal else None
        nq, nk, nv = (mx.array(x) for x in (q, k, v))
        mx.eval(nq, nk, nv)
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        # torch's is_causal aligns top-left: for Lq < Lk pass MLX's bottom-right mask explicitly.
        tmask = None
        if causal and lq != lk:
            tmask = torch.from_numpy(np.arange(lq)[:, None] + lk - lq >= np.arange(lk)[None])
        fns = [
            lambda: mx.eval(scaled_dot_product_attention(nq, nk, nv, scale=D**-0.5, mask=mask)),
            lambda: sdpa_t(
                tq,
                tk,
                tv,
                attn_mask=tmask,
                is_causal=causal and tmask is None,
                enable_gqa=hq != hkv,
            ),
        ]
        got = np.array(
            mx.array(fns[0]() or scaled_dot_product_attention(nq, nk, nv, scale=D**-0.5, mask=mask))
        )
        np.testing.assert_allclose(got, fns[1]().numpy(), rtol=1e-3, atol=1e-4)
        tn, tt = timed(fns, args.rounds, args.min_s)
        kernel = plan_attention(q.shape, k.shape, v.shape, mask=mask)["kernel"]
        print(
            f"| {name} | {hq}/{hkv}, {lq} x {lk}{' causal' if causal else ''} | {kernel} | "
            f"{tn * 1e3:.3f} | {tt * 1e3:.3f} | {tn / tt:.2f} |"
        )


if __name__ == "__main__":
    main()
