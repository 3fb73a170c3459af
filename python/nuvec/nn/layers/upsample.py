"""Spatial upsampling of channels-last (N, ..., C) input: nearest, linear and cubic (MLX's)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np

import nuvec as mx

from ..._errors import op_error
from .base import Module

# Each axis is resampled as a weighted sum of gathers: (source indices, float32 weights) taps.
_Taps = list[tuple[np.ndarray, np.ndarray]]
_f32 = np.float32


def _positions(n: int, scale: float, align_corners: bool) -> np.ndarray:
    """Source coordinates of the int(scale * n) outputs, in float32 as MLX computes them."""
    m = int(scale * n)
    grid = np.arange(m, dtype=_f32)
    if align_corners:
        return grid * _f32((n - 1) / max(m - 1, 1))
    step = 1 / scale
    return grid * _f32(step) - _f32(((m - 1) * step - n + 1) / 2)


def _nearest_taps(n: int, scale: float) -> np.ndarray:
    m = int(scale * n)
    grid = np.arange(m, dtype=_f32)
    if m > n:
        return np.round((grid + _f32(0.5)) * _f32(n / m) - _f32(0.5)).astype(np.uint32)
    return (grid * _f32(n / m)).astype(np.uint32)


def _linear_taps(n: int, scale: float, align_corners: bool) -> _Taps:
    pos = np.clip(_positions(n, scale, align_corners), _f32(0), _f32(n - 1))
    left = np.floor(pos)
    w = pos - left
    return [(left, _f32(1) - w), (np.ceil(pos), w)]


def _keys_near(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for distances in [0, 1]."""
    return ((_f32(a + 2.0) * d - _f32(a + 3.0)) * d * d + _f32(1)).astype(_f32)


def _keys_far(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel for distances in [1, 2]."""
    return ((((d - _f32(5)) * d + _f32(8)) * d - _f32(4)) * _f32(a)).astype(_f32)


def _cubic_taps(n: int, scale: float, align_corners: bool) -> _Taps:
    # a = -0.75 (OpenCV's, and PyTorch's without antialiasing); taps beyond the edges repeat it.
    pos = _positions(n, scale, align_corners)
    left = np.floor(pos)
    right = np.floor(pos + _f32(1))
    taps = []
    for grid, kernel in (
        (left, _keys_near),
        (right, _keys_near),
        (left - 1, _keys_far),
        (right + 1, _keys_far),
    ):
        taps.append((grid, kernel(np.abs(pos - grid), -0.75)))
    return taps


def _triangle(d: np.ndarray) -> np.ndarray:
    return np.maximum(_f32(1) - d, _f32(0))


def _cubic_aa(d: np.ndarray) -> np.ndarray:
    # a = -0.5 (PIL's, and PyTorch's with antialiasing)
    return np.where(d <= 1, _keys_near(d, -0.5), np.where(d <= 2, _keys_far(d, -0.5), _f32(0)))


def _antialiased_taps(n: int, scale: float, kernel: Callable, radius: float) -> _Taps:
    """Filter taps whose support widens by 1 / scale when downsampling; taps outside the input
    get no weight and each output's weights are renormalized to sum to one."""
    pos = _positions(n, scale, False)
    widen = 1.0 / scale if scale < 1 else 1.0
    count = math.ceil(radius * widen) + 1
    grids, weights = [], []
    for k in range(1 - count, count):
        grid = np.floor(pos) + _f32(k)
        w = kernel(np.abs(pos - grid) / _f32(widen))
        weights.append(np.where((grid >= 0) & (grid < n), w, _f32(0)).astype(_f32))
        grids.append(grid)
    total = sum(weights)
    total = np.where(total > 0, total, _f32(1))
    return [(g, w / total) for g, w in zip(grids, weights)]


def _check_scales(x: mx.array, scale_factor: tuple) -> None:
    if x.ndim - 2 != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")


def _expand(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """v along ``axis`` of an ndim-dimensional array, length one elsewhere."""
    return v.reshape((-1,) + (1,) * (ndim - 1 - axis))


def upsample_nearest(x: mx.array, scale_factor: tuple) -> mx.array:
    """Each output takes the nearest input sample (integer scales repeat each sample)."""
    _check_scales(x, scale_factor)
    if all(float(s).is_integer() for s in scale_factor):
        # Repeat by broadcasting a length-one axis after each spatial axis, then merge the pairs.
        spatial, reps = x.shape[1:-1], [int(s) for s in scale_factor]
        ones = [d for size in spatial for d in (size, 1)]
        spread = [d for size, r in zip(spatial, reps) for d in (size, r)]
        y = mx.broadcast_to(
            x.reshape(x.shape[0], *ones, x.shape[-1]), (x.shape[0], *spread, x.shape[-1])
        )
        return y.reshape(x.shape[0], *(size * r for size, r in zip(spatial, reps)), x.shape[-1])
    # One gather with an index per spatial axis, each broadcast along its own axis.
    n = len(scale_factor)
    index = [
        mx.array(_expand(_nearest_taps(size, s), axis, n))
        for axis, (size, s) in enumerate(zip(x.shape[1:-1], scale_factor))
    ]
    return x[(slice(None), *index)]


def _resample(x: mx.array, scale_factor: tuple, taps_of: Callable[[int, float], _Taps]) -> mx.array:
    """Resamples one spatial axis after the other with the taps ``taps_of(size, scale)`` gives."""
    _check_scales(x, scale_factor)
    for axis, (size, s) in enumerate(zip(x.shape[1:-1], scale_factor), start=1):
        out = None
        for grid, w in taps_of(size, s):
            index = mx.array(np.clip(grid, 0, size - 1).astype(np.uint32))
            term = mx.take(x, index, axis=axis) * mx.array(_expand(w, axis, x.ndim))
            out = term if out is None else out + term
        x = out
    return x


def _check_antialias(align_corners: bool, antialias: bool) -> None:
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not supported. "
            "Use align_corners=False for antialiased interpolation."
        )


def upsample_linear(
    x: mx.array, scale_factor: tuple, align_corners: bool = False, antialias: bool = False
) -> mx.array:
    """Linear (bilinear, trilinear, ...) interpolation; ``antialias`` low-pass filters
    downsampling with a widened triangle kernel."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _resample(x, scale_factor, lambda n, s: _antialiased_taps(n, s, _triangle, 1.0))
    return _resample(x, scale_factor, lambda n, s: _linear_taps(n, s, align_corners))


def upsample_cubic(
    x: mx.array, scale_factor: tuple, align_corners: bool = False, antialias: bool = False
) -> mx.array:
    """Cubic (bicubic, ...) interpolation with Keys' kernel; ``antialias`` low-pass filters
    downsampling (and uses a = -0.5 instead of -0.75)."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _resample(x, scale_factor, lambda n, s: _antialiased_taps(n, s, _cubic_aa, 2.0))
    return _resample(x, scale_factor, lambda n, s: _cubic_taps(n, s, align_corners))


class Upsample(Module):
    """Upsamples the spatial axes 1 .. ndim - 2 by ``scale_factor`` (one number, or one per
    axis) with ``mode`` 'nearest', 'linear' or 'cubic'."""

    def __init__(
        self,
        scale_factor: float | tuple,
        mode: Literal["nearest", "linear", "cubic"] = "nearest",
        align_corners: bool = False,
        antialias: bool = False,
    ):
        super().__init__()
        if mode not in ("nearest", "linear", "cubic"):
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError(
                "[Upsample] Antialiasing is not supported for nearest neighbor upsampling"
            )
        if isinstance(scale_factor, (list, tuple)):
            scale_factor = tuple(map(float, scale_factor))
        else:
            scale_factor = float(scale_factor)
        _check_antialias(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        text = (
            f"scale_factor={self.scale_factor}, mode={self.mode!r}, "
            f"align_corners={self.align_corners}"
        )
        return text + (", antialias=True" if self.antialias else "")

    def __call__(self, x: mx.array) -> mx.array:
        dims = x.ndim - 2
        if dims <= 0:
            raise op_error(
                "Upsample",
                f"expected an input (N, ..., C) with at least 1 spatial axis, got shape {x.shape}",
            )
        scale = self.scale_factor
        if isinstance(scale, tuple):
            if len(scale) != dims:
                raise op_error(
                    "Upsample",
                    f"one scale per spatial axis is required, got scale_factor={scale}"
                    f" for an input of shape {x.shape}",
                )
        else:
            scale = (scale,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale)
        interpolate = upsample_linear if self.mode == "linear" else upsample_cubic
        return interpolate(x, scale, self.align_corners, self.antialias)
