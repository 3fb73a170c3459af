"""nuvec.fast.cross_entropy (MLX 0.32's mx.fast.cross_entropy), one primitive with a CPU kernel
of nuvec's own (csrc/backend/cpu/fast_norms_loss.cpp). docs/fast.md describes it."""

from . import _core
from ._core import array

__all__ = ["cross_entropy"]


def cross_entropy(logits: array, targets: array, *, stream=None) -> array:
    """Cross entropy with class indices: ``logsumexp(logits, -1) - logits[..., target]``.

    One pass per row, accumulating in float32; returns float32 with the shape of ``targets``
    (``logits``' shape without its last axis). Targets must lie in ``[0, logits.shape[-1])``
    (outside, the loss is NaN).
    """
    return _core._fast_cross_entropy(logits, targets, stream)
