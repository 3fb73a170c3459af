"""THE allow-list of public names of mlx.nn and its submodules that nuvec.nn lacks, each with why.
tests/test_nn_names.py fails when nuvec.nn (or its submodule of the same path) lacks a name that
is listed in neither MISSING nor PENDING_MERGE, and when a listed name is one nuvec has everywhere
MLX has it (drop it then)."""

_QUANT = "quantized layers come with quantization: issue 15"

MISSING = {
    "QQLinear": _QUANT,
    "QuantizedAllToShardedLinear": _QUANT,
    "QuantizedShardedToAllLinear": _QUANT,
}


def _on(branch, names):
    return {n: f"issue 12, on branch {branch} (not merged yet)" for n in names.split()}


# TEMPORARY: names other branches of issue 12 add, absent from this one until the lead merges
# them. The lead empties this block after merging; test_nn_names.py fails on an entry nuvec has.
PENDING_MERGE = {}
