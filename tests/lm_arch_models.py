"""Tiny seeded models of each nuvec.lm architecture for the tests, and mlx-lm's own model files
as an oracle where mlx and mlx-lm are importable (mlx-lm's modules are imported without its
package ``__init__``, which pulls in transformers)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

import pytest

import nuvec as mx
from nuvec.lm.models import build

VOCAB = 97
_BASE = dict(
    hidden_size=64, num_hidden_layers=3, intermediate_size=96, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=VOCAB, rms_norm_eps=1e-5, rope_theta=10000.0,
)  # fmt: skip

CONFIGS = {
    "llama": dict(_BASE, model_type="llama", tie_word_embeddings=False),
    "mistral": dict(
        _BASE, model_type="mistral", sliding_window=5,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
    ),
    "qwen2": dict(_BASE, model_type="qwen2"),
    "qwen3": dict(_BASE, model_type="qwen3", head_dim=32),
    "gemma3_text": dict(
        _BASE, model_type="gemma3_text", head_dim=16, sliding_window=4, sliding_window_pattern=2,
        query_pre_attn_scalar=16, final_logit_softcapping=30.0, rope_local_base_freq=100.0,
        rope_theta=10000.0, rope_scaling={"rope_type": "linear", "factor": 2.0},
    ),
    "phi3": dict(_BASE, model_type="phi3", partial_rotary_factor=0.5),
    "phi3_longrope": dict(
        _BASE, model_type="phi3", partial_rotary_factor=0.5, max_position_embeddings=131072,
        rope_scaling={"type": "longrope", "long_factor": [1.0, 1.5, 3.0, 8.0],
                      "short_factor": [1.0] * 4},
    ),
    "qwen3_moe": dict(
        _BASE, model_type="qwen3_moe", head_dim=16, num_experts=8, num_experts_per_tok=2,
        moe_intermediate_size=32, norm_topk_prob=True, mlp_only_layers=[1],
    ),
    "qwen2_moe": dict(
        _BASE, model_type="qwen2_moe", num_experts=8, num_experts_per_tok=3,
        moe_intermediate_size=32, shared_expert_intermediate_size=64,
    ),
    "mixtral": dict(_BASE, model_type="mixtral", num_local_experts=4, num_experts_per_tok=2),
}  # fmt: skip


def tiny(name: str, seed: int = 0):
    """The tiny model ``name`` with random weights (norm weights too, so that a wrong ``1 +
    weight`` or a missing norm shows)."""
    mx.random.seed(seed)
    model = build(CONFIGS[name])
    from nuvec.utils import tree_flatten

    params = tree_flatten(model.parameters())
    model.load_weights(
        [(k, v + 0.1 * mx.random.normal(v.shape)) if "norm" in k else (k, v) for k, v in params]
    )
    mx.eval(model.parameters())
    return model


def mlx_lm_module(name: str):
    """``mlx_lm.models.<name>`` (skips where mlx or mlx-lm is not installed)."""
    pytest.importorskip("mlx.core")
    if "mlx_lm" not in sys.modules:
        spec = importlib.util.find_spec("mlx_lm")
        if spec is None or not spec.submodule_search_locations:
            pytest.skip("mlx-lm is not installed")
        stub = types.ModuleType("mlx_lm")
        stub.__path__ = list(spec.submodule_search_locations)
        sys.modules["mlx_lm"] = stub
    try:
        return importlib.import_module(f"mlx_lm.models.{name}")
    except ImportError as e:
        pytest.skip(f"mlx_lm.models.{name}: {e}")
