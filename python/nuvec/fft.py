"""Discrete Fourier transforms with MLX's ``mx.fft`` names, arguments and results.

The transforms are one C++ node each (csrc/core/ops/fft.cpp, bound as ``_core._fft``) running
nuvec's own mixed-radix kernels; ``stft`` and ``istft`` are composed here of framing ops and
those transforms. See docs/fft.md.
"""

import operator
from collections.abc import Sequence

from . import _core
from . import _typing as _t
from ._errors import op_error

_f = _core._fft

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "fftshift",
    "ifftshift",
    "fftfreq",
    "rfftfreq",
]

_Axes = Sequence[int] | None
_Shape = Sequence[int] | None


def _one(a, n, axis, real, inverse, norm, stream, op):
    a = a if isinstance(a, _core.array) else _core.array(a)
    if n is None and not -a.ndim <= axis < a.ndim:  # MLX reads the axis' size first: an IndexError
        raise op_error(op, f"invalid axis {axis} for an array with {a.ndim} dimensions", index=True)
    return _f.fftn(a, None if n is None else [n], [axis], real, inverse, norm, stream, op)


def _many(a, s, axes, real, inverse, norm, stream, op):
    s = None if s is None else list(s)
    axes = None if axes is None else list(axes)
    return _f.fftn(a, s, axes, real, inverse, norm, stream, op)


def fft(
    a: _core.array,
    n: int | None = None,
    axis: int = -1,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The one-dimensional DFT along ``axis`` (cropped or zero-padded to ``n``): complex64."""
    return _one(a, n, axis, False, False, norm, stream, "fft")


def ifft(
    a: _core.array,
    n: int | None = None,
    axis: int = -1,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`fft`."""
    return _one(a, n, axis, False, True, norm, stream, "ifft")


def rfft(
    a: _core.array,
    n: int | None = None,
    axis: int = -1,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The DFT of real input (complex input: its real part): the ``n // 2 + 1`` non-negative frequencies."""
    return _one(a, n, axis, True, False, norm, stream, "rfft")


def irfft(
    a: _core.array,
    n: int | None = None,
    axis: int = -1,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`rfft`: float32 of length ``n`` (default ``2 * (a.shape[axis] - 1)``)."""
    return _one(a, n, axis, True, True, norm, stream, "irfft")


def fft2(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = (-2, -1),
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The two-dimensional DFT over ``axes``."""
    return _many(a, s, axes, False, False, norm, stream, "fft2")


def ifft2(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = (-2, -1),
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`fft2`."""
    return _many(a, s, axes, False, True, norm, stream, "ifft2")


def rfft2(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = (-2, -1),
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The two-dimensional DFT of real input (halved along the last of ``axes``)."""
    return _many(a, s, axes, True, False, norm, stream, "rfft2")


def irfft2(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = (-2, -1),
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`rfft2`."""
    return _many(a, s, axes, True, True, norm, stream, "irfft2")


def fftn(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = None,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The n-dimensional DFT over ``axes`` (all when None; ``s`` needs ``axes``)."""
    return _many(a, s, axes, False, False, norm, stream, "fftn")


def ifftn(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = None,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`fftn`."""
    return _many(a, s, axes, False, True, norm, stream, "ifftn")


def rfftn(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = None,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The n-dimensional DFT of real input (halved along the last of ``axes``)."""
    return _many(a, s, axes, True, False, norm, stream, "rfftn")


def irfftn(
    a: _core.array,
    s: _Shape = None,
    axes: _Axes = None,
    norm: str = "backward",
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`rfftn`: float32."""
    return _many(a, s, axes, True, True, norm, stream, "irfftn")


def _shift(a, axes, inverse, stream):
    if axes is not None:
        axes = [operator.index(axes)] if not isinstance(axes, Sequence) else list(axes)
    return _f.fftshift(a, axes, inverse, stream)


def fftshift(
    a: _core.array, axes: int | Sequence[int] | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The zero frequency moved to the centre: each of ``axes`` (all when None) rolled by ``n // 2``."""
    return _shift(a, axes, False, stream)


def ifftshift(
    a: _core.array, axes: int | Sequence[int] | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The inverse of :func:`fftshift`: rolls by ``(n + 1) // 2``."""
    return _shift(a, axes, True, stream)


def _freq_n(n, op):
    n = operator.index(n)
    if n <= 0:
        raise op_error(op, "`n` must be greater than 0")
    return n


def fftfreq(n: int, d: float = 1.0, stream: _t.StreamLike | None = None) -> _core.array:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d`` (float32)."""
    n = _freq_n(n, "fftfreq")
    k = _core.arange(n, dtype=_core.int32, stream=stream)
    k = _core.where(k < (n + 1) // 2, k, k - n, stream=stream)
    return _core.divide(k.astype(_core.float32, stream=stream), n * d, stream=stream)


def rfftfreq(n: int, d: float = 1.0, stream: _t.StreamLike | None = None) -> _core.array:
    """The non-negative sample frequencies of an ``n``-point real DFT (float32)."""
    n = _freq_n(n, "rfftfreq")
    k = _core.arange(n // 2 + 1, dtype=_core.float32, stream=stream)
    return _core.divide(k, n * d, stream=stream)
