"""Optimizers and schedules, as MLX's ``mlx.optimizers`` (docs/optimizers.md)."""

from . import optimizers, schedulers
from .optimizers import *  # noqa: F403
from .schedulers import *  # noqa: F403

__all__ = ["optimizers", "schedulers", *optimizers.__all__, *schedulers.__all__]
