"""mx.cuda as MLX has it: whether the CUDA backend runs here (docs/cuda.md)."""

from . import _core

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether CUDA is available: this build has the CUDA backend and a CUDA device is present."""
    return bool(_core.is_available(_core.Device(_core.DeviceType.gpu)))
