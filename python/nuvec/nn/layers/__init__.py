"""mlx.nn.layers' names: every layer class (and the activation functions)."""

# ruff: noqa: F401

from .base import Module
from .containers import Sequential
from .embedding import Embedding
from .linear import Bilinear, Identity, Linear
