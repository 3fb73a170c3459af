"""Phi-3 (and Phi-3.5, Phi-4-mini): the llama blocks with fused projections, as mlx-lm's
``mlx_lm.models.phi3``: ``qkv_proj`` (queries, keys, values stacked by rows) and
``gate_up_proj`` (gate, then up), a partial rotary factor, and linear or LongRoPE (``su`` /
``longrope``: per-frequency long factors and a magnitude scale) rope scaling."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ... import fast
from ...nn.layers.activations import silu
from ...nn.layers.base import Module
from . import llama
from .rope_utils import initialize_rope

__all__ = ["Model", "ModelArgs", "SuScaledRoPE"]


@dataclass
class ModelArgs(llama.ModelArgs):
    tie_word_embeddings: bool = False
    partial_rotary_factor: float = 1.0
    rope_scaling: dict | None = None
    original_max_position_embeddings: int = 4096
    max_position_embeddings: int | None = 131072


class SuScaledRoPE(Module):
    """LongRoPE (``su`` / ``longrope``), as mlx-lm's: the periods times the long factors (always
    those), the rotated features scaled by ``sqrt(1 + ln(f) / ln(original context))`` where the
    context grew by ``f``."""

    def __init__(self, dims: int, args: ModelArgs):
        super().__init__()
        self.dims = dims
        periods = args.rope_theta ** (mx.arange(0, dims, 2, dtype=mx.float32) / dims)
        self._freqs = mx.array(args.rope_scaling["long_factor"], dtype=mx.float32) * periods
        factor = args.max_position_embeddings / args.original_max_position_embeddings
        grown = math.sqrt(1 + math.log(factor) / math.log(args.original_max_position_embeddings))
        self.mscale = 1.0 if factor <= 1.0 else grown

    def __call__(self, x: Any, offset: Any = 0) -> Any:
        d = self.dims
        if self.mscale != 1.0:
            x = mx.concatenate([x[..., :d] * self.mscale, x[..., d:]], axis=-1)
        return fast.rope(
            x, d, traditional=False, base=None, scale=1.0, offset=offset, freqs=self._freqs
        )


class Attention(llama.Attention):
    def make_rope(self, args: Any, layer_idx: int) -> Module:
        dims = int(args.head_dim * args.partial_rotary_factor)
        scaling = args.rope_scaling or {}
        if scaling.get("rope_type", scaling.get("type")) in ("su", "longrope"):
            return SuScaledRoPE(dims, args)
        return initialize_rope(
            dims, args.rope_theta, args.rope_traditional, args.rope_scaling,
            args.max_position_embeddings,
        )  # fmt: skip

    def make_projections(self, args: llama.ModelArgs) -> None:
        size = (self.n_heads + 2 * self.n_kv_heads) * args.head_dim
        self.qkv_proj = llama._linear(args.hidden_size, size)

    def project(self, x: Any) -> tuple[Any, Any, Any]:
        q_end = self.n_heads * self.head_dim
        k_end = q_end + self.n_kv_heads * self.head_dim
        return tuple(mx.split(self.qkv_proj(x), [q_end, k_end], axis=-1))  # type: ignore[return-value]

    def _rope(self, x: Any, offset: Any) -> Any:
        if self._freqs is None:
            return super()._rope(x, offset)
        d = self.rope_dims
        if self.mscale != 1.0:
            x = mx.concatenate([x[..., :d] * self.mscale, x[..., d:]], axis=-1)
        return fast.rope(
            x, d, traditional=False, base=None, scale=1.0, offset=offset, freqs=self._freqs
        )


class MLP(Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_up_proj = llama._linear(dim, 2 * hidden)
        self.down_proj = llama._linear(hidden, dim)

    def __call__(self, x: Any) -> Any:
        gate, up = mx.split(self.gate_up_proj(x), 2, axis=-1)
        return self.down_proj(silu(gate) * up)


def _mlp(args: llama.ModelArgs, layer_idx: int) -> Module:
    return MLP(args.hidden_size, args.intermediate_size)


class Model(llama.Model):
    def __init__(self, args: ModelArgs):
        super().__init__(args, attention=Attention, mlp=_mlp)
