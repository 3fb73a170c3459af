"""Samplers and logits processors, as mlx-lm's ``mlx_lm.sample_utils``.

A sampler maps log-probabilities ``(B, vocab)`` to tokens ``(B,)``: greedy (``argmax``) at
temperature 0, else a draw from ``nuvec.random.categorical`` (seeded by ``nuvec.random.seed``)
after the filters that restrict the support (top-k, then top-p, then min-p, as mlx-lm orders
them). A logits processor maps ``(tokens so far, logits)`` to new logits."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import _core as mx
from .. import random

__all__ = [
    "apply_min_p",
    "apply_top_k",
    "apply_top_p",
    "categorical_sampling",
    "make_logits_processors",
    "make_repetition_penalty",
    "make_sampler",
]


def apply_top_k(logprobs: Any, top_k: int) -> Any:
    """Keep the ``top_k`` most likely tokens (the others get ``-inf``)."""
    vocab = logprobs.shape[-1]
    if not 0 < top_k <= vocab:
        raise ValueError(f"top_k must be in (0, {vocab}], got {top_k}")
    if top_k == vocab:
        return logprobs
    drop = mx.argpartition(-logprobs, kth=top_k - 1, axis=-1)[..., top_k:]
    return mx.put_along_axis(logprobs, drop, mx.array(-math.inf, logprobs.dtype), axis=-1)


def apply_min_p(logprobs: Any, min_p: float, min_tokens_to_keep: int = 1) -> Any:
    """Drop the tokens less likely than ``min_p`` times the most likely one, keeping at least
    ``min_tokens_to_keep``."""
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    order = mx.argsort(-logprobs, axis=-1)
    ranked = mx.take_along_axis(logprobs, order, axis=-1)
    threshold = ranked[..., :1] + math.log(min_p) if min_p > 0 else -math.inf
    keep = mx.logical_or(ranked >= threshold, mx.arange(ranked.shape[-1]) < min_tokens_to_keep)
    ranked = mx.where(keep, ranked, -math.inf)
    return mx.put_along_axis(logprobs, order, ranked, axis=-1)


def apply_top_p(logprobs: Any, top_p: float) -> Any:
    """Keep the most likely tokens whose probabilities sum to at least ``top_p`` (nucleus)."""
    if logprobs.ndim == 2 and logprobs.shape[0] == 1:  # one row: its 1-D gather and scatter
        return apply_top_p(logprobs[0], top_p)[None]
    order = mx.argsort(logprobs, axis=-1)  # ascending
    ranked = mx.take_along_axis(logprobs, order, axis=-1)
    cumulative = mx.cumsum(mx.exp(ranked), axis=-1)
    ranked = mx.where(cumulative > 1 - top_p, ranked, -math.inf)
    return mx.put_along_axis(logprobs, order, ranked, axis=-1)


def categorical_sampling(logits: Any, temp: float) -> Any:
    return random.categorical(logits * (1 / temp))


def make_sampler(
    temp: float = 0.0,
    top_p: float = 0.0,
    min_p: float = 0.0,
    min_tokens_to_keep: int = 1,
    top_k: int = 0,
) -> Callable[[Any], Any]:
    """A sampler (mlx-lm's arguments; its XTC sampling is not here): greedy at ``temp`` 0, else
    top-k (``top_k > 0``), top-p (``0 < top_p < 1``) and min-p (``min_p > 0``) filters, then a
    categorical draw at temperature ``temp``."""
    if temp < 0:
        raise ValueError(f"temp must be >= 0, got {temp}")
    if temp == 0:
        return lambda logprobs: mx.argmax(logprobs, axis=-1)
    filters: list[Callable[[Any], Any]] = []
    if top_k > 0:
        filters.append(lambda x: apply_top_k(x, top_k))
    if 0 < top_p < 1.0:
        filters.append(lambda x: apply_top_p(x, top_p))
    if min_p != 0.0:
        filters.append(lambda x: apply_min_p(x, min_p, min_tokens_to_keep))

    def sampler(logprobs: Any) -> Any:
        for f in filters:
            logprobs = f(logprobs)
        return categorical_sampling(logprobs, temp)

    return sampler


def make_repetition_penalty(penalty: float, context_size: int = 20) -> Callable[[Any, Any], Any]:
    """Divide the positive logits (multiply the negative ones) of the last ``context_size``
    tokens by ``penalty`` (CTRL's repetition penalty, as mlx-lm)."""
    if penalty < 0 or not isinstance(context_size, int) or context_size < 0:
        raise ValueError(f"bad repetition penalty {penalty} or context size {context_size}")

    def processor(tokens: Any, logits: Any) -> Any:
        if len(tokens) == 0:
            return logits
        recent = tokens[-context_size:]
        chosen = logits[:, recent]
        chosen = mx.where(chosen < 0, chosen * penalty, chosen / penalty)
        logits[:, recent] = chosen
        return logits

    return processor


def make_logits_processors(
    logit_bias: dict[int, float] | None = None,
    repetition_penalty: float | None = None,
    repetition_context_size: int | None = 20,
) -> list[Callable[[Any, Any], Any]]:
    """The processors for a logit bias (token id -> added logit) and a repetition penalty."""
    processors: list[Callable[[Any, Any], Any]] = []
    if logit_bias:
        indices = mx.array(list(logit_bias.keys()), dtype=mx.int32)
        values = mx.array(list(logit_bias.values()), dtype=mx.float32)
        processors.append(lambda _, logits: logits.at[:, indices].add(values))
    if repetition_penalty and repetition_penalty != 1.0:
        processors.append(
            make_repetition_penalty(repetition_penalty, repetition_context_size or 20)
        )
    return processors
