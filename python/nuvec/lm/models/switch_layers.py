"""Mixture-of-experts layers, as mlx-lm's ``mlx_lm.models.switch_layers``: ``SwitchLinear`` holds
one weight per expert ``(experts, out, in)`` and multiplies each token by its chosen experts'
weights through ``nuvec.gather_mm``; ``nn.quantize`` turns it into ``QuantizedSwitchLinear``
(``gather_qmm``); ``SwitchGLU`` is the gated MLP over them.

With 64 or more (token, expert) pairs the tokens are sorted by expert first (``sorted_indices``:
each expert's rows are contiguous), and unsorted after; gathered products are row independent,
so sorting does not change a row's bits."""

from __future__ import annotations

import math
from typing import Any

from ... import _core as mx
from ... import random
from ...nn.layers.activations import silu
from ...nn.layers.base import Module
from ...nn.layers.quantized import _product_args

__all__ = ["QuantizedSwitchLinear", "SwitchGLU", "SwitchLinear", "stack_experts"]


class SwitchLinear(Module):
    def __init__(self, input_dims: int, output_dims: int, num_experts: int, bias: bool = False):
        super().__init__()
        scale = math.sqrt(1 / input_dims)
        self.weight = random.uniform(
            low=-scale, high=scale, shape=(num_experts, output_dims, input_dims)
        )
        if bias:
            self.bias = mx.zeros((num_experts, output_dims))

    def __call__(self, x: Any, indices: Any, sorted_indices: bool = False) -> Any:
        x = mx.gather_mm(
            x, self["weight"].swapaxes(-1, -2), rhs_indices=indices, sorted_indices=sorted_indices
        )
        if "bias" in self:
            x = x + mx.expand_dims(self["bias"][indices], -2)
        return x

    def to_quantized(
        self, group_size: int = 64, bits: int = 4, mode: str = "affine", **_: Any
    ) -> QuantizedSwitchLinear:
        experts, out_dims, in_dims = self.weight.shape
        layer = QuantizedSwitchLinear(in_dims, out_dims, experts, False, group_size, bits, mode)
        layer.weight, layer.scales, *biases = mx.quantize(self.weight, group_size, bits, mode=mode)
        layer.biases = biases[0] if biases else None
        if "bias" in self:
            layer.bias = self.bias
        return layer


class QuantizedSwitchLinear(Module):
    """``SwitchLinear`` with packed weights: ``gather_qmm`` (transposed) per token's experts;
    ``activation_bits`` as ``nn.QuantizedLinear``'s."""

    activation_bits: int | None = None

    def __init__(
        self, input_dims: int, output_dims: int, num_experts: int, bias: bool = False,
        group_size: int = 64, bits: int = 4, mode: str = "affine",
    ):  # fmt: skip
        super().__init__()
        self.group_size, self.bits, self.mode = group_size, bits, mode
        scale = math.sqrt(1 / input_dims)
        w = random.uniform(low=-scale, high=scale, shape=(num_experts, output_dims, input_dims))
        self.weight, self.scales, *biases = mx.quantize(w, group_size, bits, mode=mode)
        self.biases = biases[0] if biases else None
        if bias:
            self.bias = mx.zeros((num_experts, output_dims))
        self.freeze()

    def __call__(self, x: Any, indices: Any, sorted_indices: bool = False) -> Any:
        x = mx.gather_qmm(
            x, self["weight"], self["scales"], self.get("biases"), rhs_indices=indices,
            transpose=True, sorted_indices=sorted_indices, **_product_args(self, x),
        )  # fmt: skip
        if "bias" in self:
            x = x + mx.expand_dims(self["bias"][indices], -2)
        return x


def _gather_sort(x: Any, indices: Any) -> tuple[Any, Any, Any]:
    """Rows of ``x`` repeated per chosen expert and ordered by expert, the sorted experts, and
    the order that undoes the sort."""
    m = indices.shape[-1]
    indices = indices.flatten()
    order = mx.argsort(indices)
    inverse = mx.argsort(order)
    return x.flatten(0, -3)[order // m], indices[order], inverse


class SwitchGLU(Module):
    """``down(silu(gate(x)) * up(x))`` with each token's ``indices`` ``(..., k)`` experts:
    returns ``(..., k, dims)``, one output per chosen expert."""

    def __init__(self, input_dims: int, hidden_dims: int, num_experts: int, bias: bool = False):
        super().__init__()
        self.gate_proj = SwitchLinear(input_dims, hidden_dims, num_experts, bias)
        self.up_proj = SwitchLinear(input_dims, hidden_dims, num_experts, bias)
        self.down_proj = SwitchLinear(hidden_dims, input_dims, num_experts, bias)

    def __call__(self, x: Any, indices: Any) -> Any:
        x = mx.expand_dims(x, (-2, -3))
        do_sort = indices.size >= 64
        idx, inverse = indices, None
        if do_sort:
            x, idx, inverse = _gather_sort(x, indices)
        up = self.up_proj(x, idx, sorted_indices=do_sort)
        gate = self.gate_proj(x, idx, sorted_indices=do_sort)
        x = self.down_proj(silu(gate) * up, idx, sorted_indices=do_sort)
        if do_sort:
            x = x[inverse].reshape(*indices.shape, *x.shape[1:])
        return x.squeeze(-2)


def stack_experts(
    weights: dict[str, Any], prefixes: list[str], num_experts: int, names: dict[str, str]
) -> dict[str, Any]:
    """Hugging Face's per-expert tensors ``{prefix}.experts.{e}.{name}.{part}`` stacked into the
    switch layers' ``{prefix}.switch_mlp.{ours}.{part}`` (``names``: theirs to ours), for the
    weights, and the scales and biases of a quantized file."""
    weights = dict(weights)
    for prefix in prefixes:
        for theirs, ours in names.items():
            for part in ("weight", "scales", "biases"):
                if f"{prefix}.experts.0.{theirs}.{part}" in weights:
                    weights[f"{prefix}.switch_mlp.{ours}.{part}"] = mx.stack([
                        weights.pop(f"{prefix}.experts.{e}.{theirs}.{part}")
                        for e in range(num_experts)
                    ])  # fmt: skip
    return weights
