"""Max and average pooling over 1, 2 or 3 spatial axes of channels-last (N, ..., C) input."""

from __future__ import annotations

from collections.abc import Callable

import nuvec as mx

from ._checks import check_ndim
from .base import Module

_IntOrTuple = int | tuple[int, ...]


def _per_axis(value, n: int, layer: str, name: str) -> list[int]:
    """An int, or n ints, as a list of n ints (MLX's argument rule)."""
    plural = "1 integer" if n == 1 else f"{n} integers"
    message = f"[{layer}] '{name}' must be an integer or a tuple containing {plural}"
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(message)
        return list(value)
    if not isinstance(value, int):
        raise ValueError(message)
    return [value] * n


def _windows(x: mx.array, kernel: list[int], stride: list[int]) -> mx.array:
    """The windows of x as a view (N, *out, *kernel, C).

    Non-overlapping windows are a reshape and a transpose (the tail that no window covers is
    cut off); others an as_strided view. Either way the window axes are adjacent: the core
    reduces those fastest, and one reduction over all of them splits the gradient of a max
    among tied elements as MLX does.
    """
    spatial = x.shape[1:-1]
    out = [max(0, (size - k) // s + 1) for size, k, s in zip(spatial, kernel, stride)]
    n = len(kernel)
    if kernel == stride:
        x = x[(slice(None), *(slice(0, o * k) for o, k in zip(out, kernel)))]
        shape = [x.shape[0]]
        for o, k in zip(out, kernel):
            shape += [o, k]
        order = [0, *range(1, 2 * n, 2), *range(2, 2 * n + 1, 2), 2 * n + 1]
        return x.reshape(*shape, x.shape[-1]).transpose(order)
    # Row-major element strides of x, then the strided view's.
    strides = [1]
    for size in reversed(x.shape[1:]):
        strides.insert(0, strides[0] * size)
    inner = strides[1:-1]
    view_shape = [x.shape[0], *out, *kernel, x.shape[-1]]
    view_strides = [strides[0], *(e * s for e, s in zip(inner, stride)), *inner, 1]
    return mx.as_strided(x, view_shape, view_strides)


class _Pool(Module):
    """Pads each spatial axis with ``fill`` on both sides, then reduces each window."""

    def __init__(
        self,
        reduce: Callable[..., mx.array],
        fill: float,
        dims: int,
        kernel_size: _IntOrTuple,
        stride: _IntOrTuple | None,
        padding: _IntOrTuple,
    ):
        super().__init__()
        name = type(self).__name__
        kernel = _per_axis(kernel_size, dims, name, "kernel_size")
        stride = kernel if stride is None else _per_axis(stride, dims, name, "stride")
        padding = _per_axis(padding, dims, name, "padding")
        for arg, values in (("kernel_size", kernel), ("stride", stride)):
            if any(v <= 0 for v in values):
                raise ValueError(f"[{name}] '{arg}' must be positive but got {tuple(values)}.")
        if any(p < 0 for p in padding):
            raise ValueError(f"[{name}] 'padding' must be non-negative but got {tuple(padding)}.")
        self._reduce = reduce
        self._fill = fill
        self._kernel_size = kernel
        self._stride = stride
        self._padding = padding

    def _extra_repr(self) -> str:
        return (
            f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, "
            f"padding={tuple(self._padding)}"
        )

    def __call__(self, x: mx.array) -> mx.array:
        dims = len(self._kernel_size)
        check_ndim(type(self).__name__, x, (dims + 2,), "N" + "DHW"[3 - dims :] + "C")
        if any(self._padding):
            pads = [(0, 0), *((p, p) for p in self._padding), (0, 0)]
            x = mx.pad(x, pads, constant_values=self._fill)
        windows = _windows(x, self._kernel_size, self._stride)
        return self._reduce(windows, axis=tuple(range(dims + 1, 2 * dims + 1)))


class _MaxPool(_Pool):
    """Maximum of each window; padding is negative infinity."""

    dims = 0

    def __init__(
        self, kernel_size: _IntOrTuple, stride: _IntOrTuple | None = None, padding: _IntOrTuple = 0
    ):
        super().__init__(mx.max, -float("inf"), self.dims, kernel_size, stride, padding)


class _AvgPool(_Pool):
    """Mean of each window; padding is zero and counts in the mean."""

    dims = 0

    def __init__(
        self, kernel_size: _IntOrTuple, stride: _IntOrTuple | None = None, padding: _IntOrTuple = 0
    ):
        super().__init__(mx.mean, 0, self.dims, kernel_size, stride, padding)


class MaxPool1d(_MaxPool):
    """1-d max pooling of (N, L, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 1


class MaxPool2d(_MaxPool):
    """2-d max pooling of (N, H, W, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 2


class MaxPool3d(_MaxPool):
    """3-d max pooling of (N, D, H, W, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 3


class AvgPool1d(_AvgPool):
    """1-d average pooling of (N, L, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 1


class AvgPool2d(_AvgPool):
    """2-d average pooling of (N, H, W, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 2


class AvgPool3d(_AvgPool):
    """3-d average pooling of (N, D, H, W, C) input; ``stride`` defaults to ``kernel_size``."""

    dims = 3
