"""Projections that read the same input, run as one product (nuvec's own).

Attention's ``q_proj``, ``k_proj`` and ``v_proj`` read the same normed input, as do an MLP's
``gate_proj`` and ``up_proj``. ``fuse_projections`` stores each such group's weights (packed
weights, scales and biases of affine ``QuantizedLinear`` layers; float32 weights and biases of
``Linear`` layers) once, concatenated along the output rows, and gives every layer views of its
rows (no copy: the layers keep their names, files and arithmetic). A step of few rows then runs one
product over the group and splits its output. Each output element of either product is its own
chain over the input features whatever the other rows of the weight (the quantized kernels' row
promise, docs/quantization.md; the float products' fma chain per element, docs/matmul.md), so the
results are the separate products' bits, with fewer, larger products (a decode step of SmolLM2:
121 products instead of 211). Longer inputs (prompts, past ``ROW_INDEPENDENT_ROWS``) run the
layers one by one.

A group is used only while its layers still hold the views it made (``update``, ``load_weights`` or
``dequantize_model`` end it) and agree on every setting of the product.
"""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ...nn.layers.linear import Linear
from ...nn.layers.quantized import QuantizedLinear, _product_args

__all__ = ["GROUPS", "FusedProjections", "fuse_projections", "fused_call", "groupable"]

# The arrays a group concatenates, by the layers' kind.
_PARTS = {QuantizedLinear: ("weight", "scales", "biases"), Linear: ("weight", "bias")}


def _settings(layer: Any, x: Any) -> Any:
    return _product_args(layer, x) if type(layer) is QuantizedLinear else layer.weight.dtype


class FusedProjections:
    """The layers ``names`` of ``owner``, one product for inputs of few rows. ``weight``: the
    layers' weights one after another, held already (a view of a packed buffer, ``packed.py``),
    used instead of a concatenated copy."""

    def __init__(self, owner: Any, names: tuple[str, ...], weight: Any = None) -> None:
        self.owner, self.names = owner, names
        self.layers = [getattr(owner, n) for n in names]
        self.parts = [p for p in _PARTS[type(self.layers[0])] if p in self.layers[0]]
        self.sizes = [layer.weight.shape[0] for layer in self.layers]
        self.fused = {
            p: weight
            if p == "weight" and weight is not None
            else mx.concatenate([x[p] for x in self.layers])
            for p in self.parts
        }
        mx.eval(list(self.fused.values()))
        start = 0
        for layer, size in zip(self.layers, self.sizes):
            for p in self.parts:
                layer[p] = self.fused[p][start : start + size]
            start += size
        mx.eval([layer[p] for layer in self.layers for p in self.parts])
        self.views = [[layer[p] for p in self.parts] for layer in self.layers]
        self.splits = [sum(self.sizes[: i + 1]) for i in range(len(self.sizes) - 1)]

    def usable(self, x: Any) -> bool:
        if x.size > mx.ROW_INDEPENDENT_ROWS * x.shape[-1]:
            return False
        first = _settings(self.layers[0], x)
        return all(
            getattr(self.owner, n) is layer
            and all(layer.get(p) is v for p, v in zip(self.parts, views))
            and _settings(layer, x) == first
            for n, layer, views in zip(self.names, self.layers, self.views)
        )

    def __call__(self, x: Any) -> list[Any]:
        """The layers' outputs for ``x``, or the layers called one by one where the group cannot
        serve it."""
        if not self.usable(x):
            return [getattr(self.owner, n)(x) for n in self.names]
        f = self.fused
        if "scales" not in f:  # float: Linear's own product, bias and all
            y = mx.addmm(f["bias"], x, f["weight"].T) if "bias" in f else x @ f["weight"].T
            return mx.split(y, self.splits, axis=-1)
        y = mx.quantized_matmul(
            x, f["weight"], scales=f["scales"], biases=f["biases"], transpose=True,
            **_product_args(self.layers[0], x),
        )  # fmt: skip
        parts = mx.split(y, self.splits, axis=-1)
        return [p + layer["bias"] if "bias" in layer else p for p, layer in zip(parts, self.layers)]


def groupable(layers: list[Any]) -> bool:
    """Whether ``layers`` can run as one product (one kind, format, dtype and input width)."""
    kind = type(layers[0])
    if kind not in _PARTS or any(type(layer) is not kind for layer in layers):
        return False
    first = layers[0]
    if kind is QuantizedLinear and any(layer.mode != "affine" for layer in layers):
        return False
    return all(
        layer.weight.shape[1] == first.weight.shape[1]
        and all(layer[p].dtype == first[p].dtype for p in _PARTS[kind] if p in first)
        and ("bias" in layer) == ("bias" in first)
        and (kind is Linear or (layer.group_size, layer.bits) == (first.group_size, first.bits))
        for layer in layers
    )


GROUPS = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))  # layers reading one input


def fuse_projections(model: Any) -> int:
    """Fuses every attention's q/k/v and every MLP's gate/up projections of ``model`` that are
    affine ``QuantizedLinear`` layers of one format, or ``Linear`` layers of one dtype (each module
    keeps its groups in ``vars(module)["fused"]``, keyed by the layers' names); returns how many
    groups were made."""
    made = 0
    for module in model.modules():
        for names in GROUPS:
            layers = [module.get(n) for n in names]
            if groupable(layers):
                vars(module).setdefault("fused", {})[names] = FusedProjections(module, names)
                made += 1
    return made


def fused_call(module: Any, names: tuple[str, ...], x: Any) -> list[Any]:
    """The outputs of ``module``'s layers ``names`` for ``x``: through their fused group where
    ``fuse_projections`` made one, else one by one."""
    group = vars(module).get("fused", {}).get(names)
    return group(x) if group is not None else [getattr(module, n)(x) for n in names]
