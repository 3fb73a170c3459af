"""Qwen3-MoE: Qwen3's attention with a sparse mixture-of-experts feed-forward layer, as mlx-lm's
``mlx_lm.models.qwen3_moe``. The router (``mlp.gate``) scores every expert, a precise softmax makes
them probabilities, each token takes its ``num_experts_per_tok`` best (renormalized when
``norm_topk_prob``), and ``SwitchGLU`` (``mlp.switch_mlp``, ``gather_mm`` / ``gather_qmm``) runs
them. Layers listed in ``mlp_only_layers`` or off the ``decoder_sparse_step`` keep a dense MLP.

Hugging Face files hold one tensor per expert (``mlp.experts.{e}.gate_proj.weight``);
``sanitize`` stacks them into the switch layers' ``(experts, out, in)`` weights."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import _core as mx
from ...nn.layers.base import Module
from . import llama, qwen3
from .switch_layers import SwitchGLU, stack_experts

__all__ = ["Model", "ModelArgs", "SparseMoeBlock"]


@dataclass
class ModelArgs(qwen3.ModelArgs):
    num_experts: int = 0
    num_experts_per_tok: int = 2
    moe_intermediate_size: int = 0
    decoder_sparse_step: int = 1
    mlp_only_layers: list[int] = field(default_factory=list)
    norm_topk_prob: bool = False
    tie_word_embeddings: bool = False


class SparseMoeBlock(Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.top_k, self.norm_topk_prob = args.num_experts_per_tok, args.norm_topk_prob
        self.gate = llama._linear(args.hidden_size, args.num_experts)
        self.switch_mlp = SwitchGLU(args.hidden_size, args.moe_intermediate_size, args.num_experts)

    def __call__(self, x: Any) -> Any:
        gates = mx.softmax(self.gate(x), axis=-1, precise=True)
        k = self.top_k
        inds = mx.argpartition(gates, kth=-k, axis=-1)[..., -k:]
        scores = mx.take_along_axis(gates, inds, axis=-1)
        if self.norm_topk_prob:
            scores = scores / scores.sum(axis=-1, keepdims=True)
        y = self.switch_mlp(x, inds)
        return (y * scores[..., None]).sum(axis=-2)


def _mlp(args: ModelArgs, i: int) -> Module:
    sparse = args.num_experts > 0 and (i + 1) % args.decoder_sparse_step == 0
    if sparse and i not in args.mlp_only_layers:
        return SparseMoeBlock(args)
    return llama.MLP(args.hidden_size, args.intermediate_size)


class Model(qwen3.Model):
    def __init__(self, args: ModelArgs):
        super().__init__(args, mlp=_mlp)

    def sanitize(self, weights: dict[str, Any]) -> dict[str, Any]:
        """Stack Hugging Face's per-expert tensors into the switch layers' weights."""
        prefixes = [f"model.layers.{i}.mlp" for i in range(self.args.num_hidden_layers)]
        names = {n: n for n in ("gate_proj", "up_proj", "down_proj")}
        return stack_experts(weights, prefixes, self.args.num_experts, names)

    @property
    def quant_predicate(self) -> Any:
        """The router stays at 8 bits when the model is quantized (mlx-lm's choice)."""
        return router_at_8_bits


def router_at_8_bits(path: str, module: Module) -> Any:
    """``nn.quantize``'s predicate: the routers (``mlp.gate``) at 8 bits in groups of 64, every
    other layer that can be quantized at the call's settings (mlx-lm's choice for Qwen3-MoE)."""
    if not hasattr(module, "to_quantized"):
        return False
    if path.endswith("mlp.gate"):
        return {"group_size": 64, "bits": 8}
    return True
