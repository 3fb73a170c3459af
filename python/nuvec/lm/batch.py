"""Batched generation of prompts of different lengths on the paged cache, as mlx-lm's
``batch_generate``: each prompt is prefilled alone (in ``generate_step``'s chunks, into a plain
cache whose keys then move to its pages), and the sequences then decode together, one token per
row per step, through ``fast.paged_attention``. The products and the row-wise kernels are row
independent and paged attention has the contiguous one-query bits, so each prompt gets the tokens
it gets alone (docs/lm.md, "Paged cache and batch generation")."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from .. import _core as mx
from .generate import BatchResponse, _encode, _logprobs
from .models.cache import make_prompt_cache
from .models.paged_cache import PagedKVCache, make_paged_cache
from .overlap import queue
from .sample_utils import make_sampler

__all__ = ["batch_generate", "prefill_into_pages"]


def prefill_into_pages(
    model: Any, prompt: Any, cache: list[PagedKVCache], prefill_step_size: int = 2048
) -> int:
    """Adds a sequence for ``prompt`` (1-d token ids) to the paged ``cache`` and stores the keys
    and values of all its tokens but the last, computed alone in ``generate_step``'s chunks.
    Returns the sequence's id; its last token is the first input of its decode steps."""
    prompt = mx.array(prompt) if not isinstance(prompt, mx.array) else prompt
    table = cache[0].table
    seq = table.add(prompt.size)
    n = prompt.size - 1
    if n == 0:
        return seq
    plain = make_prompt_cache(model)
    while prompt.size > 1:
        size = min(prefill_step_size, prompt.size - 1)
        chunk, prompt = prompt[:size], prompt[size:]
        model(chunk[None], cache=plain)
        mx.eval([c.state for c in plain])
    for paged, c in zip(cache, plain):
        keys, values = c.state[:2]
        paged.write(seq, keys, values)
    table.lengths[seq] = n
    mx.eval([c.state for c in cache])
    return seq


def batch_generate(
    model: Any,
    tokenizer: Any,
    prompts: list[Any],
    max_tokens: int = 256,
    sampler: Callable[[Any], Any] | None = None,
    verbose: bool = False,
    *,
    prefill_step_size: int = 2048,
    page_size: int = 64,
) -> BatchResponse:
    """The texts (and tokens) generated from each of ``prompts`` (token id lists, or strings
    encoded as ``generate`` does). Each prompt is prefilled alone, then all decode together in a
    paged cache of ``page_size`` positions a page (a divisor of 256); a sequence stops at an end
    token or after ``max_tokens`` and gives its pages back. ``verbose`` prints the speeds."""
    if not prompts:
        raise ValueError("batch_generate needs at least one prompt")
    encoded = [_encode(tokenizer, p) for p in prompts]
    if any(p.ndim != 1 or p.size == 0 for p in encoded):
        raise ValueError("batch_generate needs non-empty prompts")
    if max_tokens < 1:
        return BatchResponse(["" for _ in prompts], [[] for _ in prompts])
    sampler = sampler or make_sampler()
    pages = sum(-(-(p.size + max_tokens) // page_size) for p in encoded)
    cache = make_paged_cache(model, pages, page_size)
    table = cache[0].table
    tic = time.perf_counter()
    seqs = [prefill_into_pages(model, p, cache, prefill_step_size) for p in encoded]
    prompt_time, tic = time.perf_counter() - tic, time.perf_counter()
    out: list[list[int]] = [[] for _ in prompts]
    rows = list(range(len(prompts)))  # the prompts still decoding, in row order

    def step(x: Any, rows: list[int]) -> Any:
        table.step([seqs[i] for i in rows])
        y = sampler(_logprobs(model(x, cache=cache)[:, -1, :]))
        queue(y)
        return y

    # As generate_step's loop: step n+1 is built on step n's lazy tokens and queued before they
    # are read; rows that end at step n are then dropped from step n+1's tokens (their extra
    # row is wasted work, and row independence keeps the others' bits).
    y = step(mx.array([[p[-1].item()] for p in encoded]), rows)
    steps = 0
    while rows:
        last = all(len(out[i]) + 1 >= max_tokens for i in rows)
        y_next = None if last else step(y[:, None], rows)
        steps += 1
        keep = []
        for r, (i, t) in enumerate(zip(rows, y.tolist())):
            if t not in tokenizer.eos_token_ids:
                out[i].append(t)
            if t in tokenizer.eos_token_ids or len(out[i]) >= max_tokens:
                table.remove(seqs[i])
            else:
                keep.append(r)
        if y_next is not None and len(keep) < len(rows):
            y_next = y_next[mx.array(keep, dtype=mx.int32)] if keep else None
        rows = [rows[r] for r in keep]
        y = y_next
    if verbose:
        n = sum(len(t) for t in out)
        total = sum(p.size for p in encoded)
        print(f"Prompt: {total} tokens, {total / max(prompt_time, 1e-9):.3f} tokens-per-sec")
        print(
            f"Generation: {n} tokens in {steps} steps, "
            f"{n / max(time.perf_counter() - tic, 1e-9):.3f} tokens-per-sec"
        )
        sys.stdout.flush()
    return BatchResponse([tokenizer.decode(t) for t in out], out)
