"""The llama family (Llama 2/3, SmolLM2, Mistral with or without its sliding window): mlx-lm's
``mlx_lm.models.llama`` on nuvec.nn and nuvec.fast, with its parameter names.

Pre-norm blocks of grouped-query attention (rotary positions, ``fast.scaled_dot_product_attention``
over the cache) and a SwiGLU MLP, an RMSNorm, and a head tied to the embedding or separate.
Qwen2, Qwen3, Phi-3 and Qwen3-MoE reuse these blocks with their own attention projections or
feed-forward layers (the ``attention`` and ``mlp`` factories of ``Model``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ... import fast
from ...nn.layers.activations import silu
from ...nn.layers.base import Module
from .base import create_attention_mask, scaled_dot_product_attention
from .cache import KVCache, RotatingKVCache
from .fused import fused_call
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
    attention_bias: bool = False
    sliding_window: int | None = None
    layer_types: list[str] | None = None  # "sliding_attention" layers use the window

    def is_sliding(self, i: int) -> bool:
        """Layer ``i`` attends to the last ``sliding_window`` positions only: where
        ``layer_types`` says so, or on every layer of a Mistral config with a window."""
        if self.sliding_window is None:
            return False
        if self.layer_types is not None:
            return self.layer_types[i] == "sliding_attention"
        return self.model_type == "mistral"

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


def _linear(din: int, dout: int, bias: bool = False) -> Module:
    from ...nn.layers.linear import Linear

    return Linear(din, dout, bias=bias)


class Attention(Module):
    """Grouped-query attention. Subclasses change ``project`` (fused or biased projections),
    ``norm_qk`` (per-head norms), ``rope`` (a module called with ``offset``) and ``scale``."""

    def __init__(self, args: ModelArgs, layer_idx: int = 0):
        super().__init__()
        dim, hd = args.hidden_size, args.head_dim
        self.n_heads, self.n_kv_heads = args.num_attention_heads, args.num_key_value_heads
        self.scale = hd**-0.5
        self.head_dim = hd
        self.rope = self.make_rope(args, layer_idx)
        self.make_projections(args)
        self.o_proj = _linear(self.n_heads * hd, dim)

    def make_rope(self, args: Any, layer_idx: int) -> Module:
        return initialize_rope(
            args.head_dim, args.rope_theta, args.rope_traditional, args.rope_scaling,
            args.max_position_embeddings,
        )  # fmt: skip

    def make_projections(self, args: ModelArgs) -> None:
        dim, hd, bias = args.hidden_size, args.head_dim, args.attention_bias
        self.q_proj = _linear(dim, self.n_heads * hd, bias)
        self.k_proj = _linear(dim, self.n_kv_heads * hd, bias)
        self.v_proj = _linear(dim, self.n_kv_heads * hd, bias)

    def project(self, x: Any) -> tuple[Any, Any, Any]:
        q, k, v = fused_call(self, ("q_proj", "k_proj", "v_proj"), x)
        return q, k, v

    def norm_qk(self, q: Any, k: Any) -> tuple[Any, Any]:
        """Queries and keys ``(B, L, heads, head_dim)`` before rope (Qwen3 and Gemma 3 norm them)."""
        return q, k

    def __call__(self, x: Any, mask: Any = None, cache: KVCache | None = None) -> Any:
        B, L, _ = x.shape
        q, k, v = self.project(x)
        q, k = self.norm_qk(q.reshape(B, L, self.n_heads, -1), k.reshape(B, L, self.n_kv_heads, -1))
        q, k = q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3)
        v = v.reshape(B, L, self.n_kv_heads, -1).transpose(0, 2, 1, 3)
        offset = cache.offset if cache is not None else 0
        q, k = self.rope(q, offset), self.rope(k, offset)
        if cache is not None:
            k, v = cache.update_and_fetch(k, v)
        if not isinstance(mask, (str, type(None))) and mask.shape[-1] != _length(k):
            mask = mask[..., -_length(k) :]  # a rotating cache keeps only the window
        o = scaled_dot_product_attention(q, k, v, cache, self.scale, mask)
        return self.o_proj(o.transpose(0, 2, 1, 3).reshape(B, L, -1))


def _length(keys: Any) -> int:
    """The key positions of a float cache's keys or a quantized cache's packed triple."""
    return (keys[0] if isinstance(keys, tuple) else keys).shape[-2]


class MLP(Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_proj = _linear(dim, hidden)
        self.up_proj = _linear(dim, hidden)
        self.down_proj = _linear(hidden, dim)

    def __call__(self, x: Any) -> Any:
        gate, up = fused_call(self, ("gate_proj", "up_proj"), x)
        return self.down_proj(silu(gate) * up)


def _mlp(args: ModelArgs, layer_idx: int) -> Module:
    return MLP(args.hidden_size, args.intermediate_size)


class TransformerBlock(Module):
    def __init__(self, args: ModelArgs, layer_idx: int = 0, attention: Any = None, mlp: Any = None):
        super().__init__()
        self.self_attn = (attention or Attention)(args, layer_idx)
        self.mlp = (mlp or _mlp)(args, layer_idx)
        self.input_layernorm = RMSNorm(args.hidden_size, args.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, x: Any, mask: Any = None, cache: KVCache | None = None) -> Any:
        h = x + self.self_attn(self.input_layernorm(x), mask, cache)
        return h + self.mlp(self.post_attention_layernorm(h))


class LlamaModel(Module):
    def __init__(self, args: ModelArgs, attention: Any = None, mlp: Any = None, block: Any = None):
        super().__init__()
        from ...nn.layers.embedding import Embedding

        self.window = args.sliding_window
        self.sliding = [args.is_sliding(i) for i in range(args.num_hidden_layers)]
        self.embed_tokens = Embedding(args.vocab_size, args.hidden_size)
        self.layers = [
            (block or TransformerBlock)(args, i, attention, mlp)
            for i in range(args.num_hidden_layers)
        ]
        self.norm = RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, inputs: Any, cache: list[KVCache] | None = None) -> Any:
        return self.norm(run_layers(self.embed_tokens(inputs), self, cache))


def run_layers(h: Any, model: Any, cache: list | None) -> Any:
    """``h`` through ``model.layers``, each with its cache and the mask of its kind (sliding
    window or full attention, ``model.sliding``), made once per kind by its first layer's cache."""
    cache = cache or [None] * len(model.layers)
    masks = {
        kind: create_attention_mask(
            h, cache[model.sliding.index(kind)], model.window if kind else None
        )
        for kind in set(model.sliding)
    }
    for layer, c, kind in zip(model.layers, cache, model.sliding):
        h = layer(h, masks[kind], c)
    return h


class Model(Module):
    """``model(inputs, cache=None)``: logits ``(B, L, vocab)`` for token ids ``(B, L)``."""

    def __init__(
        self, args: ModelArgs, attention: Any = None, mlp: Any = None, block: Any = None
    ) -> None:
        super().__init__()
        self.args = args
        self.model_type = args.model_type
        self.model = LlamaModel(args, attention, mlp, block)
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

    def make_cache(self) -> list[KVCache]:
        """A ``RotatingKVCache`` of the window for each sliding layer, a ``KVCache`` for the rest."""
        return [RotatingKVCache(self.model.window) if s else KVCache() for s in self.model.sliding]
