"""Normalization layers: LayerNorm, RMSNorm, GroupNorm, InstanceNorm and BatchNorm (MLX's)."""

from __future__ import annotations

import nuvec as mx

from ..._errors import op_error
from ._checks import check_features, check_ndim
from .base import Module

# Low-precision inputs accumulate their statistics in float32, as MLX's fused kernels do.
_LOW_PRECISION = (mx.float16, mx.bfloat16)


def _check_eps(layer: str, eps: float) -> None:
    if eps <= 0.0:
        raise ValueError(f"[{layer}] 'eps' must be positive but got {eps}.")


def _mean(x: mx.array, axes: tuple[int, ...]) -> mx.array:
    """The mean over ``axes`` (kept); axes with gaps between them are reduced one at a time,
    which the core does much faster than one reduction over interleaved axes."""
    if axes == tuple(range(axes[0], axes[-1] + 1)):
        return mx.mean(x, axis=axes, keepdims=True)
    for axis in reversed(axes):
        x = mx.mean(x, axis=axis, keepdims=True)
    return x


def _standardize(x: mx.array, axes: tuple[int, ...], eps: float) -> mx.array:
    """(x - mean) / sqrt(var + eps) over ``axes`` (sorted, non-negative), in x's dtype."""
    xf = x.astype(mx.float32) if x.dtype in _LOW_PRECISION else x
    centered = xf - _mean(xf, axes)
    var = _mean(mx.square(centered), axes)
    return (centered * mx.rsqrt(var + eps)).astype(x.dtype)


class LayerNorm(Module):
    """Normalizes over the last axis, then scales by ``weight`` and shifts by ``bias``."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True, bias: bool = True):
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self) -> str:
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if "weight" in self:
            check_features("LayerNorm", x, self.dims)
        weight = self.weight if "weight" in self else None
        bias = self.bias if "bias" in self else None
        return mx.fast.layer_norm(x, weight, bias, self.eps)


class RMSNorm(Module):
    """Divides by the root mean square over the last axis, then scales by ``weight``."""

    def __init__(self, dims: int, eps: float = 1e-5):
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x: mx.array) -> mx.array:
        check_features("RMSNorm", x, self.weight.shape[0])
        return mx.fast.rms_norm(x, self.weight, self.eps)


class GroupNorm(Module):
    """Normalizes each group of features over the spatial axes and the group.

    The default grouping puts feature ``c`` in group ``c % num_groups`` (MLX's);
    ``pytorch_compatible`` puts it in group ``c // (dims // num_groups)`` (PyTorch's).
    """

    def __init__(
        self,
        num_groups: int,
        dims: int,
        eps: float = 1e-5,
        affine: bool = True,
        pytorch_compatible: bool = False,
    ):
        super().__init__()
        _check_eps("GroupNorm", eps)
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups != 0:
            raise ValueError(
                f"The number of features ({dims}) must be evenly divisible"
                f" by the number of groups ({num_groups})."
            )
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.dims}, eps={self.eps}, "
            f"affine={'weight' in self}, pytorch_compatible={self.pytorch_compatible}"
        )

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 2:
            raise op_error("GroupNorm", f"expected an input (N, ..., C), got shape {x.shape}")
        check_features("GroupNorm", x, self.dims)
        g = self.num_groups
        if self.pytorch_compatible:
            grouped = x.reshape(x.shape[0], -1, g, self.dims // g)
            y = _standardize(grouped, (1, 3), self.eps)
        else:
            y = _standardize(x.reshape(x.shape[0], -1, g), (1,), self.eps)
        y = y.reshape(x.shape)
        return (self.weight * y + self.bias) if "weight" in self else y


class InstanceNorm(Module):
    """Normalizes each feature of each sample over the spatial axes of (N, ..., C)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False):
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self) -> str:
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 3:
            raise op_error(
                "InstanceNorm",
                f"expected an input (N, ..., C) of at least 3 dimensions, got shape {x.shape}",
            )
        if "weight" in self:
            check_features("InstanceNorm", x, self.dims)
        y = _standardize(x, tuple(range(1, x.ndim - 1)), self.eps)
        return (self.weight * y + self.bias) if "weight" in self else y


class BatchNorm(Module):
    """Normalizes each feature over the batch and spatial axes of NC, NLC or NHWC input.

    In training mode the batch statistics normalize and update ``running_mean`` and
    ``running_var`` (unbiased variance) with ``momentum``; in eval mode the running statistics
    normalize. The running statistics are parameters that stay frozen.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        _check_eps("BatchNorm", eps)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=["running_mean", "running_var"], recurse=False)

    def unfreeze(self, *args, **kwargs) -> BatchNorm:
        """Unfreezes as Module does, but the running statistics stay frozen."""
        super().unfreeze(*args, **kwargs)
        if self.track_running_stats:
            self.freeze(keys=["running_mean", "running_var"], recurse=False)
        return self

    def _extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, "
            f"momentum={self.momentum}, affine={'weight' in self}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def __call__(self, x: mx.array) -> mx.array:
        check_ndim("BatchNorm", x, (2, 3, 4), "NC, NLC or NHWC")
        check_features("BatchNorm", x, self.num_features)
        count = 1
        for size in x.shape[:-1]:
            count *= size
        if self.training and count == 1:
            raise ValueError("BatchNorm training requires more than one value per channel.")
        axes = tuple(range(x.ndim - 1))
        if self.training or not self.track_running_stats:
            mean = mx.mean(x, axis=axes)
            var = mx.var(x, axis=axes)
            if self.training and self.track_running_stats:
                mu = self.momentum
                unbiased = var * (count / (count - 1))
                self.running_mean = (1 - mu) * self.running_mean + mu * mean
                self.running_var = (1 - mu) * self.running_var + mu * unbiased
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean) * mx.rsqrt(var + self.eps)
        return (self.weight * y + self.bias) if "weight" in self else y
