"""THE allow-list of public names of mlx.core that nuvec lacks, each with why (the issue that
brings it, or why nuvec leaves it out). tests/test_mlx_names.py fails when nuvec lacks a name of
`dir(mlx.core)` that is not here, and when a name here is one nuvec has (drop it then)."""

MISSING = {
    # MLX's CPU build cannot run them.
    **{
        n: "products that quantize their input on the fly: MLX's CPU build raises NYI for them"
        for n in ("qqmm", "gather_qqmm")
    },
    # Names no issue lists yet.
    "ArrayIterator": "MLX's iterator class of `array.__iter__`; nuvec's arrays iterate without one",
    "ArrayLike": "MLX's typing protocol (objects with __mlx_array__); nuvec has no such hook",
}

# Names of mlx.core.fast that nuvec.fast lacks, with why (tests/test_mlx_names.py).
FAST_MISSING = {}
