"""Fused kernels, as MLX's ``mlx.core.fast`` (docs/fast.md).

The operations a language model spends its time in; docs/fast.md describes each function, its
determinism promise and its measured speed (attention: docs/attention.md).

The GPU-only names behave as MLX's CPU-only builds: metal_kernel makes a kernel whose call
raises RuntimeError, cuda_kernel and precompiled_cuda_kernel raise RuntimeError."""

from ._fast_attention import (
    paged_attention,
    paged_write,
    plan_attention,
    scaled_dot_product_attention,
)
from ._fast_composed import gated_delta_update
from ._fast_loss import cross_entropy
from ._fast_norms import add_rms_norm, layer_norm, norm_rope, rms_norm, rope

__all__ = [
    "rms_norm",
    "layer_norm",
    "add_rms_norm",
    "rope",
    "norm_rope",
    "cross_entropy",
    "gated_delta_update",
    "scaled_dot_product_attention",
    "plan_attention",
    "paged_write",
    "paged_attention",
    "metal_kernel",
    "cuda_kernel",
    "precompiled_cuda_kernel",
]


def metal_kernel(
    name,
    input_names,
    output_names,
    source,
    header="",
    ensure_row_contiguous=True,
    atomic_outputs=False,
    compile_options=None,
):
    """A custom Metal kernel, as MLX without Metal: its call raises RuntimeError."""

    def kernel(*args, **kwargs):
        raise RuntimeError("[metal_kernel] No Metal back-end.")

    return kernel


def cuda_kernel(
    name, input_names, output_names, source, header="", ensure_row_contiguous=True, shared_memory=0
):
    """A custom CUDA kernel, as MLX without CUDA: raises RuntimeError."""
    raise RuntimeError("[cuda_kernel] No CUDA back-end.")


def precompiled_cuda_kernel(*args, **kwargs):
    """A precompiled CUDA kernel, as MLX without CUDA: raises RuntimeError."""
    raise RuntimeError("[cuda_kernel] No CUDA back-end.")
