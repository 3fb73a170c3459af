"""Speculative decoding, as mlx-lm's ``speculative_generate_step``: a small draft model proposes
``num_draft_tokens`` tokens one by one, the model scores them all in one call, and the tokens it
would have chosen itself are kept up to the first disagreement, where its own token replaces the
draft's; both caches are then trimmed back to what was kept.

Greedy output is token for token (and log-probability for log-probability) that of plain
``generate_step``: the prompt fills the caches in the same chunks, and the verify call's rows
(the last accepted token and the drafts: 2 to 8 rows for up to 7 draft tokens) get the bits of
one-row calls, by row independence of the products and the serial rule of attention
(docs/determinism.md). With more than 7 draft tokens the rows are equal to float32 rounding."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from .. import _core as mx
from .decode import compiled_decode
from .models.cache import KVCache, RotatingKVCache, make_prompt_cache, maybe_quantize_kv_cache
from .overlap import queue
from .sample_utils import make_sampler

__all__ = ["speculative_generate_step"]


def _rewind(cache: list, n: int) -> None:
    if n > 0 and any(c.trim(n) != n for c in cache):
        raise ValueError(
            "speculative decoding needs caches that can forget the rejected drafts (a rotating "
            "cache updated one token at a time cannot, once its window is full)"
        )


def _draft_caches(draft_model: Any, kv_dtype: Any = None) -> list:
    """The draft model's caches, with plain caches where it has sliding windows: a rotating
    cache the draft fills one token at a time cannot forget rejected drafts, while a plain one
    with the window's mask attends to the same keys (at the cost of keeping them all)."""
    return [
        KVCache(kv_dtype) if isinstance(c, RotatingKVCache) else c
        for c in make_prompt_cache(draft_model, kv_dtype=kv_dtype)
    ]


def speculative_generate_step(
    prompt: Any,
    model: Any,
    draft_model: Any,
    *,
    num_draft_tokens: int = 2,
    max_tokens: int = 256,
    sampler: Callable[[Any], Any] | None = None,
    logits_processors: list[Callable[[Any, Any], Any]] | None = None,
    prompt_cache: list | None = None,
    prefill_step_size: int = 2048,
    kv_bits: int | None = None,
    kv_group_size: int = 64,
    quantized_kv_start: int = 0,
    kv_dtype: Any = None,
) -> Generator[tuple[int, Any, bool], None, None]:
    """Yield ``(token, logprobs, from_draft)`` for up to ``max_tokens`` tokens after ``prompt``.
    ``prompt_cache``: the model's caches followed by the draft model's (extended in place);
    ``from_draft`` says whether the token was the draft's proposal, accepted; ``kv_bits``,
    ``kv_group_size``, ``quantized_kv_start``, ``kv_dtype``: as ``generate_step``'s."""
    prompt = mx.array(prompt) if not isinstance(prompt, mx.array) else prompt
    if prompt.ndim != 1 or prompt.size == 0:
        raise ValueError("the prompt must be a non-empty 1-d sequence of token ids")
    if num_draft_tokens < 1:
        raise ValueError("num_draft_tokens must be at least 1")
    sampler = sampler or make_sampler()
    if prompt_cache is None:
        model_cache = make_prompt_cache(model, kv_dtype=kv_dtype)
        draft_cache = _draft_caches(draft_model, kv_dtype)
    else:
        model_cache = prompt_cache[: len(model.layers)]
        draft_cache = prompt_cache[len(model.layers) :]
    history = None  # what the logits processors see: the prompt and the tokens kept so far

    def sample(tokens: Any, logits: Any) -> tuple[Any, Any]:
        for processor in logits_processors or ():
            logits = processor(tokens, logits)
        logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        return sampler(logprobs), logprobs

    draft_decode = compiled_decode(draft_model)

    def step(net: Any, cache: list, y: Any, n_predict: int = 1) -> tuple[Any, Any]:
        """The tokens and log-probabilities after each of ``y``'s last ``n_predict`` positions
        (the draft's one-token steps compiled where they can be: the same bits)."""
        nonlocal history
        if net is draft_model and n_predict == 1:  # a draft step (the model may be its own draft)
            logits = draft_decode.logits(y[None], cache)
        else:
            logits = net(y[None], cache=cache)[0, -n_predict:, :]
        maybe_quantize_kv_cache(cache, quantized_kv_start, kv_group_size, kv_bits)
        if not logits_processors:
            return sample(None, logits)
        out_y, out_lp = [], []
        y = y[: y.size - n_predict + 1]  # the processors see the drafts one at a time
        for i in range(n_predict):
            history = y if history is None else mx.concatenate([history, y])
            y, lp = sample(history, logits[i : i + 1])
            out_y.append(y)
            out_lp.append(lp)
        return mx.concatenate(out_y), mx.concatenate(out_lp)

    def prefill(net: Any, cache: list, y: Any) -> None:
        # As generate_step: all but the last prompt token, in the same chunks (the same bits).
        while y.size > 1:
            size = min(prefill_step_size, y.size - 1)
            net(y[:size][None], cache=cache)
            maybe_quantize_kv_cache(cache, quantized_kv_start, kv_group_size, kv_bits)
            mx.eval([c.state for c in cache])
            y = y[size:]

    prefill(draft_model, draft_cache, prompt)
    prefill(model, model_cache, prompt)
    if logits_processors:
        history = prompt[:-1]
    y = draft_y = prompt[-1:]
    ntoks = 0
    while ntoks < max_tokens:
        num_draft = min(max_tokens - ntoks, num_draft_tokens)
        drafts = []
        dy = draft_y
        keep_history = history
        for _ in range(num_draft):
            dy, _ = step(draft_model, draft_cache, dy)
            queue(dy)
            drafts.append(dy)
        history = keep_history  # the draft's steps must not extend the model's history
        draft_tokens = mx.concatenate(drafts)
        tokens, logprobs = step(
            model, model_cache, mx.concatenate([y, draft_tokens]), num_draft + 1
        )
        mx.eval(tokens, draft_tokens)
        tokens, draft_list = tokens.tolist(), draft_tokens.tolist()
        n = 0  # drafts accepted
        while n < num_draft and tokens[n] == draft_list[n]:
            n += 1
        # Forget the rejected drafts before handing out tokens: the consumer may stop at any.
        if history is not None:
            history = history[: history.size - (num_draft - n)]
        _rewind(model_cache, num_draft - n)
        _rewind(draft_cache, max(num_draft - n - 1, 0))
        for i in range(min(n + 1, max_tokens - ntoks)):
            yield tokens[i], logprobs[i], i < n
        ntoks += min(n + 1, max_tokens - ntoks)
        y = mx.array([tokens[n]], dtype=prompt.dtype)
        # All drafts kept: the draft model has not seen its last one yet.
        draft_y = mx.array([draft_list[-1], tokens[n]], prompt.dtype) if n == num_draft else y
