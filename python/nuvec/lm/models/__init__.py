"""The architectures, by Hugging Face ``model_type``: ``MODELS`` maps it to the module whose
``Model`` and ``ModelArgs`` build it; ``build(config)`` makes the model of a ``config.json``."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import gemma3_text, llama, mixtral, phi3, qwen2, qwen3, qwen3_moe

MODELS = {
    "llama": llama,
    "mistral": llama,
    "qwen2": qwen2,
    "qwen3": qwen3,
    "gemma3_text": gemma3_text,
    "phi3": phi3,
    "qwen3_moe": qwen3_moe,
    "mixtral": mixtral,
}


def build(config: dict) -> Any:
    """The model a ``config.json`` describes (its keys that ``ModelArgs`` does not name are
    ignored); ``ValueError`` for a ``model_type`` not in ``MODELS``."""
    kind = config.get("model_type")
    if kind not in MODELS:
        raise ValueError(f"unsupported architecture {kind!r} (supported: {', '.join(MODELS)})")
    module = MODELS[kind]
    names = {f.name for f in dataclasses.fields(module.ModelArgs)}
    return module.Model(module.ModelArgs(**{k: v for k, v in config.items() if k in names}))
