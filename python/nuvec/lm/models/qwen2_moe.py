"""Qwen2-MoE (Qwen1.5-MoE): Qwen2's attention (q/k/v biases) with a mixture of experts in every
block plus a shared expert, as mlx-lm's ``mlx_lm.models.qwen2_moe``. The router's precise
softmax gives each expert a probability; each token's ``num_experts_per_tok`` best run through
``SwitchGLU`` weighted by them (not renormalized); the shared expert, a dense SwiGLU MLP, is
added gated by ``sigmoid(shared_expert_gate(x))``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import _core as mx
from ...nn.layers.base import Module
from . import llama, qwen2
from .switch_layers import SwitchGLU, stack_experts

__all__ = ["Model", "ModelArgs", "SparseMoeBlock"]


@dataclass
class ModelArgs(qwen2.ModelArgs):
    num_experts: int = 0
    num_experts_per_tok: int = 4
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    tie_word_embeddings: bool = False


class SparseMoeBlock(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        dim = args.hidden_size
        self.top_k = args.num_experts_per_tok
        self.gate = llama._linear(dim, args.num_experts)
        self.switch_mlp = SwitchGLU(dim, args.moe_intermediate_size, args.num_experts)
        self.shared_expert = llama.MLP(dim, args.shared_expert_intermediate_size)
        self.shared_expert_gate = llama._linear(dim, 1)

    def __call__(self, x: Any) -> Any:
        gates = mx.softmax(self.gate(x), axis=-1, precise=True)
        k = self.top_k
        inds = mx.argpartition(-gates, kth=k - 1, axis=-1)[..., :k]
        scores = mx.take_along_axis(gates, inds, axis=-1)
        y = (self.switch_mlp(x, inds) * scores[..., None]).sum(axis=-2)
        return y + mx.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)


def _moe(args: ModelArgs, layer_idx: int) -> Module:
    return SparseMoeBlock(args)


class Model(llama.Model):
    def __init__(self, args: ModelArgs):
        super().__init__(args, mlp=_moe)

    def sanitize(self, weights: dict[str, Any]) -> dict[str, Any]:
        prefixes = [f"model.layers.{i}.mlp" for i in range(self.args.num_hidden_layers)]
        names = {n: n for n in ("gate_proj", "up_proj", "down_proj")}
        return stack_experts(weights, prefixes, self.args.num_experts, names)
