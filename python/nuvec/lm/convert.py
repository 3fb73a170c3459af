"""``convert``: a GGUF file or a model directory written as MLX's format, as ``mlx_lm.convert``
writes it: config.json (with ``"quantization": {"group_size", "bits", "mode"}`` and per-layer
entries when quantized), model.safetensors (shards of at most 5 GB beyond that, with
model.safetensors.index.json), tokenizer.json, tokenizer_config.json (the chat template) and
generation_config.json.

A GGUF file's weights are dequantized to float32 (``dequantize_model``) first: its blocks of 32
with float16 scales become an unquantized model that ``--dtype`` casts and ``-q`` requantizes."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from typing import Any

from .. import _core as mx
from .. import io as nio
from ..nn.layers.quantized import quantize as nn_quantize
from ..utils import tree_flatten
from .utils import dequantize_model, load

__all__ = ["convert", "make_shards", "quantize_model", "save_config", "save_weights"]

MAX_FILE_SIZE_GB = 5
DTYPES = ("float16", "bfloat16", "float32")


def make_shards(weights: dict[str, Any], max_file_size_gb: float = MAX_FILE_SIZE_GB) -> list[dict]:
    """``weights`` split in order into shards of at most ``max_file_size_gb`` GiB each (a tensor
    larger than that alone in its shard), as mlx-lm splits them."""
    limit = int(max_file_size_gb * (1 << 30))
    shards: list[dict] = [{}]
    size = 0
    for k, v in weights.items():
        if shards[-1] and size + v.nbytes > limit:
            shards.append({})
            size = 0
        shards[-1][k] = v
        size += v.nbytes
    return shards


def save_weights(
    path: str,
    weights: dict[str, Any],
    progress: bool = True,
    max_file_size_gb: float = MAX_FILE_SIZE_GB,
) -> None:
    """``weights`` into ``path`` as model.safetensors, or model-0000i-of-0000n.safetensors shards,
    with metadata ``{"format": "mlx"}`` and the index mlx-lm writes. Each tensor is evaluated
    (dequantized, cast, quantized) under a tqdm bar on stderr (shown on a terminal only)."""
    from tqdm import tqdm

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
        "metadata": {"total_size": sum(v.nbytes for v in weights.values())},
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
    group_size: int = 64,
    bits: int = 4,
    mode: str = "affine",
    quant_predicate: Callable[[str, Any], bool | dict] | None = None,
) -> tuple[Any, dict]:
    """``model`` quantized in place and its config with the ``quantization`` entry (mlx-lm's
    rule: every layer with ``to_quantized`` whose rows hold whole groups; ``quant_predicate``
    may refuse a layer or give it its own parameters, written as a per-layer entry)."""
    entry: dict[str, Any] = {"group_size": group_size, "bits": bits, "mode": mode}

    def predicate(p: str, m: Any) -> Any:
        if not hasattr(m, "to_quantized") or m.weight.shape[-1] % group_size:
            return False
        choice = quant_predicate(p, m) if quant_predicate is not None else True
        if isinstance(choice, dict):
            entry[p] = choice
        return choice

    nn_quantize(model, group_size, bits, mode=mode, class_predicate=predicate)
    return model, {**config, "quantization": entry}


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
    q_group_size: int = 64,
    q_bits: int = 4,
    q_mode: str = "affine",
    dtype: str | None = None,
    dequantize: bool = False,
    quant_predicate: Callable[[str, Any], bool | dict] | None = None,
    progress: bool = True,
) -> None:
    """Write the model at ``hf_path`` (a GGUF file or a Hugging Face / MLX directory) into the
    new directory ``mlx_path`` in MLX's format: cast to ``dtype`` (default: the config's
    ``torch_dtype``, else unchanged), quantized with ``quantize``, or an MLX directory's
    quantized layers made float again with ``dequantize``."""
    if os.path.exists(mlx_path):
        raise ValueError(f"cannot save to {mlx_path}: it already exists")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r} (supported: {', '.join(DTYPES)})")
    model, tokenizer, config = load(hf_path, lazy=True, return_config=True, progress=progress)
    config = dict(config)
    is_gguf = not os.path.isdir(hf_path)
    if quantize and "quantization" in config and not dequantize:
        raise ValueError("the model is quantized already (convert with dequantize to requantize)")
    if is_gguf or dequantize:
        dequantize_model(model, evaluate=False)
        config.pop("quantization", None)
        config.pop("quantization_config", None)
    dtype = dtype or config.get("torch_dtype")
    if dtype in DTYPES:
        model.set_dtype(getattr(mx, dtype))  # the floating parameters
        config["torch_dtype"] = dtype
    if quantize:
        model, config = quantize_model(model, config, q_group_size, q_bits, q_mode, quant_predicate)
    os.makedirs(mlx_path)
    save_weights(mlx_path, dict(tree_flatten(model.parameters())), progress)
    save_config(config, os.path.join(mlx_path, "config.json"))
    tokenizer.save_pretrained(mlx_path)
    _save_generation_config(hf_path, mlx_path, config)
