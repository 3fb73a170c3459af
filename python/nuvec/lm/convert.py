"""``convert``: a GGUF file or a model directory written as MLX's format, as ``mlx_lm.convert``
writes it: config.json (with ``"quantization": {"group_size", "bits", "mode"}`` and per-layer
entries when quantized), model.safetensors (shards of at most 5 GB beyond that, with
model.safetensors.index.json), tokenizer.json, tokenizer_config.json (the chat template) and
generation_config.json.

A GGUF file's weights are dequantized to float32 (``dequantize_model``) first: its blocks of 32
with float16 scales become an unquantized model that ``--dtype`` casts and ``-q`` requantizes."""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable
from typing import Any

from .. import _core as mx
from .. import io as nio
from ..nn.layers.base import Module
from ..nn.layers.quantized import _defaults_for_mode
from ..nn.layers.quantized import quantize as nn_quantize
from ..utils import tree_flatten
from .utils import dequantize_model, load

__all__ = [
    "convert",
    "make_shards",
    "mixed_quant_predicate_builder",
    "quantize_model",
    "save_config",
    "save_model",
    "total_parameters",
]

MAX_FILE_SIZE_GB = 5
DTYPES = ("float16", "bfloat16", "float32")
RECIPES = {"mixed_2_6": (2, 6), "mixed_3_4": (3, 4), "mixed_3_6": (3, 6), "mixed_4_6": (4, 6)}


def make_shards(weights: dict[str, Any], max_file_size_gb: float | None = None) -> list[dict]:
    """``weights`` split in order into shards of at most ``max_file_size_gb`` GiB each (default
    ``MAX_FILE_SIZE_GB``; a tensor larger than that alone in its shard), as mlx-lm splits them."""
    limit = int((max_file_size_gb or MAX_FILE_SIZE_GB) * (1 << 30))
    shards: list[dict] = [{}]
    size = 0
    for k, v in weights.items():
        if shards[-1] and size + v.nbytes > limit:
            shards.append({})
            size = 0
        shards[-1][k] = v
        size += v.nbytes
    return shards


def total_parameters(model: Any) -> int:
    """The parameters ``model`` stands for, as mlx-lm counts them: a quantized layer its
    unpacked weight elements (``32 / bits`` per uint32 word) and its bias, not its scales and
    biases."""

    def count(m: Any) -> int:
        if hasattr(m, "bits"):
            return m.weight.size * 32 // m.bits + (m["bias"].size if "bias" in m else 0)
        return sum(v.size for _, v in tree_flatten(m.parameters()))

    return sum(count(m) for _, m in tree_flatten(model.leaf_modules(), is_leaf=Module.is_module))


def save_model(
    path: str, model: Any, progress: bool = True, max_file_size_gb: float | None = None
) -> None:
    """The parameters of ``model`` into ``path`` as model.safetensors, or
    model-0000i-of-0000n.safetensors shards, with metadata ``{"format": "mlx"}`` and the index
    mlx-lm writes. Each tensor is evaluated (dequantized, cast, quantized) under a tqdm bar on
    stderr (shown on a terminal only)."""
    from tqdm import tqdm

    os.makedirs(path, exist_ok=True)
    weights = dict(tree_flatten(model.parameters()))
    for v in tqdm(
        list(weights.values()), desc="Converting", unit="tensor", disable=None if progress else True
    ):
        mx.eval(v)
    shards = make_shards(weights, max_file_size_gb)
    names = (
        ["model.safetensors"]
        if len(shards) == 1
        else [f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]
    )
    weight_map = {}
    for name, shard in zip(names, shards):
        nio.save_safetensors(os.path.join(path, name), shard, {"format": "mlx"})
        weight_map.update(dict.fromkeys(shard, name))
    index = {
        "metadata": {
            "total_size": sum(v.nbytes for v in weights.values()),
            "total_parameters": total_parameters(model),
        },
        "weight_map": dict(sorted(weight_map.items())),
    }
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=4)


def save_config(config: dict, config_path: str) -> None:
    """config.json as mlx-lm writes it: sorted, indented, ``quantization_config`` a copy of
    ``quantization`` (transformers' name)."""
    config = {k: v for k, v in config.items() if k not in ("_name_or_path", "vision_config")}
    if "quantization" in config:
        config["quantization_config"] = config["quantization"]
    with open(config_path, "w") as f:
        json.dump(dict(sorted(config.items())), f, indent=4)


def quantize_model(
    model: Any,
    config: dict,
    group_size: int | None = None,
    bits: int | None = None,
    mode: str = "affine",
    quant_predicate: Callable[[str, Any], bool | dict] | None = None,
) -> tuple[Any, dict]:
    """``model`` quantized in place and its config with the ``quantization`` entry, as mlx-lm's:
    every layer with ``to_quantized`` whose rows hold whole groups (``group_size`` and ``bits``
    default to the mode's); ``quant_predicate(path, module)`` may refuse a layer or give it its
    own parameters, written as a per-layer entry. Of a model quantized already, the layers still
    float are quantized, each with its own entry."""
    group_size, bits = _defaults_for_mode(mode, group_size, bits)
    params = {"group_size": group_size, "bits": bits, "mode": mode}
    config = copy.deepcopy(config)
    per_layer = "quantization" in config
    entry = config.setdefault("quantization", params)

    def predicate(p: str, m: Any) -> Any:
        if not hasattr(m, "to_quantized") or m.weight.shape[-1] % group_size:
            return False
        choice = quant_predicate(p, m) if quant_predicate is not None else True
        if isinstance(choice, dict):
            entry[p] = choice
        elif per_layer and choice:
            entry[p] = params
        return choice

    nn_quantize(model, group_size, bits, mode=mode, class_predicate=predicate)
    config["quantization_config"] = entry
    return model, config


def mixed_quant_predicate_builder(
    recipe: str, model: Any, group_size: int | None = None
) -> Callable[[str, Any], dict]:
    """mlx-lm's mixed-bit recipes ("mixed_2_6", "mixed_3_4", "mixed_3_6", "mixed_4_6": low and
    high bits), llama.cpp's Q4_K_M choices: the high bits for ``v_proj`` and ``down_proj`` in the
    first and last eighth of the layers and every third between, and for ``lm_head``."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown quantization recipe {recipe!r} (known: {', '.join(RECIPES)})")
    low, high = RECIPES[recipe]
    group_size = group_size or 64
    down = [k for k, _ in model.named_modules() if "down_proj" in k]
    if not down:
        raise ValueError("the model has no down_proj layers for a mixed recipe")
    where = next(i for i, part in enumerate(down[0].split(".")) if part.isdigit())
    n = len(model.layers)

    def predicate(path: str, module: Any) -> dict:
        parts = path.split(".")
        index = int(parts[where]) if len(parts) > where and parts[where].isdigit() else 0
        more = index < n // 8 or index >= 7 * n // 8 or (index - n // 8) % 3 == 2
        wide = "lm_head" in path or (more and ("v_proj" in path or "down_proj" in path))
        return {"group_size": group_size, "bits": high if wide else low, "mode": "affine"}

    return predicate


def _save_generation_config(source: str, out: str, config: dict) -> None:
    """generation_config.json: the source directory's, else the BOS/EOS ids the config knows."""
    file = os.path.join(source, "generation_config.json")
    if os.path.isdir(source) and os.path.exists(file):
        shutil.copy(file, out)
        return
    known = {k: config[k] for k in ("bos_token_id", "eos_token_id") if k in config}
    if known:
        with open(os.path.join(out, "generation_config.json"), "w") as f:
            json.dump(known, f, indent=4)


def convert(
    hf_path: str,
    mlx_path: str = "mlx_model",
    quantize: bool = False,
    q_group_size: int | None = None,
    q_bits: int | None = None,
    q_mode: str = "affine",
    dtype: str | None = None,
    dequantize: bool = False,
    quant_predicate: str | Callable[[str, Any], bool | dict] | None = None,
    progress: bool = True,
) -> None:
    """Write the model at ``hf_path`` (a GGUF file or a Hugging Face / MLX directory) into the
    new directory ``mlx_path`` in MLX's format: cast to ``dtype`` (default: the config's
    ``torch_dtype``, else unchanged), quantized with ``quantize`` (``quant_predicate``: a
    function or the name of a mixed recipe), or an MLX directory's quantized layers made float
    again with ``dequantize``."""
    if os.path.exists(mlx_path):
        raise ValueError(f"cannot save to {mlx_path}: it already exists")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r} (supported: {', '.join(DTYPES)})")
    if quantize and dequantize:
        raise ValueError("choose either quantize or dequantize, not both")
    if isinstance(quant_predicate, str) and q_mode != "affine":
        raise ValueError("the mixed recipes quantize in the affine mode only")
    model, tokenizer, config = load(hf_path, lazy=True, return_config=True, progress=progress)
    config = dict(config)
    if not os.path.isdir(hf_path) or dequantize:  # a GGUF file: float32 first
        dequantize_model(model, evaluate=False)
        config.pop("quantization", None)
        config.pop("quantization_config", None)
    dtype = dtype or config.get("torch_dtype") or config.get("dtype")  # transformers 5: "dtype"
    if dtype in DTYPES:
        model.set_dtype(getattr(mx, dtype))  # the floating parameters
        config["torch_dtype"] = dtype
    if quantize:
        if isinstance(quant_predicate, str):
            quant_predicate = mixed_quant_predicate_builder(quant_predicate, model, q_group_size)
        model, config = quantize_model(model, config, q_group_size, q_bits, q_mode, quant_predicate)
    os.makedirs(mlx_path)
    save_model(mlx_path, model, progress)
    save_config(config, os.path.join(mlx_path, "config.json"))
    tokenizer.save_pretrained(mlx_path)
    _save_generation_config(hf_path, mlx_path, config)
