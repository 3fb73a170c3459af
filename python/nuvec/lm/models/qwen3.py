"""Qwen3: the llama blocks with an RMSNorm over each query and key head before rope, and an
explicit ``head_dim``, as mlx-lm's ``mlx_lm.models.qwen3``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import llama

__all__ = ["Attention", "Model", "ModelArgs"]


@dataclass
class ModelArgs(llama.ModelArgs):
    rope_theta: float = 1000000.0
    tie_word_embeddings: bool = True


class Attention(llama.Attention):
    def __init__(self, args: llama.ModelArgs, layer_idx: int = 0):
        super().__init__(args, layer_idx)
        self.q_norm = llama.RMSNorm(args.head_dim, args.rms_norm_eps)
        self.k_norm = llama.RMSNorm(args.head_dim, args.rms_norm_eps)

    def norm_qk(self, q: Any, k: Any) -> tuple[Any, Any]:
        return self.q_norm(q), self.k_norm(k)


class Model(llama.Model):
    def __init__(self, args: ModelArgs, mlp: Any = None):
        super().__init__(args, attention=Attention, mlp=mlp)
