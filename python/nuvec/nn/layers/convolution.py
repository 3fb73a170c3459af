"""Convolution layers as mlx.nn's: ``Conv1d``, ``Conv2d`` and ``Conv3d`` (channels last: NLC,
NHWC, NDHWC), weight ``(out_channels, *kernel_size, in_channels / groups)`` drawn from
U(-s, s) with s = sqrt(1 / (in_channels / groups * prod(kernel_size))), bias zeros."""

from __future__ import annotations

import math
from typing import Any

from ... import _core as mx
from ... import random
from ..._errors import op_error
from ._checks import check_features, check_ndim
from .base import Module

_LAYOUTS = {1: "NLC", 2: "NHWC", 3: "NDHWC"}


def per_axis(value: Any, dims: int) -> Any:
    """An int repeated for every spatial axis; anything else as given (as mlx.nn)."""
    return (value,) * dims if isinstance(value, int) and dims > 1 else value


def init_conv(
    module: Module,
    layer: str,
    in_channels: int,
    out_channels: int,
    kernel_size: Any,
    groups: int,
    bias: bool,
) -> None:
    """Sets ``weight`` (and ``bias``) of a convolution layer whose kernel has the given size."""
    if in_channels % groups != 0:
        raise op_error(
            layer,
            f"The number of input channels ({in_channels}) must be divisible by the number "
            f"of groups ({groups})",
        )
    kernel = (kernel_size,) if isinstance(kernel_size, int) else tuple(kernel_size)
    scale = math.sqrt(1 / (in_channels // groups * math.prod(kernel)))
    shape = (out_channels, *kernel, in_channels // groups)
    module.weight = random.uniform(low=-scale, high=scale, shape=shape)
    if bias:
        module.bias = mx.zeros((out_channels,))


def apply_conv(module: Module, layer: str, x: Any, op: Any, *args: Any) -> Any:
    """``op(x, weight, *args)`` plus the bias, after checking x's rank and channels."""
    w = module["weight"]
    dims = w.ndim - 2
    check_ndim(layer, x, (dims + 2,), _LAYOUTS[dims])
    check_features(layer, x, w.shape[-1] * getattr(module, "groups", 1), "channels")
    y = op(x, w, *args)
    return y + module["bias"] if "bias" in module else y


def kernel_repr(module: Module) -> Any:
    k = module.weight.shape[1:-1]
    return k[0] if len(k) == 1 else k


class _ConvNd(Module):
    dims = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        init_conv(
            self, name, in_channels, out_channels, per_axis(kernel_size, self.dims), groups, bias
        )
        self.padding = per_axis(padding, self.dims)
        self.stride = per_axis(stride, self.dims)
        self.dilation = dilation
        self.groups = groups

    def _extra_repr(self) -> str:
        return (
            f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
            f"kernel_size={kernel_repr(self)}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, groups={self.groups}, bias={'bias' in self}"
        )

    def __call__(self, x: Any) -> Any:
        op = getattr(mx, f"conv{self.dims}d")
        args = (self.stride, self.padding, self.dilation, self.groups)
        return apply_conv(self, type(self).__name__, x, op, *args)


class Conv1d(_ConvNd):
    """1-D convolution over (N, L, C_in) inputs."""

    dims = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, H, W, C_in) inputs."""

    dims = 2


class Conv3d(_ConvNd):
    """3-D convolution over (N, D, H, W, C_in) inputs (no groups, as mlx.nn's)."""

    dims = 3

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        bias: bool = True,
    ) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 1, bias)

    def _extra_repr(self) -> str:
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={kernel_repr(self)}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"bias={'bias' in self}"
        )
