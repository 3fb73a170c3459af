"""A model from a Hugging Face or MLX-format directory, as mlx-lm's ``load_model``: config.json,
the weights of one or more (sharded) ``*.safetensors`` files, and, for a directory
``mlx_lm.convert -q`` wrote, the quantized layers its ``"quantization"`` entry describes.

``nuvec.load`` maps each safetensors file: the weights stay in the file's pages, in its dtype,
until a computation reads them."""

from __future__ import annotations

import glob
import json
import os
from typing import Any

from .. import _core as mx
from .. import io as nio
from ..nn.layers.quantized import quantize
from .models import build

__all__ = ["load_config", "load_model", "load_weights", "weight_files"]


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return value


def load_config(path: str) -> dict:
    """config.json of the directory ``path``, with generation_config.json's ``eos_token_id``
    where that file exists (as mlx-lm reads it)."""
    file = os.path.join(path, "config.json")
    if not os.path.exists(file):
        raise ValueError(f"{path} holds no config.json (not a model directory)")
    config = _read_json(file)
    generation = os.path.join(path, "generation_config.json")
    try:  # an unreadable generation config is ignored, as mlx-lm ignores it
        eos = _read_json(generation).get("eos_token_id")
    except (OSError, ValueError):
        eos = None
    if eos is not None:
        config["eos_token_id"] = eos
    return config


def weight_files(path: str) -> list[str]:
    """The safetensors files of a model directory: those model.safetensors.index.json names,
    else every ``model*.safetensors`` (else every ``*.safetensors``)."""
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(index):
        names = sorted(set(_read_json(index).get("weight_map", {}).values()))
        files = [os.path.join(path, n) for n in names]
        missing = [n for n, f in zip(names, files) if not os.path.exists(f)]
        if missing:
            raise ValueError(f"{path}: the index names missing weight files {missing[:3]}")
    else:
        files = sorted(glob.glob(os.path.join(path, "model*.safetensors")))
        files = files or sorted(glob.glob(os.path.join(path, "*.safetensors")))
    if not files:
        raise ValueError(f"{path} holds no *.safetensors weights")
    return files


def load_weights(files: list[str], progress: bool = True) -> dict[str, Any]:
    """Every tensor of ``files``, mapped; a tqdm bar over their bytes on stderr (shown on a
    terminal only, never with ``progress=False``)."""
    from tqdm import tqdm

    weights: dict[str, Any] = {}
    total = sum(os.path.getsize(f) for f in files)
    with tqdm(
        total=total, unit="B", unit_scale=True, desc="Loading", disable=None if progress else True
    ) as bar:
        for f in files:
            weights.update(nio.load(f))
            bar.update(os.path.getsize(f))
    return weights


def _sanitize(model: Any, config: dict, weights: dict[str, Any]) -> dict[str, Any]:
    """The model's own ``sanitize`` if it has one; then drop what no model here holds: the
    rotary tables old checkpoints saved, and the head of a model tied to its embedding."""
    if hasattr(model, "sanitize"):
        weights = model.sanitize(weights)
    weights = {k: v for k, v in weights.items() if not k.endswith("rotary_emb.inv_freq")}
    if config.get("tie_word_embeddings", True) and "lm_head" not in model:
        weights = {k: v for k, v in weights.items() if not k.startswith("lm_head.")}
    return weights


def _quantize(model: Any, quantization: dict, weights: dict[str, Any]) -> None:
    """Swap in the quantized layers an MLX directory holds (mlx-lm's rule): a layer the config
    names gets its entry (``False``: stays float, a dict: its own ``group_size``/``bits``), any
    other layer is quantized where its ``scales`` are among the weights."""

    def predicate(p: str, m: Any) -> Any:
        if p in quantization:
            return quantization[p]
        return hasattr(m, "to_quantized") and f"{p}.scales" in weights

    try:
        group_size, bits = quantization["group_size"], quantization["bits"]
    except (KeyError, TypeError):
        raise ValueError("the config's quantization lacks group_size or bits") from None
    quantize(
        model, group_size, bits, mode=quantization.get("mode", "affine"), class_predicate=predicate
    )


def load_model(
    path: str,
    lazy: bool = False,
    strict: bool = True,
    model_config: dict | None = None,
    progress: bool = True,
) -> tuple[Any, dict]:
    """``(model, config)`` from the directory ``path``. ``model_config`` entries override
    config.json's; ``lazy`` leaves the (mapped) weights unevaluated."""
    config = {**load_config(path), **(model_config or {})}
    files = weight_files(path)
    model = build(config)
    weights = _sanitize(model, config, load_weights(files, progress))
    quantization = config.get("quantization")
    if quantization is not None:
        _quantize(model, quantization, weights)
    model.eval()
    try:
        model.load_weights(list(weights.items()), strict=strict)
    except ValueError as e:  # one line: the problems' list can be long
        problems = " ".join(str(e).split())
        raise ValueError(f"{path}: the weights do not fit the config: {problems[:300]}") from None
    if not lazy:
        mx.eval(model.parameters())
    return model, config
