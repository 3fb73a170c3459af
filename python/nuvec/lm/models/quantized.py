"""Layers over MLX's affine-quantized weights (the ``(w, scales, biases)`` triple that
``nuvec.quantize`` makes and a GGUF's Q4_0/Q4_1/Q8_0 tensors load as).

nuvec.nn has no ``QuantizedLinear`` / ``QuantizedEmbedding`` yet; these two private layers hold the
same entries (``weight``, ``scales``, ``biases``, ``group_size``, ``bits``) so a later switch to
``nn.QuantizedLinear`` keeps the weight names."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ...nn.layers.base import Module

__all__ = ["QuantizedEmbedding", "QuantizedLinear", "bits_of"]


def bits_of(w: Any, scales: Any, group_size: int) -> int:
    """The bits per element of a packed uint32 ``w`` whose rows have ``scales.shape[-1]`` groups."""
    return w.shape[-1] * 32 // (scales.shape[-1] * group_size)


class QuantizedLinear(Module):
    """``x @ W.T (+ bias)`` with ``W`` affine-quantized: ``nuvec.quantized_matmul``."""

    def __init__(self, weight: Any, scales: Any, biases: Any, group_size: int, bias: Any = None):
        super().__init__()
        self.weight, self.scales, self.biases = weight, scales, biases
        if bias is not None:
            self.bias = bias
        self.group_size = group_size
        self.bits = bits_of(weight, scales, group_size)

    def __call__(self, x: Any) -> Any:
        y = mx.quantized_matmul(
            x, self.weight, self.scales, self.biases, True, self.group_size, self.bits
        )
        return y + self["bias"] if "bias" in self else y


class QuantizedEmbedding(Module):
    """Rows of an affine-quantized table, dequantized on lookup; ``as_linear`` is the tied head."""

    def __init__(self, weight: Any, scales: Any, biases: Any, group_size: int):
        super().__init__()
        self.weight, self.scales, self.biases = weight, scales, biases
        self.group_size = group_size
        self.bits = bits_of(weight, scales, group_size)

    def __call__(self, ids: Any) -> Any:
        return mx.dequantize(
            self.weight[ids], self.scales[ids], self.biases[ids], self.group_size, self.bits
        )

    def as_linear(self, x: Any) -> Any:
        return mx.quantized_matmul(
            x, self.weight, self.scales, self.biases, True, self.group_size, self.bits
        )
