"""mlx.nn.layers' names: every layer class (and the activation functions)."""

# ruff: noqa: F401

from .base import Module
from .containers import Sequential
from .dropout import Dropout, Dropout2d, Dropout3d
from .embedding import Embedding
from .linear import Bilinear, Identity, Linear
from .normalization import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm
from .pooling import AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d
from .positional_encoding import ALiBi, RoPE, SinusoidalPositionalEncoding
from .upsample import Upsample
