"""Positional encodings: rotary (RoPE), sinusoidal and ALiBi attention biases (MLX's)."""

from __future__ import annotations

import math

import nuvec as mx

from ..._errors import op_error
from .base import Module


class RoPE(Module):
    """Rotary positional encoding of the first ``dims`` features (as mx.fast.rope computes it)."""

    def __init__(
        self, dims: int, traditional: bool = False, base: float = 10000, scale: float = 1.0
    ):
        super().__init__()
        self.dims = dims
        self.traditional = traditional
        self.base = base
        self.scale = scale

    def _extra_repr(self) -> str:
        return f"{self.dims}, traditional={self.traditional}"

    def __call__(self, x: mx.array, offset: int | mx.array = 0) -> mx.array:
        return mx.fast.rope(
            x,
            self.dims,
            traditional=self.traditional,
            base=self.base,
            scale=self.scale,
            offset=offset,
        )


class SinusoidalPositionalEncoding(Module):
    """Embeds positions as [sin(x * f); cos(x * f)] (or cos first) over geometric frequencies f
    from ``max_freq`` down to ``min_freq``, times ``scale`` (default sqrt(2 / dims))."""

    def __init__(
        self,
        dims: int,
        min_freq: float = 0.0001,
        max_freq: float = 1,
        scale: float | None = None,
        cos_first: bool = False,
        full_turns: bool = False,
    ):
        super().__init__()
        if dims <= 0 or dims % 2 != 0:
            raise ValueError(
                f"[SinusoidalPositionalEncoding] dims must be positive and even but got {dims}."
            )
        half = dims // 2
        # 1 down to 0 across the frequencies (a single frequency sits at max_freq).
        if half == 1:
            ramp = mx.array([1.0])
        else:
            ramp = 1 - mx.arange(0, half) / (half - 1)
        lo, hi = math.log(min_freq), math.log(max_freq)
        sigmas = mx.exp(ramp * (hi - lo) + lo)
        # The leading underscore keeps the frequencies out of parameters().
        self._sigmas = sigmas * (2 * math.pi) if full_turns else sigmas
        self.scale = scale if scale is not None else (2 / dims) ** 0.5
        self.cos_first = cos_first

    def __call__(self, x: mx.array) -> mx.array:
        y = x[..., None] * self._sigmas
        parts = [mx.cos(y), mx.sin(y)] if self.cos_first else [mx.sin(y), mx.cos(y)]
        y = mx.concatenate(parts, axis=-1)
        return y * self.scale if self.scale != 1 else y


def _alibi_slopes(n: int) -> list[float]:
    """Geometric head slopes; a count that is not a power of two borrows every other slope
    of the next power of two."""
    if math.log2(n).is_integer():
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]
    low = 2 ** math.floor(math.log2(n))
    return _alibi_slopes(low) + _alibi_slopes(2 * low)[0::2][: n - low]


class ALiBi(Module):
    """Adds attention biases proportional to the query-key distance, one slope per head."""

    @staticmethod
    def create_alibi_matrix(
        q_sequence_length: int,
        k_sequence_length: int,
        num_heads: int,
        offset: int = 0,
        dtype: mx.Dtype = mx.float32,
    ) -> mx.array:
        """The (1, num_heads, q_sequence_length - offset, k_sequence_length) bias."""
        q = mx.arange(offset, q_sequence_length)
        k = mx.arange(0, k_sequence_length)
        distance = -mx.abs(q[:, None] - k[None, :])[None, None]
        slopes = ALiBi.create_alibi_slope(num_heads=num_heads, dtype=dtype)
        return (distance * slopes).astype(dtype)

    @staticmethod
    def create_alibi_slope(num_heads: int, dtype: mx.Dtype = mx.float32) -> mx.array:
        """The (num_heads, 1, 1) head slopes."""
        return mx.array(_alibi_slopes(num_heads), dtype=dtype)[:, None, None]

    def __call__(
        self, attention_scores: mx.array, offset: int = 0, mask: mx.array | None = None
    ) -> mx.array:
        if attention_scores.ndim < 3:
            raise op_error(
                "ALiBi",
                f"expected attention scores (..., heads, queries, keys), got {attention_scores.ndim} dimensions",
            )
        bias = ALiBi.create_alibi_matrix(
            q_sequence_length=attention_scores.shape[-2] + offset,
            k_sequence_length=attention_scores.shape[-1],
            num_heads=attention_scores.shape[-3],
            offset=offset,
            dtype=attention_scores.dtype,
        )
        if mask is not None:
            bias = bias + mask
        return attention_scores + bias
