"""Dropout layers: elementwise (Dropout) and whole channels of channels-last input (2d, 3d)."""

from __future__ import annotations

import nuvec as mx

from ._checks import check_ndim
from .base import Module


class _DropoutBase(Module):
    """Zeroes with probability ``p`` in training and scales the kept values by 1 / (1 - p).

    ``spatial`` is the number of axes before the channels that share one mask value (0 for
    elementwise dropout), ``ranks`` the input ranks accepted (None: any) and ``layout`` their axes.
    """

    spatial = 0
    ranks: tuple[int, ...] | None = None
    layout = ""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if p < 0 or p >= 1:
            raise ValueError(f"The dropout probability {p} is not in [0, 1)")
        self._p_1 = 1 - p

    def _extra_repr(self) -> str:
        return f"p={1 - self._p_1}"

    def __call__(self, x: mx.array) -> mx.array:
        if self.ranks is not None:
            check_ndim(type(self).__name__, x, self.ranks, self.layout)
        if self._p_1 == 1 or not self.training:
            return x
        shape = list(x.shape)
        for axis in range(2, 2 + self.spatial):
            shape[-axis] = 1
        # Same draw and same order of products as MLX, so one seed gives the same masks.
        mask = mx.random.bernoulli(self._p_1, shape)
        return (mask * x) * (1 / self._p_1)


class Dropout(_DropoutBase):
    """Zeroes each element independently with probability ``p`` during training."""


class Dropout2d(_DropoutBase):
    """Zeroes whole channels of HWC or NHWC input with probability ``p`` during training."""

    spatial = 2
    ranks = (3, 4)
    layout = "HWC or NHWC"


class Dropout3d(_DropoutBase):
    """Zeroes whole channels of DHWC or NDHWC input with probability ``p`` during training."""

    spatial = 3
    ranks = (4, 5)
    layout = "DHWC or NDHWC"
