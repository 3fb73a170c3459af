"""Positional encodings: rotary (RoPE), sinusoidal and ALiBi attention biases (MLX's)."""

from __future__ import annotations

import math

import nuvec as mx

from ..._errors import op_error
from .base import Module


def _rope_positions(x: mx.array, offset: int | mx.array) -> mx.array:
    """Positions of the sequence axis (-2), shaped to broadcast against x[..., :1]."""
    length = x.shape[-2]
    positions = mx.arange(length, dtype=mx.float32)
    if not isinstance(offset, mx.array):
        return (positions + offset).reshape(length, 1)
    if not mx.issubdtype(offset.dtype, mx.integer):
        raise ValueError(f"[rope] offset must be an integer but got type {offset.dtype}.")
    if offset.ndim == 0:
        return (positions + offset).reshape(length, 1)
    if offset.ndim != 1 or offset.size != x.shape[0]:
        raise ValueError(
            f"[rope] offset must be a scalar or vector with {x.shape[0]} elements"
            f" but has shape {tuple(offset.shape)}."
        )
    # One offset per batch entry (the first axis).
    batch_shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    return positions.reshape(length, 1) + offset.reshape(batch_shape)


def _rope(
    x: mx.array,
    dims: int,
    traditional: bool,
    base: float,
    scale: float,
    offset: int | mx.array,
) -> mx.array:
    """Rotates feature pairs of x[..., :dims] by angles (offset + position) * scale * base^(-2i/dims).

    Pairs are (i, i + dims/2), or adjacent (2i, 2i + 1) when ``traditional``; features past
    ``dims`` pass unchanged. Computed as mx.fast.rope does, so results agree to the bit in float32.
    """
    if x.ndim < 3:
        raise ValueError(
            f"[rope] Input must have at least 3 dimensions but got input with {x.ndim} dimensions."
        )
    if not mx.issubdtype(x.dtype, mx.floating):
        raise ValueError(f"[rope] Input must be a floating type but got {x.dtype}.")
    if dims % 2 != 0:
        raise ValueError(f"[rope] dims must be even but got {dims}.")
    if dims > x.shape[-1]:
        raise ValueError(
            f"[rope] dims must not exceed the input's last dimension ({x.shape[-1]}) but got {dims}."
        )
    half = dims // 2
    inv_freq = mx.exp(mx.arange(half, dtype=mx.float32) * (-math.log(base) / half))
    theta = _rope_positions(x, offset) * scale * inv_freq
    cos, sin = mx.cos(theta), mx.sin(theta)
    if traditional:
        x1, x2 = x[..., 0:dims:2], x[..., 1:dims:2]
    else:
        x1, x2 = x[..., :half], x[..., half:dims]
    y1 = x1 * cos - x2 * sin
    y2 = x1 * sin + x2 * cos
    if traditional:
        rotated = mx.stack([y1, y2], axis=-1).reshape(*x.shape[:-1], dims)
    else:
        rotated = mx.concatenate([y1, y2], axis=-1)
    rotated = rotated.astype(x.dtype)
    if dims < x.shape[-1]:
        rotated = mx.concatenate([rotated, x[..., dims:]], axis=-1)
    return rotated


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
        return _rope(x, self.dims, self.traditional, self.base, self.scale, offset)


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
