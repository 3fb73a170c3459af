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
    "stft",
    "istft",
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


def fftfreq(n: int, d: float = 1.0, stream: _t.StreamLike | None = None) -> _core.array:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d`` (float32)."""
    return _f.fftfreq(operator.index(n), d, False, stream)


def rfftfreq(n: int, d: float = 1.0, stream: _t.StreamLike | None = None) -> _core.array:
    """The non-negative sample frequencies of an ``n``-point real DFT (float32)."""
    return _f.fftfreq(operator.index(n), d, True, stream)


def _window(window, n_fft, win_length, op):
    # The window (default: ones of win_length), centred and zero-padded to n_fft.
    if window is None:
        w = _core.ones((n_fft if win_length is None else win_length,), dtype=_core.float32)
    else:
        w = window if isinstance(window, _core.array) else _core.array(window)
    if w.ndim != 1:
        raise op_error(op, "the window must be one-dimensional")
    if w.shape[0] > n_fft:
        raise op_error(op, "window length must not exceed n_fft")
    left = (n_fft - w.shape[0]) // 2
    return _core.pad(w, [(left, n_fft - w.shape[0] - left)]) if w.shape[0] < n_fft else w


def _frame_index(n_frames, n_fft, hop, stream):
    starts = _core.arange(n_frames, dtype=_core.int32, stream=stream) * hop
    return starts[:, None] + _core.arange(n_fft, dtype=_core.int32, stream=stream)[None, :]


def stft(
    x: _core.array,
    n_fft: int = 2048,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: _core.array | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    norm: str = "backward",
    onesided: bool | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The short-time Fourier transform of the last axis: frames of ``n_fft`` samples every
    ``hop_length`` (default ``n_fft // 4``), times the window, transformed; shape
    ``(..., n_freq, n_frames)``. ``onesided`` (default: for real input) keeps the
    ``n_fft // 2 + 1`` non-negative frequencies (of the real part, as MLX)."""
    x = x if isinstance(x, _core.array) else _core.array(x)
    if n_fft <= 0:
        raise op_error("stft", "n_fft must be positive")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise op_error("stft", "hop_length must be positive")
    if x.ndim < 1:
        raise op_error("stft", "input must have at least one dimension")
    w = _window(window, n_fft, win_length, "stft")
    if center:
        p = n_fft // 2
        x = _core.pad(x, [(0, 0)] * (x.ndim - 1) + [(p, p)], mode=pad_mode, stream=stream)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    if n_frames <= 0:
        raise op_error("stft", f"the input ({x.shape[-1]} samples) is shorter than n_fft ({n_fft})")
    frames = _core.take(x, _frame_index(n_frames, n_fft, hop, stream), axis=-1, stream=stream)
    frames = _core.multiply(frames, w, stream=stream)
    if onesided is None:
        onesided = x.dtype != _core.complex64
    y = (
        rfft(frames, norm=norm, stream=stream)
        if onesided
        else fft(frames, norm=norm, stream=stream)
    )
    return _core.swapaxes(y, -1, -2, stream=stream)


def istft(
    stft_matrix: _core.array,
    n_fft: int | None = None,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: _core.array | None = None,
    center: bool = True,
    norm: str = "backward",
    onesided: bool | None = None,
    length: int | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """The inverse of :func:`stft`: each frame's inverse transform times the window, overlap-added
    and divided by the overlap-added squared window (zero where that is zero); trimmed by
    ``n_fft // 2`` at the front when ``center``, to ``length`` samples when given (zero-padded
    past the end). float32."""
    s = stft_matrix if isinstance(stft_matrix, _core.array) else _core.array(stft_matrix)
    if s.ndim < 2:
        raise op_error(
            "istft", "the STFT must have at least two dimensions (..., n_freq, n_frames)"
        )
    onesided = True if onesided is None else onesided
    n_freq, n_frames = s.shape[-2], s.shape[-1]
    if n_fft is None:
        n_fft = 2 * (n_freq - 1) if onesided else n_freq
    if n_fft <= 0:
        raise op_error("istft", "n_fft must be positive")
    hop = n_fft // 4 if hop_length is None else hop_length
    if hop <= 0:
        raise op_error("istft", "hop_length must be positive")
    w = _window(window, n_fft, win_length, "istft")
    spec = _core.swapaxes(s, -1, -2, stream=stream)
    if onesided:
        frames = irfft(spec, n=n_fft, norm=norm, stream=stream)
    else:
        frames = _core.real(ifft(spec, n=n_fft, norm=norm, stream=stream), stream=stream)
    frames = _core.multiply(frames, w, stream=stream)
    total = n_fft + hop * (n_frames - 1)
    idx = _frame_index(n_frames, n_fft, hop, stream)
    y = (
        _core.zeros((*frames.shape[:-2], total), dtype=_core.float32, stream=stream)
        .at[..., idx]
        .add(frames)
    )
    w2 = _core.broadcast_to(_core.square(w, stream=stream), (n_frames, n_fft), stream=stream)
    env = _core.zeros((total,), dtype=_core.float32, stream=stream).at[idx].add(w2)
    ok = _core.greater(env, 1e-11, stream=stream)
    y = _core.where(
        ok,
        _core.divide(y, _core.where(ok, env, 1.0, stream=stream), stream=stream),
        0.0,
        stream=stream,
    )
    start = n_fft // 2 if center else 0
    stop = total - start if length is None else start + length
    if stop > total:
        y = _core.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, stop - total)], stream=stream)
    return y[..., start:stop]
