"""nuvec.fast: MLX's mx.fast (docs/attention.md for attention)."""

from ._fast_attention import plan_attention, scaled_dot_product_attention  # noqa: F401
