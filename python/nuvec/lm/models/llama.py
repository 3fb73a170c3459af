"""The llama family (Llama 2/3, SmolLM2, Mistral without a sliding window): mlx-lm's
``mlx_lm.models.llama`` on nuvec.nn and nuvec.fast, with its parameter names.

Pre-norm blocks of grouped-query attention (rotary positions, ``fast.scaled_dot_product_attention``
over the cache) and a SwiGLU MLP, an RMSNorm, and a head tied to the embedding or separate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ... import fast
from ...nn.layers.activations import silu
from ...nn.layers.base import Module
from .cache import KVCache
from .rope_utils import initialize_rope

__all__ = ["Attention", "MLP", "Model", "ModelArgs", "RMSNorm", "TransformerBlock"]


@dataclass
class ModelArgs:
    """The architecture, with the names of a Hugging Face ``config.json``."""

    model_type: str
    hidden_size: int
    num_hidden_layers: int
    intermediate_size: int
    num_attention_heads: int
    vocab_size: int
    rms_norm_eps: float = 1e-5
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    rope_theta: float = 10000.0
    rope_traditional: bool = False
    rope_scaling: dict | None = None
    tie_word_embeddings: bool = True
    max_position_embeddings: int | None = None

    def __post_init__(self) -> None:
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads


class RMSNorm(Module):
    """``fast.rms_norm`` with a learned ``weight``."""

    def __init__(self, dims: int, eps: float):
        super().__init__()
        self.weight = mx.ones((dims,))
        self.eps = eps

    def __call__(self, x: Any) -> Any:
        return fast.rms_norm(x, self.weight, self.eps)


def _linear(din: int, dout: int) -> Module:
    from ...nn.layers.linear import Linear

    return Linear(din, dout, bias=False)


class Attention(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        dim, hd = args.hidden_size, args.head_dim
        self.n_heads, self.n_kv_heads = args.num_attention_heads, args.num_key_value_heads
        self.scale = hd**-0.5
        self.head_dim = hd
        self.rope = initialize_rope(
            hd, args.rope_theta, args.rope_traditional, args.rope_scaling,
            args.max_position_embeddings,
        )  # fmt: skip
        self.q_proj = _linear(dim, self.n_heads * hd)
        self.k_proj = _linear(dim, self.n_kv_heads * hd)
        self.v_proj = _linear(dim, self.n_kv_heads * hd)
        self.o_proj = _linear(self.n_heads * hd, dim)

    def __call__(self, x: Any, mask: Any = None, cache: KVCache | None = None) -> Any:
        B, L, _ = x.shape
        q = self.q_proj(x).reshape(B, L, self.n_heads, -1).transpose(0, 2, 1, 3)
        k = self.k_proj(x).reshape(B, L, self.n_kv_heads, -1).transpose(0, 2, 1, 3)
        v = self.v_proj(x).reshape(B, L, self.n_kv_heads, -1).transpose(0, 2, 1, 3)
        offset = cache.offset if cache is not None else 0
        q, k = self.rope(q, offset), self.rope(k, offset)
        if cache is not None:
            k, v = cache.update_and_fetch(k, v)
        o = fast.scaled_dot_product_attention(q, k, v, scale=self.scale, mask=mask)
        return self.o_proj(o.transpose(0, 2, 1, 3).reshape(B, L, -1))


class MLP(Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_proj = _linear(dim, hidden)
        self.up_proj = _linear(dim, hidden)
        self.down_proj = _linear(hidden, dim)

    def __call__(self, x: Any) -> Any:
        return self.down_proj(silu(self.gate_proj(x)) * self.up_proj(x))


class TransformerBlock(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.self_attn = Attention(args)
        self.mlp = MLP(args.hidden_size, args.intermediate_size)
        self.input_layernorm = RMSNorm(args.hidden_size, args.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, x: Any, mask: Any = None, cache: KVCache | None = None) -> Any:
        h = x + self.self_attn(self.input_layernorm(x), mask, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class LlamaModel(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        from ...nn.layers.embedding import Embedding

        self.embed_tokens = Embedding(args.vocab_size, args.hidden_size)
        self.layers = [TransformerBlock(args) for _ in range(args.num_hidden_layers)]
        self.norm = RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, inputs: Any, cache: list[KVCache] | None = None) -> Any:
        h = self.embed_tokens(inputs)
        if cache is None:
            mask = "causal" if h.shape[1] > 1 else None
            cache = [None] * len(self.layers)  # type: ignore[list-item]
        else:
            mask = cache[0].make_mask(h.shape[1])
        for layer, c in zip(self.layers, cache):
            h = layer(h, mask, c)
        return self.norm(h)


class Model(Module):
    """``model(inputs, cache=None)``: logits ``(B, L, vocab)`` for token ids ``(B, L)``."""

    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.model_type = args.model_type
        self.model = LlamaModel(args)
        if not args.tie_word_embeddings:
            self.lm_head = _linear(args.hidden_size, args.vocab_size)

    def __call__(self, inputs: Any, cache: list[KVCache] | None = None) -> Any:
        h = self.model(inputs, cache)
        if self.args.tie_word_embeddings:
            return self.model.embed_tokens.as_linear(h)
        return self.lm_head(h)

    @property
    def layers(self) -> list[TransformerBlock]:
        return self.model.layers
