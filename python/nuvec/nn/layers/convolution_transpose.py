"""Transposed convolution layers as mlx.nn's: ``ConvTranspose1d``, ``ConvTranspose2d`` and
``ConvTranspose3d`` (channels last), weight ``(out_channels, *kernel_size, in_channels)`` drawn
from U(-s, s) with s = sqrt(1 / (in_channels * prod(kernel_size))), bias zeros."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from .base import Module
from .convolution import apply_conv, init_conv, kernel_repr, per_axis


class _ConvTransposeNd(Module):
    dims = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        output_padding: Any = 0,
        bias: bool = True,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        init_conv(self, name, in_channels, out_channels, per_axis(kernel_size, self.dims), 1, bias)
        self.padding = per_axis(padding, self.dims)
        self.stride = per_axis(stride, self.dims)
        self.dilation = dilation
        self.output_padding = per_axis(output_padding, self.dims)

    def _extra_repr(self) -> str:
        return (
            f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={kernel_repr(self)}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
            f"output_padding={self.output_padding}, bias={'bias' in self}"
        )

    def __call__(self, x: Any) -> Any:
        op = getattr(mx, f"conv_transpose{self.dims}d")
        args = (self.stride, self.padding, self.dilation, self.output_padding)
        return apply_conv(self, type(self).__name__, x, op, *args)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, L, C_in) inputs."""

    dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, H, W, C_in) inputs."""

    dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, D, H, W, C_in) inputs."""

    dims = 3
