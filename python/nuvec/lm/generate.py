"""Text generation, as mlx-lm's ``mlx_lm.generate``: ``generate_step`` (tokens and
log-probabilities), ``stream_generate`` (responses with text and speeds), ``generate`` (the text)
and ``batch_generate`` (several prompts in one left-padded batch).

The decode loop builds step n+1's graph on step n's lazy token and queues it before step n's token
is read (``overlap.queue``): where a core is free, the worker computes while Python builds, as in
mlx-lm's loop; docs/lm.md ("Overlap") measures it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from .. import _core as mx
from .decode import compiled_decode
from .models.cache import make_prompt_cache, maybe_quantize_kv_cache
from .overlap import queue
from .sample_utils import make_sampler
from .speculative import speculative_generate_step

__all__ = [
    "BatchResponse",
    "GenerationResponse",
    "batch_generate",
    "generate",
    "generate_step",
    "speculative_generate_step",
    "stream_generate",
]


@dataclass
class GenerationResponse:
    """One step of ``stream_generate``: the new ``text`` (possibly empty while a multi-byte
    character is incomplete), its ``token``, the speeds so far (tokens per second) and the peak
    memory in GB; ``finish_reason`` is "stop" (an end token), "length" or None while going on."""

    text: str
    token: int
    logprobs: Any
    from_draft: bool
    prompt_tokens: int
    prompt_tps: float
    generation_tokens: int
    generation_tps: float
    peak_memory: float
    finish_reason: str | None = None


def _logprobs(logits: Any) -> Any:
    return logits - mx.logsumexp(logits, axis=-1, keepdims=True)


def generate_step(
    prompt: Any,
    model: Any,
    *,
    max_tokens: int = 256,
    sampler: Callable[[Any], Any] | None = None,
    logits_processors: list[Callable[[Any, Any], Any]] | None = None,
    prompt_cache: list | None = None,
    prefill_step_size: int = 2048,
    max_kv_size: int | None = None,
    kv_bits: int | None = None,
    kv_group_size: int = 64,
    quantized_kv_start: int = 0,
    kv_dtype: Any = None,
) -> Generator[tuple[int, Any], None, None]:
    """Yield ``(token, logprobs)`` for up to ``max_tokens`` tokens after ``prompt`` (1-d ids).
    The prompt is prefilled in chunks of at most ``prefill_step_size`` tokens; ``prompt_cache`` (from
    ``make_prompt_cache``) may hold earlier turns and is extended in place. ``max_kv_size``:
    rotating caches of that size; ``kv_bits``: caches quantized once they hold
    ``quantized_kv_start`` positions (mlx-lm's options); ``kv_dtype``: the new plain caches'
    dtype (nuvec's own: ``make_prompt_cache``)."""
    prompt = mx.array(prompt) if not isinstance(prompt, mx.array) else prompt
    if prompt.ndim != 1 or prompt.size == 0:
        raise ValueError("the prompt must be a non-empty 1-d sequence of token ids")
    sampler = sampler or make_sampler()
    cache = (
        prompt_cache
        if prompt_cache is not None
        else make_prompt_cache(model, max_kv_size, kv_dtype=kv_dtype)
    )
    tokens = None  # what the logits processors see: the prompt and the tokens so far

    def quantize() -> None:
        maybe_quantize_kv_cache(cache, quantized_kv_start, kv_group_size, kv_bits)

    decode = compiled_decode(model)

    def step(y: Any) -> tuple[Any, Any]:
        nonlocal tokens
        if logits_processors:
            tokens = y if tokens is None else mx.concatenate([tokens, y])
        logits = decode.logits(y[None], cache)
        quantize()
        for processor in logits_processors or ():
            logits = processor(tokens, logits)
        logprobs = _logprobs(logits)
        return sampler(logprobs), logprobs[0]

    # All but the last prompt token fill the cache in chunks whose logits are never evaluated (so
    # the head, 49152 x 576 for SmolLM2, runs for the last token only).
    while prompt.size > 1:
        size = min(prefill_step_size, prompt.size - 1)
        chunk, prompt = prompt[:size], prompt[size:]
        if logits_processors:
            tokens = chunk if tokens is None else mx.concatenate([tokens, chunk])
        model(chunk[None], cache=cache)
        quantize()
        mx.eval([c.state for c in cache])
    y, logprobs = step(prompt)
    queue(y, logprobs)
    n = 0
    while n < max_tokens:
        if n + 1 < max_tokens:
            next_y, next_logprobs = step(y)
            queue(next_y, next_logprobs)
        yield y.item(), logprobs
        n += 1
        if n < max_tokens:
            y, logprobs = next_y, next_logprobs


def _encode(tokenizer: Any, prompt: Any) -> Any:
    if isinstance(prompt, str):
        bos = tokenizer.bos_token
        add_special = bos is None or not prompt.startswith(bos)
        prompt = tokenizer.encode(prompt, add_special_tokens=add_special)
    return mx.array(prompt) if not isinstance(prompt, mx.array) else prompt


def stream_generate(
    model: Any,
    tokenizer: Any,
    prompt: Any,
    max_tokens: int = 256,
    draft_model: Any = None,
    **kwargs: Any,
) -> Generator[GenerationResponse, None, None]:
    """Generate from ``prompt`` (a string, already templated if it should be, or token ids),
    yielding a ``GenerationResponse`` per token; stops at an end token or after ``max_tokens``.
    ``kwargs`` go to ``generate_step`` (``sampler``, ``logits_processors``, ``prompt_cache``), or
    with a ``draft_model`` to ``speculative_generate_step`` (also ``num_draft_tokens``)."""
    prompt = _encode(tokenizer, prompt)
    if draft_model is None:
        steps = (
            (t, lp, False)
            for t, lp in generate_step(prompt, model, max_tokens=max_tokens, **kwargs)
        )
    else:
        steps = speculative_generate_step(
            prompt, model, draft_model, max_tokens=max_tokens, **kwargs
        )
    detokenizer = tokenizer.detokenizer
    mx.reset_peak_memory()
    tic = time.perf_counter()
    token, logprobs, n, prompt_tps, from_draft = None, None, -1, 0.0, False
    for n, (token, logprobs, from_draft) in enumerate(steps):
        if n == 0:
            prompt_tps = prompt.size / (time.perf_counter() - tic)
            tic = time.perf_counter()
        if token in tokenizer.eos_token_ids:
            break
        detokenizer.add_token(token)
        if n + 1 == max_tokens:
            break
        yield GenerationResponse(
            detokenizer.last_segment, token, logprobs, from_draft, prompt.size, prompt_tps,
            n + 1, (n + 1) / (time.perf_counter() - tic), mx.get_peak_memory() / 1e9,
        )  # fmt: skip
    if token is None:
        return
    detokenizer.finalize()
    stopped = token in tokenizer.eos_token_ids
    yield GenerationResponse(
        detokenizer.last_segment, token, logprobs, from_draft, prompt.size, prompt_tps,
        n + 1, (n + 1) / max(time.perf_counter() - tic, 1e-9), mx.get_peak_memory() / 1e9,
        "stop" if stopped else "length",
    )  # fmt: skip


def generate(model: Any, tokenizer: Any, prompt: Any, verbose: bool = False, **kwargs: Any) -> str:
    """The text generated from ``prompt`` (see ``stream_generate``); ``verbose`` prints it as it
    comes and then the speeds and peak memory, as mlx-lm."""
    if verbose:
        print("=" * 10)
    text = ""
    response = None
    for response in stream_generate(model, tokenizer, prompt, **kwargs):
        if verbose:
            print(response.text, end="", flush=True)
        text += response.text
    if verbose and response is not None:
        print("\n" + "=" * 10)
        print(f"Prompt: {response.prompt_tokens} tokens, {response.prompt_tps:.3f} tokens-per-sec")
        print(
            f"Generation: {response.generation_tokens} tokens, "
            f"{response.generation_tps:.3f} tokens-per-sec"
        )
        print(f"Peak memory: {response.peak_memory:.3f} GB")
        sys.stdout.flush()
    return text


@dataclass
class BatchResponse:
    """``batch_generate``'s result: each prompt's text and generated token ids."""

    texts: list[str]
    tokens: list[list[int]] = field(default_factory=list)


def batch_generate(
    model: Any,
    tokenizer: Any,
    prompts: list[list[int]],
    max_tokens: int = 256,
    sampler: Callable[[Any], Any] | None = None,
) -> BatchResponse:
    """Generate from several tokenized prompts at once: left-padded to one length, each row with
    its own rotary positions and a mask that hides its pads (``BatchKVCache``), so a row's tokens
    are those it gets alone. A row stops at an end token; the batch at ``max_tokens``."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("batch_generate needs non-empty prompts")
    sampler = sampler or make_sampler()
    width = max(len(p) for p in prompts)
    padding = [width - len(p) for p in prompts]
    cache = make_prompt_cache(model, left_padding=padding)
    x = mx.array([[0] * pad + list(p) for pad, p in zip(padding, prompts)])
    out: list[list[int]] = [[] for _ in prompts]
    done = [False] * len(prompts)
    for _ in range(max_tokens):
        y = sampler(_logprobs(model(x, cache=cache)[:, -1, :]))
        for i, t in enumerate(y.tolist()):
            if not done[i]:
                done[i] = t in tokenizer.eos_token_ids
                if not done[i]:
                    out[i].append(t)
        if all(done):
            break
        x = y[:, None]
    return BatchResponse([tokenizer.decode(t) for t in out], out)
