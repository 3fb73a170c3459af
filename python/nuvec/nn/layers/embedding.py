"""``Embedding``: a table of vectors indexed by integer ids."""

from __future__ import annotations

import math
from typing import Any

from ... import random
from .base import Module


class Embedding(Module):
    """Maps ids in ``[0, num_embeddings)`` to rows of ``weight`` (``(num_embeddings, dims)``,
    drawn from N(0, 1/dims))."""

    def __init__(self, num_embeddings: int, dims: int) -> None:
        super().__init__()
        self.weight = random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))

    def _extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, {self.weight.shape[1]}"

    def __call__(self, x: Any) -> Any:
        return self.weight[x]

    def as_linear(self, x: Any) -> Any:
        """``x @ weight.T``: the table as an output projection (tied input and output weights)."""
        return x @ self.weight.T

    def to_quantized(
        self,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ) -> Module:
        """A ``QuantizedEmbedding`` with this layer's table quantized."""
        from .quantized import QuantizedEmbedding

        if quantize_input:
            raise ValueError("Quantized input is not supported.")
        return QuantizedEmbedding.from_embedding(self, group_size, bits, mode)
