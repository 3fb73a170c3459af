"""Quantized projections that read the same input, run as one product (nuvec's own).

Attention's ``q_proj``, ``k_proj`` and ``v_proj`` read the same normed input, as do an MLP's
``gate_proj`` and ``up_proj``. ``fuse_projections`` stores each such group's packed weights,
scales and biases once, concatenated along the output rows, and gives every layer views of its
rows (no copy: the layers keep their names, files and arithmetic). A step of few rows then runs one
``quantized_matmul`` over the group and splits its output: within the row-independence promise
(docs/determinism.md) each output row has the bits of its own layer's product, so the results are
the separate products' bits, with fewer, larger products (a decode step of SmolLM2: 121 products
instead of 211). Longer inputs (prompts, past ``ROW_INDEPENDENT_ROWS``) run the layers one by one.

A group is used only while its layers still hold the views it made (``update``, ``load_weights`` or
``dequantize_model`` end it) and agree on every setting of the product.
"""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ...nn.layers.quantized import QuantizedLinear, _product_args

__all__ = ["FusedProjections", "fuse_projections", "fused_call"]

# The rows up to which quantized products promise each row its one-row bits (kRowIndependentRows
# of csrc/backend/cpu/quantized.h, docs/determinism.md).
ROW_INDEPENDENT_ROWS = 256

_PARTS = ("weight", "scales", "biases")


class FusedProjections:
    """The layers ``names`` of ``owner``, one product for inputs of few rows."""

    def __init__(self, owner: Any, names: tuple[str, ...]) -> None:
        self.owner, self.names = owner, names
        self.layers = [getattr(owner, n) for n in names]
        self.sizes = [layer.weight.shape[0] for layer in self.layers]
        self.fused = {p: mx.concatenate([layer[p] for layer in self.layers]) for p in _PARTS}
        mx.eval(list(self.fused.values()))
        start = 0
        for layer, size in zip(self.layers, self.sizes):
            for p in _PARTS:
                layer[p] = self.fused[p][start : start + size]
            start += size
        mx.eval([layer[p] for layer in self.layers for p in _PARTS])
        self.views = [[layer[p] for p in _PARTS] for layer in self.layers]
        self.splits = [sum(self.sizes[: i + 1]) for i in range(len(self.sizes) - 1)]

    def usable(self, x: Any) -> bool:
        if x.size > ROW_INDEPENDENT_ROWS * x.shape[-1]:
            return False
        first = _product_args(self.layers[0], x)
        return all(
            getattr(self.owner, n) is layer
            and all(layer[p] is v for p, v in zip(_PARTS, views))
            and _product_args(layer, x) == first
            for n, layer, views in zip(self.names, self.layers, self.views)
        )

    def __call__(self, x: Any) -> list[Any]:
        """The layers' outputs for ``x``, or the layers called one by one where the group cannot
        serve it."""
        if not self.usable(x):
            return [getattr(self.owner, n)(x) for n in self.names]
        y = mx.quantized_matmul(
            x, self.fused["weight"], scales=self.fused["scales"], biases=self.fused["biases"],
            transpose=True, **_product_args(self.layers[0], x),
        )  # fmt: skip
        parts = mx.split(y, self.splits, axis=-1)
        return [p + layer["bias"] if "bias" in layer else p for p, layer in zip(parts, self.layers)]


def _groupable(layers: list[Any]) -> bool:
    if not all(type(layer) is QuantizedLinear and layer.mode == "affine" for layer in layers):
        return False
    first = layers[0]
    return all(
        layer.group_size == first.group_size
        and layer.bits == first.bits
        and layer.weight.shape[1] == first.weight.shape[1]
        and layer.scales.dtype == first.scales.dtype
        and layer.biases.dtype == first.biases.dtype
        and ("bias" in layer) == ("bias" in first)
        for layer in layers
    )


def fuse_projections(model: Any) -> int:
    """Fuses every attention's q/k/v and every MLP's gate/up projections of ``model`` that are
    affine ``QuantizedLinear`` layers of one format (each module keeps its groups in
    ``vars(module)["fused"]``, keyed by the layers' names); returns how many groups were made."""
    made = 0
    for module in model.modules():
        for names in (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj")):
            layers = [module.get(n) for n in names]
            if all(isinstance(layer, QuantizedLinear) for layer in layers) and _groupable(layers):
                vars(module).setdefault("fused", {})[names] = FusedProjections(module, names)
                made += 1
    return made


def fused_call(module: Any, names: tuple[str, ...], x: Any) -> list[Any]:
    """The outputs of ``module``'s layers ``names`` for ``x``: through their fused group where
    ``fuse_projections`` made one, else one by one."""
    group = vars(module).get("fused", {}).get(names)
    return group(x) if group is not None else [getattr(module, n)(x) for n in names]
