"""Quantized layers, as mlx.nn's: ``QuantizedLinear``, ``QuantizedEmbedding`` and ``quantize``,
which swaps a model's layers for their quantized versions (``to_quantized``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import _core as mx
from ... import random
from ...utils import tree_map_with_path
from .base import Module

# Each mode's (group_size, bits) when they are not given, as MLX's.
_MODE_DEFAULTS = {"affine": (64, 4), "mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}


def _defaults_for_mode(mode: str, group_size: int | None, bits: int | None) -> tuple[int, int]:
    if mode not in _MODE_DEFAULTS:
        raise ValueError(
            f"Invalid quantization mode '{mode}'. Valid modes are: {', '.join(_MODE_DEFAULTS)}."
        )
    default_group, default_bits = _MODE_DEFAULTS[mode]
    return group_size or default_group, bits or default_bits


def _quantized(module: Module, weight: Any, group_size: int | None, bits: int | None) -> None:
    """Store ``weight`` quantized in ``module`` (``weight``, ``scales`` and, in affine mode,
    ``biases``)."""
    module.weight, module.scales, *biases = mx.quantize(weight, group_size, bits, mode=module.mode)
    module.biases = biases[0] if biases else None


def _quantized_args(module: Module) -> dict[str, Any]:
    return {"group_size": module.group_size, "bits": module.bits, "mode": module.mode}


# nuvec's own (MLX has none): a quantized layer whose ``activation_bits`` is 8 rounds x to int8
# per group (``quantized_matmul(..., activation_bits=8)``) when x has at most this many rows (a
# decode step); longer inputs (a prompt) keep float x.
INT8_ACTIVATION_ROWS = 16


def _product_args(module: Module, x: Any) -> dict[str, Any]:
    """The product's arguments for ``x``: the weight's format, and ``activation_bits`` where the
    layer sets it and ``x`` has few rows."""
    args = _quantized_args(module)
    bits = module.activation_bits
    if bits is not None and x.size <= INT8_ACTIVATION_ROWS * x.shape[-1]:
        args["activation_bits"] = bits
    return args


def quantize(
    model: Module,
    group_size: int | None = None,
    bits: int | None = None,
    *,
    mode: str = "affine",
    quantize_input: bool = False,
    class_predicate: Callable[[str, Module], bool | dict] | None = None,
) -> None:
    """Replace, in place, the leaf modules of ``model`` that ``class_predicate(path, module)``
    selects by ``module.to_quantized(...)``.

    The predicate returns ``True`` (quantize with ``group_size``, ``bits`` and ``mode``), a dict
    of ``to_quantized`` arguments, or ``False``; by default every leaf with a ``to_quantized``
    method is quantized. A selected module without one raises ValueError."""
    class_predicate = class_predicate or (lambda _, m: hasattr(m, "to_quantized"))

    def maybe_quantize(path: str, m: Module) -> Module:
        choice = class_predicate(path, m)
        if not choice:
            return m
        if not hasattr(m, "to_quantized"):
            raise ValueError(f"Unable to quantize model of type {type(m)}")
        if isinstance(choice, bool):
            kwargs = {"group_size": group_size, "bits": bits, "mode": mode}
            if quantize_input:
                kwargs["quantize_input"] = quantize_input
            return m.to_quantized(**kwargs)
        if isinstance(choice, dict):
            if "quantize_input" in choice and not choice["quantize_input"]:
                choice.pop("quantize_input")
            return m.to_quantized(**choice)
        raise ValueError(
            "``class_predicate`` must return a bool or a dict of parameters to pass to "
            "``to_quantized``"
        )

    leaves = tree_map_with_path(maybe_quantize, model.leaf_modules(), is_leaf=Module.is_module)
    model.update_modules(leaves)


class QuantizedEmbedding(Module):
    """``Embedding`` with a quantized table (``weight``, ``scales``, ``biases``: frozen): rows
    are dequantized as they are looked up. ``activation_bits`` (nuvec's own, default None) applies
    to ``as_linear`` (``INT8_ACTIVATION_ROWS``)."""

    activation_bits: int | None = None

    def __init__(
        self,
        num_embeddings: int,
        dims: int,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> None:
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        weight = random.normal(shape=(num_embeddings, dims), scale=math.sqrt(1 / dims))
        _quantized(self, weight, group_size, bits)
        self.num_embeddings = num_embeddings
        self.dims = dims
        self.freeze()

    def __call__(self, x: Any) -> Any:
        biases = self.get("biases")
        return mx.dequantize(
            self["weight"][x],
            scales=self["scales"][x],
            biases=biases[x] if biases is not None else None,
            **_quantized_args(self),
        )

    def as_linear(self, x: Any) -> Any:
        """``x @ weight.T`` with the quantized table: an output projection tied to the input
        embedding."""
        return mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            **_product_args(self, x),
        )

    def _extra_repr(self) -> str:
        return (
            f"{self.num_embeddings}, {self.dims}, "
            f"group_size={self.group_size}, bits={self.bits}, mode={self.mode}"
        )

    @classmethod
    def from_embedding(
        cls,
        embedding_layer: Module,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> QuantizedEmbedding:
        """A ``QuantizedEmbedding`` holding ``embedding_layer``'s table, quantized."""
        num_embeddings, dims = embedding_layer.weight.shape
        ql = cls(num_embeddings, dims, group_size, bits, mode=mode)
        _quantized(ql, embedding_layer.weight, group_size, bits)
        return ql


class QuantizedLinear(Module):
    """``Linear`` with a quantized weight (``weight``, ``scales``, ``biases``: frozen, so only
    ``bias`` is trainable once unfrozen): ``y = quantized_matmul(x, W^T) + b``.
    ``activation_bits`` (nuvec's own, default None): 8 rounds a few-row x to int8
    (``INT8_ACTIVATION_ROWS``)."""

    activation_bits: int | None = None

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> None:
        super().__init__()
        self.group_size, self.bits = _defaults_for_mode(mode, group_size, bits)
        self.mode = mode
        scale = math.sqrt(1 / input_dims)
        weight = random.uniform(low=-scale, high=scale, shape=(output_dims, input_dims))
        _quantized(self, weight, group_size, bits)
        if bias:
            self.bias = mx.zeros((output_dims,))
        self.freeze()

    def _extra_repr(self) -> str:
        out_dims, packed = self.weight.shape
        return (
            f"input_dims={packed * 32 // self.bits}, output_dims={out_dims}, "
            f"bias={'bias' in self}, group_size={self.group_size}, bits={self.bits}, "
            f"mode={self.mode}"
        )

    def __call__(self, x: Any) -> Any:
        y = mx.quantized_matmul(
            x,
            self["weight"],
            scales=self["scales"],
            biases=self.get("biases"),
            transpose=True,
            **_product_args(self, x),
        )
        return y + self["bias"] if "bias" in self else y

    @classmethod
    def from_linear(
        cls,
        linear_layer: Module,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
    ) -> QuantizedLinear:
        """A ``QuantizedLinear`` holding ``linear_layer``'s weight, quantized, and its bias."""
        output_dims, input_dims = linear_layer.weight.shape
        ql = cls(input_dims, output_dims, False, group_size, bits, mode=mode)
        _quantized(ql, linear_layer.weight, group_size, bits)
        if "bias" in linear_layer:
            ql.bias = linear_layer.bias
        return ql
