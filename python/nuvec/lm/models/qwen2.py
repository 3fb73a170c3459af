"""Qwen2 (and Qwen2.5): the llama blocks with biases on the query, key and value projections, as
mlx-lm's ``mlx_lm.models.qwen2``."""

from __future__ import annotations

from dataclasses import dataclass

from . import llama

__all__ = ["Model", "ModelArgs"]


@dataclass
class ModelArgs(llama.ModelArgs):
    rope_theta: float = 1000000.0
    attention_bias: bool = True  # Qwen2 always has q/k/v biases (o_proj has none)
    tie_word_embeddings: bool = True


Model = llama.Model
