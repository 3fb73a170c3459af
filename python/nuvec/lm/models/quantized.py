"""Quantized layers holding a file's packed weights: ``nn.QuantizedLinear`` and
``nn.QuantizedEmbedding`` over MLX's affine ``(w, scales, biases)`` triple (what
``nuvec.quantize`` makes and a GGUF's Q4_0/Q4_1/Q8_0 tensors load as)."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ...nn.layers.quantized import QuantizedEmbedding as _QuantizedEmbedding
from ...nn.layers.quantized import QuantizedLinear

__all__ = ["QuantizedEmbedding", "QuantizedLinear", "bits_of", "from_packed"]


def bits_of(w: Any, scales: Any, group_size: int) -> int:
    """The bits per element of a packed uint32 ``w`` whose rows have ``scales.shape[-1]`` groups."""
    return w.shape[-1] * 32 // (scales.shape[-1] * group_size)


class QuantizedEmbedding(_QuantizedEmbedding):
    """``nn.QuantizedEmbedding`` whose looked-up rows dequantize to float32. The layer of
    mlx.nn returns the scales' dtype, and a GGUF's scales are float16: each embedding value
    would be rounded to float16 (a Q8_0 value, an 8-bit code times an 11-bit scale, needs up to
    19 bits), where llama.cpp keeps float32. ``dequantize`` computes in the scales' dtype (as
    MLX's: its ``dtype`` argument only casts the result), so the looked-up scales and biases are
    made float32 first."""

    def __call__(self, x: Any) -> Any:
        scales, biases = (self[k][x].astype(mx.float32) for k in ("scales", "biases"))
        return mx.dequantize(self["weight"][x], scales, biases, self.group_size, self.bits)


def from_packed(kind: type, w: Any, scales: Any, biases: Any, group_size: int) -> Any:
    """A ``QuantizedLinear`` (no bias) or ``QuantizedEmbedding`` holding ``w``, ``scales`` and
    ``biases`` (rows: output features or table entries)."""
    bits = bits_of(w, scales, group_size)
    rows, dims = w.shape[0], w.shape[1] * 32 // bits
    if kind is QuantizedLinear:
        layer = QuantizedLinear(dims, rows, bias=False, group_size=group_size, bits=bits)
    else:
        layer = kind(rows, dims, group_size=group_size, bits=bits)
    layer.weight, layer.scales, layer.biases = w, scales, biases
    return layer
