"""Gemma 3's text model (``gemma3_text``), as mlx-lm's ``mlx_lm.models.gemma3_text``.

Sliding-window layers (``layer_types``, or every layer but each ``sliding_window_pattern``-th)
attend to the last ``sliding_window`` positions through a ``RotatingKVCache`` and turn with the
local rope base; the others are global (``rope_theta``, linear rope scaling where the config has
it). RMSNorms scale by ``1 + weight``; queries and keys are normed per head; the scores scale by
``query_pre_attn_scalar ** -0.5``; the embedding is multiplied by ``sqrt(hidden_size)`` rounded to
bfloat16 (as Gemma's reference code does); the MLP is GELU (tanh approximation) gated; each
block norms both branches before and after; the head is tied, its logits soft-capped by
``final_logit_softcapping`` where the config has it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ... import fast
from ...nn.layers.activations import gelu_approx
from ...nn.layers.base import Module
from . import llama
from .cache import KVCache, RotatingKVCache
from .fused import fused_call
from .rope_utils import initialize_rope

__all__ = ["Model", "ModelArgs"]


@dataclass
class ModelArgs:
    model_type: str
    hidden_size: int = 1152
    num_hidden_layers: int = 26
    intermediate_size: int = 6912
    num_attention_heads: int = 4
    head_dim: int = 256
    rms_norm_eps: float = 1.0e-6
    vocab_size: int = 262144
    num_key_value_heads: int = 1
    rope_theta: float = 1_000_000.0
    rope_local_base_freq: float = 10_000.0
    rope_traditional: bool = False
    rope_scaling: dict | None = None
    query_pre_attn_scalar: float = 256
    sliding_window: int = 512
    sliding_window_pattern: int = 6
    layer_types: list[str] | None = None
    final_logit_softcapping: float | None = None
    max_position_embeddings: int = 32768
    tie_word_embeddings: bool = True
    attention_bias: bool = False

    def is_sliding(self, i: int) -> bool:
        if self.layer_types is not None:
            return self.layer_types[i] == "sliding_attention"
        return (i + 1) % self.sliding_window_pattern != 0


class RMSNorm(llama.RMSNorm):
    """Gemma's RMSNorm: the weight is an offset from 1."""

    def __call__(self, x: Any) -> Any:
        return fast.rms_norm(x, 1.0 + self.weight, self.eps)


class Attention(llama.Attention):
    def __init__(self, args: ModelArgs, layer_idx: int):
        super().__init__(args, layer_idx)  # type: ignore[arg-type]
        self.scale = args.query_pre_attn_scalar**-0.5
        self.is_sliding = args.is_sliding(layer_idx)
        self.q_norm = RMSNorm(args.head_dim, args.rms_norm_eps)
        self.k_norm = RMSNorm(args.head_dim, args.rms_norm_eps)

    def make_rope(self, args: Any, layer_idx: int) -> Module:
        """The local base without scaling on sliding layers; the global one with the config's
        scaling on the others."""
        if args.is_sliding(layer_idx):
            return initialize_rope(args.head_dim, args.rope_local_base_freq, args.rope_traditional)
        return super().make_rope(args, layer_idx)

    def norm_qk(self, q: Any, k: Any) -> tuple[Any, Any]:
        return self.q_norm(q), self.k_norm(k)


class MLP(llama.MLP):
    def __call__(self, x: Any) -> Any:
        gate, up = fused_call(self, ("gate_proj", "up_proj"), x)
        return self.down_proj(gelu_approx(gate) * up)


class TransformerBlock(Module):
    def __init__(self, args: ModelArgs, layer_idx: int):
        super().__init__()
        self.self_attn = Attention(args, layer_idx)
        self.mlp = MLP(args.hidden_size, args.intermediate_size)
        dim, eps = args.hidden_size, args.rms_norm_eps
        self.input_layernorm = RMSNorm(dim, eps)
        self.post_attention_layernorm = RMSNorm(dim, eps)
        self.pre_feedforward_layernorm = RMSNorm(dim, eps)
        self.post_feedforward_layernorm = RMSNorm(dim, eps)

    def __call__(self, x: Any, mask: Any = None, cache: Any = None) -> Any:
        h = x + self.post_attention_layernorm(self.self_attn(self.input_layernorm(x), mask, cache))
        return h + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(h)))


class Gemma3Model(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        from ...nn.layers.embedding import Embedding

        self.args = args
        self.window = args.sliding_window
        self.sliding = [args.is_sliding(i) for i in range(args.num_hidden_layers)]
        self.embed_tokens = Embedding(args.vocab_size, args.hidden_size)
        self.layers = [TransformerBlock(args, i) for i in range(args.num_hidden_layers)]
        self.norm = RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, inputs: Any, cache: list | None = None) -> Any:
        h = self.embed_tokens(inputs)
        h = h * mx.array(self.args.hidden_size**0.5, mx.bfloat16).astype(h.dtype)
        return self.norm(llama.run_layers(h, self, cache))


class Model(Module):
    """``model(inputs, cache=None)``: logits ``(B, L, vocab)``."""

    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.model_type = args.model_type
        self.model = Gemma3Model(args)
        if not args.tie_word_embeddings:
            self.lm_head = llama._linear(args.hidden_size, args.vocab_size)

    def __call__(self, inputs: Any, cache: list | None = None) -> Any:
        h = self.model(inputs, cache)
        if self.args.tie_word_embeddings:
            logits = self.model.embed_tokens.as_linear(h)
        else:
            logits = self.lm_head(h)
        cap = self.args.final_logit_softcapping
        return logits if cap is None else mx.tanh(logits / cap) * cap

    @property
    def layers(self) -> list[TransformerBlock]:
        return self.model.layers

    def make_cache(self) -> list:
        """A ``RotatingKVCache`` of the window for each sliding layer, a ``KVCache`` for the rest."""
        return [RotatingKVCache(self.model.window) if s else KVCache() for s in self.model.sliding]
