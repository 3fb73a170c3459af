"""The paged cache's speed (docs/lm.md, "Paged cache and batch generation"):

1. batched decode of SmolLM2-135M (the embedded Q4_1 model) for 1, 4 and 8 sequences of different
   prompt lengths, one token per sequence per step through fast.paged_attention, against decoding
   the same prompts one after another with generate_step (tokens per second, decode only);
2. fast.paged_attention against fast.scaled_dot_product_attention (and PyTorch's, 2 threads) for
   one query over 1k and 4k keys, SmolLM2's heads (9 query heads over 3 key heads of 64).

Medians; prints markdown tables. Run: PYTHONPATH=python python bench/paged.py"""

import statistics
import time

import numpy as np

import nuvec as mx
from _common import median_time
from nuvec import fast
from nuvec.lm import generate_step, load
from nuvec.lm.batch import prefill_into_pages
from nuvec.lm.models.paged_cache import make_paged_cache

STEPS = 24
LENGTHS = [12, 40, 7, 90, 25, 60, 18, 33]  # prompt lengths of the sequences


def _prompts(n):
    rng = np.random.RandomState(0)
    return [list(rng.randint(100, 20000, LENGTHS[i])) for i in range(n)]


def batched_tps(model, prompts):
    cache = make_paged_cache(model, sum(-(-(len(p) + STEPS) // 64) for p in prompts), 64)
    table = cache[0].table
    seqs = [prefill_into_pages(model, p, cache) for p in prompts]

    def step(x):
        table.step(seqs)
        y = mx.argmax(model(x, cache=cache)[:, -1], axis=-1)
        mx.async_eval(y)
        return y

    y = step(mx.array([[p[-1]] for p in prompts]))
    y.tolist()  # the first step (the last prompt tokens) is not timed
    tic = time.perf_counter()
    for _ in range(STEPS):  # pipelined as batch_generate's loop
        y_next = step(y[:, None])
        y.tolist()
        y = y_next
    y.tolist()
    return len(prompts) * STEPS / (time.perf_counter() - tic)


def sequential_tps(model, prompts):
    total = 0.0
    for p in prompts:
        steps = generate_step(p, model, max_tokens=STEPS + 1)
        next(steps)  # prefill and first token, not timed
        tic = time.perf_counter()
        for _ in steps:
            pass
        total += time.perf_counter() - tic
    return len(prompts) * STEPS / total


def _median_us(f, reps=30):
    return median_time(f, reps, warmup=1) * 1e6


def attention_row(keys, page=64):
    rng = np.random.default_rng(0)
    hq, hkv, d = 9, 3, 64
    q = rng.standard_normal((1, hq, 1, d)).astype(np.float32)
    k = rng.standard_normal((1, hkv, keys, d)).astype(np.float32)
    v = rng.standard_normal((1, hkv, keys, d)).astype(np.float32)
    n = -(-keys // page)
    kp = mx.zeros((n, page, hkv, d))
    vp = mx.zeros((n, page, hkv, d))
    slots = mx.arange(keys, dtype=mx.int32)
    kp, vp = fast.paged_write(
        kp, vp, mx.array(k[0].transpose(1, 0, 2)), mx.array(v[0].transpose(1, 0, 2)), slots
    )
    tables, lens = mx.arange(n, dtype=mx.int32)[None], mx.array([keys], dtype=mx.int32)
    qn, kn, vn = mx.array(q), mx.array(k), mx.array(v)
    mx.eval(kp, vp, qn, kn, vn)
    paged = _median_us(lambda: mx.eval(fast.paged_attention(qn, kp, vp, tables, lens, scale=0.125)))
    contiguous = _median_us(
        lambda: mx.eval(fast.scaled_dot_product_attention(qn, kn, vn, scale=0.125))
    )
    torch_us = float("nan")
    try:
        import torch

        torch.set_num_threads(2)
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        torch_us = _median_us(lambda: sdpa(tq, tk, tv, scale=0.125, enable_gqa=True))
    except ImportError:
        pass
    return paged, contiguous, torch_us


def main():
    model, _ = load(None)
    print("| sequences | batched paged decode tok/s | sequential decode tok/s | speed-up |")
    print("|---|---|---|---|")
    for n in (1, 4, 8):
        prompts = _prompts(n)
        b = statistics.median(batched_tps(model, prompts) for _ in range(2))
        s = statistics.median(sequential_tps(model, prompts) for _ in range(2))
        print(f"| {n} | {b:.1f} | {s:.1f} | {b / s:.2f}x |")
    print()
    print("| keys | paged_attention us | scaled_dot_product_attention us | torch sdpa us |")
    print("|---|---|---|---|")
    for keys in (1024, 4096):
        p, c, t = attention_row(keys)
        print(f"| {keys} | {p:.1f} | {c:.1f} | {t:.1f} |")


if __name__ == "__main__":
    main()
