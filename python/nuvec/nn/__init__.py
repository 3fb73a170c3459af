"""Neural-network layers, losses and initializers: MLX's ``mlx.nn``, name for name."""

# ruff: noqa: F401, F403
from . import init, losses
from .layers import *
from .utils import average_gradients, checkpoint, value_and_grad
