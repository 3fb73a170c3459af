"""Rotary position encodings from a config's ``rope_scaling``, as mlx-lm's ``rope_utils``:
``initialize_rope`` gives ``nn.RoPE`` for the default and linear types and ``Llama3RoPE`` for
Llama 3.1's frequency-dependent scaling; ``FreqsRoPE`` for nuvec's "freq_factors" type, the
per-dimension divisors a GGUF file's ``rope_freqs`` tensor holds (llama.cpp's form of Llama 3.1's
scaling, written by its converter from the "llama3" parameters)."""

from __future__ import annotations

import math
from typing import Any

from ... import _core as mx
from ... import fast
from ...nn.layers.base import Module
from ...nn.layers.positional_encoding import RoPE

__all__ = ["FreqsRoPE", "Llama3RoPE", "initialize_rope"]


class FreqsRoPE(Module):
    """A rope with its own period per pair of dimensions (``fast.rope``'s ``freqs``): the default
    periods ``base ** (2i / dims)`` times ``factors`` (``dims // 2`` of them), as llama.cpp's rope
    divides each frequency by the GGUF's ``rope_freqs`` factor."""

    def __init__(self, dims: int, traditional: bool, base: float, factors: Any = None):
        super().__init__()
        self.dims, self.traditional = dims, traditional
        self._freqs = base ** (mx.arange(0, dims, 2, dtype=mx.float32) / dims)
        if factors is not None:
            factors = mx.array(factors, dtype=mx.float32)
            if factors.shape != (dims // 2,):
                raise ValueError(
                    f"rope freq_factors must hold {dims // 2} values, not {factors.shape}"
                )
            self._freqs = self._freqs * factors

    def __call__(self, x: Any, offset: Any = 0) -> Any:
        return fast.rope(
            x, self.dims, traditional=self.traditional, base=None, scale=1.0, offset=offset,
            freqs=self._freqs,
        )  # fmt: skip


class Llama3RoPE(FreqsRoPE):
    """Llama 3.1's rope: periods longer than the original context stretched by ``factor``, short
    ones kept, the band between blended smoothly (transformers' ``_compute_llama3_parameters``)."""

    def __init__(self, dims: int, traditional: bool, base: float, scaling: dict):
        super().__init__(dims, traditional, base)
        factor = scaling["factor"]
        low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
        context = scaling.get("original_max_position_embeddings", 8192)
        periods = self._freqs
        wavelens = 2 * math.pi * periods
        periods = mx.where(wavelens > context / low, periods * factor, periods)
        medium = (wavelens > context / high) & (wavelens < context / low)
        smooth = (context / wavelens - low) / (high - low)
        self._freqs = mx.where(medium, periods / ((1 - smooth) / factor + smooth), periods)


def initialize_rope(
    dims: int,
    base: float,
    traditional: bool,
    scaling_config: dict | None = None,
    max_position_embeddings: int | None = None,
) -> Module:
    """The rope a config describes: ``rope_scaling`` (or ``None``) with ``type`` / ``rope_type``
    "default", "linear" (positions divided by ``factor``), "llama3" or "freq_factors" (a list
    ``freq_factors``: the periods' multipliers, from a GGUF); others raise ValueError."""
    kind = "default"
    if scaling_config:
        kind = scaling_config.get("type") or scaling_config.get("rope_type", "default")
    if kind in ("default", "linear"):
        scale = 1.0 / scaling_config["factor"] if kind == "linear" else 1.0
        return RoPE(dims, traditional=traditional, base=base, scale=scale)
    if kind == "llama3":
        return Llama3RoPE(dims, traditional=traditional, base=base, scaling=scaling_config)
    if kind == "freq_factors":
        return FreqsRoPE(dims, traditional, base, scaling_config["freq_factors"])
    raise ValueError(
        f"unsupported rope type {kind!r} (supported: default, linear, llama3, freq_factors)"
    )
