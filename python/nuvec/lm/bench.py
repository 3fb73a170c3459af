"""``python -m nuvec.lm bench``: prompt processing and decode speeds, as llama.cpp's llama-bench
measures them (pp512: one prompt of 512 tokens into an empty cache; tg128: 128 greedy tokens
decoded one at a time after a one-token prompt, or after a prompt of ``depth`` tokens as
llama-bench's ``-d``), with the peak memory; medians of the trials."""

from __future__ import annotations

import statistics
import time
from typing import Any

from .. import _core as mx
from .generate import generate_step

__all__ = ["measure", "run"]


def _prompt(n: int, vocab: int) -> Any:
    return (mx.arange(n) * 7919 + 17) % vocab  # fixed, ordinary token ids


def measure(
    model: Any,
    prompt_tokens: int = 512,
    generation_tokens: int = 128,
    depth: int = 0,
    kv_dtype: Any = None,
) -> dict:
    """One trial: prompt tokens/s, decode tokens/s (after ``depth`` tokens of context, at least
    one, in caches of ``kv_dtype``) and peak memory (GB)."""
    vocab = model.args.vocab_size
    prompt = _prompt(prompt_tokens, vocab)
    mx.eval(prompt)
    mx.reset_peak_memory()
    tic = time.perf_counter()
    next(generate_step(prompt, model, max_tokens=1))  # prefill, then the first token
    pp = prompt_tokens / (time.perf_counter() - tic)
    context = _prompt(max(1, depth), vocab)
    steps = generate_step(context, model, max_tokens=generation_tokens + 1, kv_dtype=kv_dtype)
    next(steps)  # the context's prefill and its own step
    tic = time.perf_counter()
    for _ in steps:
        pass
    tg = generation_tokens / (time.perf_counter() - tic)
    return {"pp": pp, "tg": tg, "peak": mx.get_peak_memory() / 1e9}


def run(
    model: Any,
    prompt_tokens: int = 512,
    generation_tokens: int = 128,
    trials: int = 3,
    depth: int = 0,
) -> dict:
    """Warm up, then ``trials`` trials; prints a markdown table and returns the medians."""
    measure(model, 16, 4)
    results = [measure(model, prompt_tokens, generation_tokens, depth) for _ in range(trials)]
    med = {k: statistics.median(r[k] for r in results) for k in results[0]}
    print("| measure | nuvec |\n|---|---|")
    print(f"| prompt ({prompt_tokens} tokens), tok/s | {med['pp']:.1f} |")
    after = f" after {depth}" if depth else ""
    print(f"| decode ({generation_tokens} tokens{after}), tok/s | {med['tg']:.1f} |")
    print(f"| peak memory, GB | {med['peak']:.3f} |")
    return med
