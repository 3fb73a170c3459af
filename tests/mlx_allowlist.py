"""THE allow-list of public names of mlx.core that nuvec lacks, each with why (the issue that
brings it, or why nuvec leaves it out). tests/test_mlx_names.py fails when nuvec lacks a name of
`dir(mlx.core)` that is not here, and when a name here is one nuvec has (drop it then)."""

_FAST = "fast kernels, quantization and gathered products: issue 15"
_LINALG = "linear algebra and FFT: issue 17"

MISSING = {
    # Modules of later issues.
    "fast": _FAST,
    "linalg": _LINALG,
    "fft": _LINALG,
    # Quantization and gathered / segmented products.
    **{
        n: _FAST
        for n in (
            "gather_mm",
            "gather_qqmm",
            "qqmm",
            "segmented_mm",
            "block_masked_mm",
            "hadamard_transform",
        )
    },
    "matrix_norm": _LINALG,
    # Names no issue lists yet.
    "ArrayIterator": "MLX's iterator class of `array.__iter__`; nuvec's arrays iterate without one",
    "ArrayLike": "MLX's typing protocol (objects with __mlx_array__); nuvec has no such hook",
}
