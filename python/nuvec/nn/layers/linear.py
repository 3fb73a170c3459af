"""Affine layers: ``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math
from typing import Any

from ... import _core as mx
from ... import random
from ._checks import check_features
from .base import Module


def _uniform(scale: float, shape: tuple[int, ...]) -> Any:
    return random.uniform(low=-scale, high=scale, shape=shape)


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def __call__(self, x: Any) -> Any:
        return x


class Linear(Module):
    """``y = x W^T + b`` with ``weight`` of shape ``(output_dims, input_dims)``, both drawn from
    U(-1/sqrt(input_dims), 1/sqrt(input_dims))."""

    def __init__(self, input_dims: int, output_dims: int, bias: bool = True) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input_dims)
        self.weight = _uniform(scale, (output_dims, input_dims))
        if bias:
            self.bias = _uniform(scale, (output_dims,))

    def _extra_repr(self) -> str:
        out, inp = self.weight.shape
        return f"input_dims={inp}, output_dims={out}, bias={'bias' in self}"

    def __call__(self, x: Any) -> Any:
        w = self["weight"]
        check_features("Linear", x, w.shape[1])
        if "bias" in self:
            return mx.addmm(self["bias"], x, w.T)
        return x @ w.T

    def to_quantized(
        self,
        group_size: int | None = None,
        bits: int | None = None,
        mode: str = "affine",
        quantize_input: bool = False,
    ) -> Module:
        """A ``QuantizedLinear`` with this layer's weight quantized (and its bias)."""
        from .quantized import QuantizedLinear

        if quantize_input:
            raise ValueError(
                "Quantized activations (QQLinear, 'nvfp4' and 'mxfp8' modes) are not supported"
            )
        return QuantizedLinear.from_linear(self, group_size, bits, mode)


class Bilinear(Module):
    """``y_o = x1^T W_o x2 + b_o`` with ``weight`` of shape ``(output_dims, input2_dims,
    input1_dims)``, drawn from U(-1/sqrt(input1_dims), 1/sqrt(input1_dims))."""

    def __init__(
        self, input1_dims: int, input2_dims: int, output_dims: int, bias: bool = True
    ) -> None:
        super().__init__()
        scale = math.sqrt(1.0 / input1_dims)
        self.weight = _uniform(scale, (output_dims, input2_dims, input1_dims))
        if bias:
            self.bias = _uniform(scale, (output_dims,))

    def _extra_repr(self) -> str:
        out, in2, in1 = self.weight.shape
        return f"input1_dims={in1}, input2_dims={in2}, output_dims={out}, bias={'bias' in self}"

    def __call__(self, x1: Any, x2: Any) -> Any:
        out, in2, in1 = self.weight.shape
        check_features("Bilinear", x1, in1)
        check_features("Bilinear", x2, in2)
        lead = x1.shape[:-1]
        # (x1 W^T) has the in2 axis left over; contract it with x2 as a batched vector product.
        y = (x1.reshape(-1, in1) @ self.weight.reshape(out * in2, in1).T).reshape(-1, out, in2)
        y = (x2.reshape(-1, 1, in2) @ y.swapaxes(-2, -1)).squeeze(1).reshape(*lead, out)
        return y + self.bias if "bias" in self else y
