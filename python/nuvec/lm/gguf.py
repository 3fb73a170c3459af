"""A model from a GGUF file: the architecture from its metadata, the weights renamed to mlx-lm's
names, llama.cpp's Q/K row permutation undone, quantized tensors kept quantized.

``nuvec.load`` maps the file and gives Q4_0/Q4_1/Q8_0 tensors as MLX's ``(w, scales, biases)``
triple with groups of 32 (docs/io.md); those become ``QuantizedLinear`` / ``QuantizedEmbedding``
layers. Other tensors (F32, F16, BF16, the K-quants dequantized to float16) become float32
weights of ordinary layers: this CPU computes in float32, so converting once at load is cheaper
than converting each step."""

from __future__ import annotations

import re
from typing import Any

from .. import _core as mx
from .. import io as nio
from ..utils import tree_flatten
from .models import build
from .models.quantized import QuantizedEmbedding, QuantizedLinear, from_packed

__all__ = ["load_gguf", "model_config", "unpermute"]

GROUP_SIZE = 32  # every GGUF block type nuvec loads quantized holds 32 elements
ARCHITECTURES = {"llama": "LlamaForCausalLM"}  # GGUF architecture -> transformers' class

# GGUF tensor name -> mlx-lm parameter path (per block: the part after "blk.N.").
_BLOCK = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
_TOP = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


def _int(meta: dict, key: str, default: Any = None) -> Any:
    value = meta.get(key)
    return default if value is None else value.item()


def model_config(meta: dict, arrays: dict) -> dict:
    """The config.json a GGUF's metadata describes (Hugging Face's keys; ``model_type`` from
    ``general.architecture``, the BOS/EOS ids from the tokenizer's)."""
    arch = meta.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise ValueError(
            f"unsupported architecture {arch!r} (supported: {', '.join(ARCHITECTURES)})"
        )
    p = f"{arch}."
    try:
        heads = _int(meta, p + "attention.head_count")
        dim = _int(meta, p + "embedding_length")
        config = {
            "architectures": [ARCHITECTURES[arch]],
            "model_type": arch,
            "hidden_size": dim,
            "num_hidden_layers": _int(meta, p + "block_count"),
            "intermediate_size": _int(meta, p + "feed_forward_length"),
            "num_attention_heads": heads,
            "num_key_value_heads": _int(meta, p + "attention.head_count_kv", heads),
            "head_dim": _int(meta, p + "attention.key_length", dim // heads),
            "vocab_size": _int(meta, p + "vocab_size") or len(meta["tokenizer.ggml.tokens"]),
            "rms_norm_eps": _int(meta, p + "attention.layer_norm_rms_epsilon", 1e-5),
            "rope_theta": _int(meta, p + "rope.freq_base", 10000.0),
            "tie_word_embeddings": "output.weight" not in arrays,
            "max_position_embeddings": _int(meta, p + "context_length"),
        }
    except (KeyError, AttributeError, TypeError) as e:
        raise ValueError(f"the GGUF metadata lacks a llama hyper-parameter ({e})") from None
    scaling = meta.get(p + "rope.scaling.type")
    if "rope_freqs.weight" in arrays:  # Llama 3.1's scaling, as llama.cpp's converter writes it
        if scaling not in (None, "none"):
            raise ValueError(
                f"a GGUF rope_freqs tensor with rope scaling {scaling!r} is not supported"
            )
        factors = arrays["rope_freqs.weight"]
        if factors.ndim != 1 or factors.shape[0] != config["head_dim"] // 2:
            raise ValueError(
                f"the GGUF rope_freqs tensor has shape {factors.shape}, not ({config['head_dim'] // 2},)"
            )
        config["rope_scaling"] = {
            "rope_type": "freq_factors",
            "freq_factors": factors.astype(mx.float32).tolist(),
        }
    elif scaling == "linear":
        config["rope_scaling"] = {"type": "linear", "factor": _int(meta, p + "rope.scaling.factor")}
    elif scaling not in (None, "none"):
        raise ValueError(f"unsupported GGUF rope scaling {scaling!r} (supported: 'linear')")
    if config["max_position_embeddings"] is None:
        del config["max_position_embeddings"]
    if None in config.values():
        missing = [k for k, v in config.items() if v is None]
        raise ValueError(f"the GGUF metadata lacks a llama hyper-parameter ({missing[0]})")
    for key in ("bos_token_id", "eos_token_id"):
        if f"tokenizer.ggml.{key}" in meta:
            config[key] = _int(meta, f"tokenizer.ggml.{key}")
    return config


def unpermute(w: Any, heads: int) -> Any:
    """Undo llama.cpp's Q/K row order: its converter interleaves each head's two rotary halves
    (row ``2i + h`` of a head is Hugging Face's row ``h * d/2 + i``) so its rope can turn adjacent
    pairs; this restores the halves that ``fast.rope(traditional=False)`` turns."""
    rows = w.shape[0]
    half = rows // heads // 2
    order = mx.arange(rows).reshape(heads, half, 2).transpose(0, 2, 1).reshape(rows)
    return mx.take(w, order, axis=0)


def _tensors(arrays: dict) -> dict[str, dict[str, Any]]:
    """GGUF base name -> {"weight": ..., "scales": ..., "biases": ...} (the last two if quantized)."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in arrays.items():
        m = re.fullmatch(r"(.+)\.(weight|scales|biases)", name)
        if m is None:
            raise ValueError(f"unexpected tensor {name!r} in the GGUF file")
        out.setdefault(m.group(1), {})[m.group(2)] = value
    return out


def _path(base: str) -> str:
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)", base)
    if m and m.group(2) in _BLOCK:
        return f"model.layers.{m.group(1)}.{_BLOCK[m.group(2)]}"
    if base in _TOP:
        return _TOP[base]
    raise ValueError(f"unexpected tensor {base!r} in the GGUF file")


def _node(model: Any, path: str) -> Any:
    node = model
    for p in path.split("."):
        node = node[int(p)] if isinstance(node, list) else getattr(node, p)
    return node


def load_gguf(path: str) -> tuple[Any, dict, dict]:
    """The model in ``path``, the file's metadata (for the tokenizer) and its config."""
    arrays, meta = nio.load(path, return_metadata=True)
    config = model_config(meta, arrays)
    model = build(config)
    expected = {k for k, _ in tree_flatten(model.parameters())}
    seen = set()
    heads = {"attn_q": config["num_attention_heads"], "attn_k": config["num_key_value_heads"]}
    for base, parts in _tensors(
        {k: v for k, v in arrays.items() if k != "rope_freqs.weight"}
    ).items():
        path_ = _path(base)
        kind = base.rsplit(".", 1)[-1]
        if kind in heads:
            parts = {k: unpermute(v, heads[kind]) for k, v in parts.items()}
        parent_path, _, attr = path_.rpartition(".")
        parent = _node(model, parent_path) if parent_path else model  # lm_head: at the top
        w = parts["weight"]
        if "scales" in parts:
            cls = QuantizedEmbedding if base == "token_embd" else QuantizedLinear
            setattr(parent, attr, from_packed(cls, w, parts["scales"], parts["biases"], GROUP_SIZE))
        else:
            layer = getattr(parent, attr)
            if tuple(layer.weight.shape) != tuple(w.shape):
                raise ValueError(f"tensor {base!r} has shape {w.shape}, not {layer.weight.shape}")
            layer.weight = w.astype(mx.float32)
        seen.add(path_ + ".weight")
    missing = sorted(expected - seen)
    if missing:
        raise ValueError(f"the GGUF file lacks tensors for {missing[:3]}")
    mx.eval(model.parameters())
    return model, meta, config
