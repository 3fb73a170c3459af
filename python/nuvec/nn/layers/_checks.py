"""Input checks shared by layers: a wrong input raises OpError naming the layer and the
caller's line (not an error from deep inside the op the layer happens to call)."""

from __future__ import annotations

from typing import Any

from ..._errors import op_error


def check_features(layer: str, x: Any, expected: int, what: str = "features") -> None:
    """``x``'s last axis must have ``expected`` entries."""
    if not x.ndim or x.shape[-1] != expected:
        got = x.shape[-1] if x.ndim else "a scalar"
        raise op_error(
            layer,
            f"expected input with {expected} {what} on its last axis, got {got} (shape {x.shape})",
        )


def check_ndim(layer: str, x: Any, allowed: tuple[int, ...], layout: str) -> None:
    """``x`` must have one of the ranks ``allowed``; ``layout`` names the axes, e.g. "NHWC"."""
    if x.ndim not in allowed:
        ranks = " or ".join(str(r) for r in allowed)
        raise op_error(layer, f"expected a rank-{ranks} input ({layout}), got shape {x.shape}")
