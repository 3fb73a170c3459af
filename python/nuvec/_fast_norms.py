"""nuvec.fast's row normalizations and rotary encodings (MLX 0.32's mx.fast.rms_norm,
layer_norm and rope; nuvec's add_rms_norm and norm_rope): one fused primitive each, with CPU
kernels of nuvec's own (csrc/backend/cpu/fast_norms.cpp, rope.cpp). docs/fast.md describes them
and their determinism promises."""

from . import _core
from ._core import array

__all__ = ["rms_norm", "layer_norm", "add_rms_norm", "rope", "norm_rope"]


def rms_norm(x: array, weight: array | None, eps: float, *, stream=None) -> array:
    """Root Mean Square normalization over the last axis: ``x / sqrt(mean(x**2) + eps) * weight``.

    ``weight`` (one-dimensional, the size of the last axis) may be None. Half inputs accumulate
    in float32 and return their dtype (promoted with the weight's).
    """
    return _core._fast_rms_norm(x, weight, eps, stream)


def layer_norm(
    x: array, weight: array | None, bias: array | None, eps: float, *, stream=None
) -> array:
    """Layer normalization over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    ``weight`` and ``bias`` (one-dimensional, the size of the last axis) may be None.
    """
    return _core._fast_layer_norm(x, weight, bias, eps, stream)


def add_rms_norm(
    x: array, residual: array, weight: array | None, eps: float, *, stream=None
) -> tuple[array, array]:
    """``(rms_norm(x + residual, weight, eps), x + residual)`` in one pass (nuvec's own).

    ``x`` and ``residual`` have one shape and dtype; the results are bit for bit those of the
    two separate calls.
    """
    return _core._fast_add_rms_norm(x, residual, weight, eps, stream)


def rope(
    a: array,
    dims: int,
    *,
    traditional: bool,
    base: float | None,
    scale: float,
    offset,
    freqs: array | None = None,
    stream=None,
) -> array:
    """Rotary positional encoding of ``a`` (at least 3-d, ``(B, *, T, D)``).

    The first ``dims`` features of row ``t`` of batch row ``b`` turn by the angles
    ``(offset_b + t) * scale / period_i``, ``period_i = base ** (2 * i / dims)`` or
    ``freqs[i]`` (exactly one of ``base`` and ``freqs`` is given); ``traditional`` rotates
    consecutive pairs, else the halves. ``offset``: an int, or an integer array of shape ``()``
    or ``(B,)``. The angles are computed in float64 (float64 input: by a composition of ops).
    """
    return _core._fast_rope(a, dims, traditional, base, scale, offset, freqs, stream)


def norm_rope(
    x: array,
    weight: array | None,
    eps: float,
    cache: array,
    offset,
    *,
    dims: int,
    traditional: bool = False,
    base: float | None = 10000.0,
    scale: float = 1.0,
    freqs: array | None = None,
    stream=None,
) -> tuple[array, array]:
    """RMS norm, RoPE and a key-cache write in one pass (nuvec's own); functional.

    ``x`` holds new keys ``(B, *, T, D)``, ``cache`` ``(B, *, S, D)`` in the result dtype.
    Returns ``(y, new_cache)``: ``y = rope(rms_norm(x, weight, eps), dims, offset=offset, ...)``
    and ``cache`` with rows ``offset .. offset + T - 1`` of its axis -2 replaced by ``y``
    (per batch row ``b`` when ``offset`` is an array of shape ``(B,)``). Bit for bit the three
    separate calls. Rows that do not fit the cache raise (OpError for an int offset, an
    evaluation error for an array).
    """
    return _core._fast_norm_rope(
        x, weight, eps, cache, offset, dims, traditional, base, scale, freqs, stream
    )
