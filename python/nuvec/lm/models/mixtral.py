"""Mixtral: llama attention with a sparse mixture-of-experts feed-forward layer in every block
(``block_sparse_moe``), as mlx-lm's ``mlx_lm.models.mixtral``. The router picks each token's
``num_experts_per_tok`` best experts by logit and weighs them by a precise softmax over those
logits only; ``SwitchGLU`` runs them. ``sanitize`` stacks Hugging Face's per-expert ``w1``
(gate), ``w2`` (down) and ``w3`` (up) tensors into the switch layers' weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ...nn.layers.base import Module
from . import llama
from .switch_layers import SwitchGLU, stack_experts

__all__ = ["Model", "ModelArgs", "SparseMoeBlock"]


@dataclass
class ModelArgs(llama.ModelArgs):
    rope_theta: float = 1e6
    tie_word_embeddings: bool = False
    num_local_experts: int = 8
    num_experts_per_tok: int = 2


class SparseMoeBlock(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.top_k = args.num_experts_per_tok
        self.gate = llama._linear(args.hidden_size, args.num_local_experts)
        self.switch_mlp = SwitchGLU(
            args.hidden_size, args.intermediate_size, args.num_local_experts
        )

    def __call__(self, x: Any) -> Any:
        gates = self.gate(x)
        k = self.top_k
        inds = mx.argpartition(-gates, kth=k - 1, axis=-1)[..., :k]
        scores = mx.softmax(mx.take_along_axis(gates, inds, axis=-1), axis=-1, precise=True)
        return (self.switch_mlp(x, inds) * scores[..., None]).sum(axis=-2)


class TransformerBlock(Module):
    def __init__(self, args: ModelArgs, layer_idx: int = 0, *_: Any):
        super().__init__()
        self.self_attn = llama.Attention(args, layer_idx)
        self.block_sparse_moe = SparseMoeBlock(args)
        self.input_layernorm = llama.RMSNorm(args.hidden_size, args.rms_norm_eps)
        self.post_attention_layernorm = llama.RMSNorm(args.hidden_size, args.rms_norm_eps)

    def __call__(self, x: Any, mask: Any = None, cache: Any = None) -> Any:
        h = x + self.self_attn(self.input_layernorm(x), mask, cache)
        return h + self.block_sparse_moe(self.post_attention_layernorm(h))


class Model(llama.Model):
    def __init__(self, args: ModelArgs):
        super().__init__(args, block=TransformerBlock)

    def sanitize(self, weights: dict[str, Any]) -> dict[str, Any]:
        prefixes = [
            f"model.layers.{i}.block_sparse_moe" for i in range(self.args.num_hidden_layers)
        ]
        names = {"w1": "gate_proj", "w2": "down_proj", "w3": "up_proj"}
        return stack_experts(weights, prefixes, self.args.num_local_experts, names)
