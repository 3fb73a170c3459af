"""The architectures nuvec.lm builds, by Hugging Face ``model_type``.

``MODELS`` maps a config's ``model_type`` to the module (in this package) that holds its
``ModelArgs`` dataclass and ``Model`` class: one line per architecture. ``build(config)`` makes
the model a ``config.json`` describes, with random weights that ``load`` then replaces."""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType
from typing import Any

__all__ = ["MODELS", "build", "get_model_module", "normalize_config"]

MODELS = {
    "llama": "llama",
    "mistral": "llama",  # mlx-lm maps mistral to its llama module too
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "gemma3_text": "gemma3_text",
    "phi3": "phi3",
    "qwen3_moe": "qwen3_moe",
    "mixtral": "mixtral",
    "qwen2_moe": "qwen2_moe",
}


def get_model_module(model_type: Any) -> ModuleType:
    """The module of ``model_type``; an unsupported one raises ValueError."""
    if model_type not in MODELS:
        raise ValueError(
            f"unsupported model type {model_type!r} (supported: {', '.join(sorted(MODELS))})"
        )
    return importlib.import_module(f"{__name__}.{MODELS[model_type]}")


def normalize_config(config: dict) -> dict:
    """``config`` with transformers 5's ``rope_parameters`` spelled as the older keys the
    modules read: ``rope_theta`` and ``rope_scaling`` (when its type is not "default"); a form
    nested per layer type (Gemma 3) gives them from "full_attention" and the sliding layers'
    base as ``rope_local_base_freq``."""
    config = dict(config)
    params = config.get("rope_parameters")
    if not isinstance(params, dict):
        return config
    if all(isinstance(v, dict) for v in params.values()):
        local = params.get("sliding_attention")
        if local and "rope_theta" in local:
            config.setdefault("rope_local_base_freq", local["rope_theta"])
        params = params.get("full_attention") or next(iter(params.values()), {})
    if "rope_theta" in params:
        config.setdefault("rope_theta", params["rope_theta"])
    kind = params.get("rope_type", params.get("type", "default"))
    if kind != "default" and config.get("rope_scaling") is None:
        config["rope_scaling"] = {k: v for k, v in params.items() if k != "rope_theta"}
    return config


def build(config: dict) -> Any:
    """The ``Model`` of ``config["model_type"]`` from a config dict (keys its ``ModelArgs`` does
    not have are ignored, as mlx-lm's ``BaseModelArgs.from_dict`` ignores them)."""
    module = get_model_module(config.get("model_type"))
    config = normalize_config(config)
    names = {f.name for f in dataclasses.fields(module.ModelArgs)}
    try:
        args = module.ModelArgs(**{k: v for k, v in config.items() if k in names})
    except TypeError as e:
        raise ValueError(f"the config lacks a hyper-parameter: {e}") from None
    return module.Model(args)
