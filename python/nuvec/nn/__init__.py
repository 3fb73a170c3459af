"""Neural-network layers, losses and initializers: MLX's ``mlx.nn``, name for name."""

# ruff: noqa: F401, F403
from .layers import *
from .utils import checkpoint, value_and_grad
