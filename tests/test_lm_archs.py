"""nuvec.lm's architectures (qwen2, qwen3, gemma3_text, phi3, qwen3_moe, and llama / mistral with
sliding windows) on tiny seeded models: shapes, mlx-lm's outputs for the same weights, a NumPy
float64 forward, cache equivalence (bit for bit where the serial rule promises it), loading by
Hugging Face names, and quantized experts."""

import dataclasses

import numpy as np
import pytest

import nuvec as mx
import nuvec.nn as nn
from lm_arch_models import CONFIGS, VOCAB, mlx_lm_module, tiny
from nuvec.lm.models import MODELS, build
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.models.switch_layers import QuantizedSwitchLinear
from nuvec.utils import tree_flatten

pytestmark = pytest.mark.nuvec_only  # nuvec.lm is mlx-lm's counterpart; mlx.core has no lm

ARCHS = list(CONFIGS)
WINDOWED = {"mistral", "gemma3_text"}  # rotating caches reorder keys: equal to rounding only


def _tokens(n, batch=1, seed=1):
    return mx.array(np.random.RandomState(seed).randint(0, VOCAB, (batch, n)))


def test_every_architecture_is_registered_by_model_type():
    for config in CONFIGS.values():
        assert config["model_type"] in MODELS
    with pytest.raises(ValueError, match="unsupported model type"):
        build({"model_type": "nope"})


@pytest.mark.parametrize("name", ARCHS)
def test_shapes(name):
    model = tiny(name)
    assert model(_tokens(7, batch=2)).shape == (2, 7, VOCAB)
    assert len(model.layers) == 3


@pytest.mark.parametrize("name", ARCHS)
def test_logits_equal_mlx_lm_for_the_same_weights(name):
    """40 tokens: longer than the windows (4, 5) and 80 expert choices (the sorted path)."""
    mlx = pytest.importorskip("mlx.core")
    module = mlx_lm_module({"mistral": "llama"}.get(name, CONFIGS[name]["model_type"]))
    model = tiny(name)
    config = dict(CONFIGS[name], decoder_sparse_step=1)
    config.setdefault("max_position_embeddings", 4096)
    config.setdefault("tie_word_embeddings", model.args.tie_word_embeddings)
    if name == "gemma3_text":  # mlx-lm's gemma3_text has no final soft-capping
        config.pop("final_logit_softcapping")
        model.args.final_logit_softcapping = None
    fields = {f.name for f in dataclasses.fields(module.ModelArgs)}
    ref = module.Model(module.ModelArgs(**{k: v for k, v in config.items() if k in fields}))
    weights = [(k, mlx.array(np.array(v))) for k, v in tree_flatten(model.parameters())]
    if name == "gemma3_text":
        weights.append(("lm_head.weight", mlx.array(np.array(model.model.embed_tokens.weight))))
    ref.load_weights(weights)
    tokens = np.random.RandomState(2).randint(0, VOCAB, (1, 40))
    ours = np.array(model(mx.array(tokens)))
    theirs = np.array(ref(mlx.array(tokens)))
    np.testing.assert_allclose(ours, theirs, atol=5e-5, rtol=1e-5)


def _np_forward(model, tokens):
    """Qwen2 / Qwen3 in NumPy float64: biased q/k/v, per-head q/k RMSNorms, rope on halves."""
    a = model.args
    w = {k: np.array(v, np.float64) for k, v in tree_flatten(model.parameters())}
    eps, hd, nh, nkv = a.rms_norm_eps, a.head_dim, a.num_attention_heads, a.num_key_value_heads

    def norm(x, g):
        return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + eps) * g

    def rope(x):  # (T, H, D), halves rotated
        T = x.shape[0]
        inv = a.rope_theta ** (-np.arange(0, hd, 2) / hd)
        ang = np.arange(T)[:, None, None] * inv
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        c, s = np.cos(ang), np.sin(ang)
        return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)

    def lin(x, p):
        return x @ w[p + ".weight"].T + w.get(p + ".bias", 0.0)

    T = len(tokens)
    h = w["model.embed_tokens.weight"][tokens]
    for i in range(a.num_hidden_layers):
        p = f"model.layers.{i}."
        x = norm(h, w[p + "input_layernorm.weight"])
        q = lin(x, p + "self_attn.q_proj").reshape(T, nh, hd)
        k = lin(x, p + "self_attn.k_proj").reshape(T, nkv, hd)
        v = lin(x, p + "self_attn.v_proj").reshape(T, nkv, hd)
        if p + "self_attn.q_norm.weight" in w:
            q, k = (
                norm(q, w[p + "self_attn.q_norm.weight"]),
                norm(k, w[p + "self_attn.k_norm.weight"]),
            )
        q, k = rope(q), rope(k)
        k, v = np.repeat(k, nh // nkv, 1), np.repeat(v, nh // nkv, 1)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        o = np.einsum("hts,shd->thd", s / s.sum(-1, keepdims=True), v).reshape(T, -1)
        h = h + lin(o, p + "self_attn.o_proj")
        x = norm(h, w[p + "post_attention_layernorm.weight"])
        g, u = lin(x, p + "mlp.gate_proj"), lin(x, p + "mlp.up_proj")
        h = h + lin(g / (1 + np.exp(-g)) * u, p + "mlp.down_proj")
    h = norm(h, w["model.norm.weight"])
    return h @ w["model.embed_tokens.weight"].T


@pytest.mark.parametrize("name", ["qwen2", "qwen3"])
def test_logits_equal_a_numpy_float64_forward(name):
    model = tiny(name)
    tokens = np.random.RandomState(3).randint(0, VOCAB, 11)
    ours = np.array(model(mx.array(tokens[None])))[0]
    np.testing.assert_allclose(ours, _np_forward(model, tokens), atol=2e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ARCHS)
def test_prefill_equals_step_by_step_decode(name):
    model = tiny(name)
    tokens = _tokens(13)
    full = model(tokens)
    cache = make_prompt_cache(model)
    steps = mx.concatenate([model(tokens[:, i : i + 1], cache=cache) for i in range(13)], 1)
    cache = make_prompt_cache(model)
    chunks = mx.concatenate([model(tokens[:, a:b], cache=cache) for a, b in [(0, 6), (6, 13)]], 1)
    np.testing.assert_allclose(np.array(steps), np.array(full), atol=1e-4, rtol=1e-5)
    np.testing.assert_allclose(np.array(chunks), np.array(full), atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(set(ARCHS) - WINDOWED))
def test_a_chunk_of_up_to_8_tokens_has_the_bits_of_one_by_one_decode(name):
    """Row independence and the serial rule: what speculative decoding's verify step rests on."""
    model = tiny(name)
    tokens = _tokens(12)
    a, b = make_prompt_cache(model), make_prompt_cache(model)
    model(tokens[:, :5], cache=a)
    model(tokens[:, :5], cache=b)
    chunk = np.array(model(tokens[:, 5:12], cache=a))
    one = np.concatenate([np.array(model(tokens[:, i : i + 1], cache=b)) for i in range(5, 12)], 1)
    assert np.array_equal(chunk, one)


def _hf_weights(model, name):
    """The model's weights as a Hugging Face file names them (experts one tensor each)."""
    flat = dict(tree_flatten(model.parameters()))
    if name not in ("qwen3_moe", "qwen2_moe", "mixtral"):
        return flat
    hf = {"gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"} if name == "mixtral" else {}
    out = {}
    for k, v in flat.items():
        if ".switch_mlp." in k:
            for e in range(v.shape[0]):
                key = k.replace(".switch_mlp.", f".experts.{e}.")
                for ours, theirs in hf.items():
                    key = key.replace(f".{ours}.", f".{theirs}.")
                out[key] = v[e]
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name", ARCHS)
def test_weights_saved_under_hf_names_load_into_a_fresh_model(name, tmp_path):
    model = tiny(name)
    path = str(tmp_path / "model.safetensors")
    mx.save_safetensors(path, _hf_weights(model, name))
    fresh = tiny(name, seed=7)
    weights = mx.load(path)
    if hasattr(fresh, "sanitize"):
        weights = fresh.sanitize(weights)
    fresh.load_weights(list(weights.items()))
    tokens = _tokens(9)
    assert np.array_equal(np.array(fresh(tokens)), np.array(model(tokens)))


def test_gemma3_soft_caps_the_final_logits():
    model = tiny("gemma3_text")
    tokens = _tokens(6)
    capped = np.array(model(tokens))
    model.args.final_logit_softcapping = None
    raw = np.array(model(tokens))
    np.testing.assert_allclose(capped, np.tanh(raw / 30.0) * 30.0, atol=1e-5)
    model.args.final_logit_softcapping = 0.5
    assert np.abs(np.array(model(tokens))).max() <= 0.5


def test_gemma3_layer_kinds_follow_the_pattern_or_layer_types():
    model = tiny("gemma3_text")
    assert [type(c).__name__ for c in make_prompt_cache(model)] == [
        "RotatingKVCache", "KVCache", "RotatingKVCache",
    ]  # fmt: skip
    attn = [layer.self_attn for layer in model.layers]
    assert [a.rope.base for a in attn] == [100.0, 10000.0, 100.0]
    assert [a.rope.scale for a in attn] == [1.0, 0.5, 1.0] and attn[0].scale == 16**-0.5
    config = dict(
        CONFIGS["gemma3_text"], layer_types=["full_attention"] * 2 + ["sliding_attention"]
    )
    assert [type(c).__name__[0] for c in make_prompt_cache(build(config))] == ["K", "K", "R"]


@pytest.mark.parametrize("name", ["qwen3_moe", "mixtral", "qwen2_moe"])
def test_quantized_experts_run_through_gather_qmm(name):
    model = tiny(name)
    nn.quantize(model, 32, 4, class_predicate=getattr(model, "quant_predicate", None))
    moe = model.layers[0]["block_sparse_moe" if name == "mixtral" else "mlp"]
    assert isinstance(moe.switch_mlp.gate_proj, QuantizedSwitchLinear)
    assert moe.gate.bits == (8 if name == "qwen3_moe" else 4)  # mlx-lm's Qwen3-MoE router: 8
    if name == "qwen3_moe":
        assert model.layers[1].mlp.gate_proj.bits == 4  # a dense layer (mlp_only_layers)
    # The same model with each packed weight dequantized back to float.
    ref = tiny(name)
    flat = dict(tree_flatten(model.parameters()))
    deq = [
        (k[: -len("weight")] + "weight", mx.dequantize(v, flat[k[:-6] + "scales"],
            flat[k[:-6] + "biases"], group_size=model_gs(model, k), bits=model_bits(model, k)))
        for k, v in flat.items() if k.endswith("weight") and k[:-6] + "scales" in flat
    ]  # fmt: skip
    ref.load_weights(deq, strict=False)
    tokens = _tokens(40)  # 80 expert choices: the sorted path
    np.testing.assert_allclose(np.array(model(tokens)), np.array(ref(tokens)), atol=2e-4)
    cache = make_prompt_cache(model)
    steps = mx.concatenate([model(tokens[:, i : i + 1], cache=cache) for i in range(40)], 1)
    np.testing.assert_allclose(np.array(steps), np.array(model(tokens)), atol=1e-4)


def _module_at(model, key):
    node = model
    for part in key.split(".")[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def model_gs(model, key):
    return _module_at(model, key).group_size


def model_bits(model, key):
    return _module_at(model, key).bits


_BITS = """
import hashlib, sys
import numpy as np
import nuvec as mx
import nuvec.nn as nn
from lm_arch_models import CONFIGS, VOCAB, tiny
from nuvec.lm.models.cache import make_prompt_cache
tokens = mx.array(np.random.RandomState(2).randint(0, VOCAB, (2, 40)))
for name in CONFIGS:
    model = tiny(name)
    if name in ("qwen3_moe", "qwen2_moe", "mixtral"):
        nn.quantize(model, 32, 4, class_predicate=getattr(model, "quant_predicate", None))
    cache = make_prompt_cache(model)
    out = [model(tokens, cache=cache), model(tokens[:, :1], cache=cache)]
    print(name, hashlib.sha256(b"".join(np.array(o).tobytes() for o in out)).hexdigest()[:16])
"""


def test_same_bits_for_every_thread_count():
    """The determinism contract through every architecture (40-token prefill of a batch of 2,
    then a decode step; the mixtures of experts with quantized experts): 1, 2 and 3 threads, each build."""
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.abspath(__file__))
    pythonpath = os.pathsep.join([os.path.dirname(os.path.dirname(mx.__file__)), tests])
    for isa in ("portable", "avx2"):
        outs = {}
        for threads in ("1", "2", "3"):
            env = {**os.environ, "PYTHONPATH": pythonpath, "NUVEC_CPU_ISA": isa,
                   "NUVEC_NUM_THREADS": threads}  # fmt: skip
            r = subprocess.run(
                [sys.executable, "-c", _BITS], env=env, capture_output=True, text=True, timeout=300
            )
            assert r.returncode == 0, r.stderr
            outs[threads] = r.stdout
        assert len(outs["1"].split()) == 2 * len(CONFIGS)
        assert outs["1"] == outs["2"] == outs["3"], isa


@pytest.mark.parametrize("name", ARCHS)
def test_a_hugging_face_directory_of_each_architecture_loads(name, tmp_path):
    """config.json and the weights under Hugging Face's names, through nuvec.lm.hf.load_model
    (sanitize, then load by name): the same bits as the model written."""
    import json

    from nuvec.lm.hf import load_model

    model = tiny(name)
    mx.save_safetensors(str(tmp_path / "model.safetensors"), _hf_weights(model, name))
    (tmp_path / "config.json").write_text(json.dumps(CONFIGS[name]))
    loaded, _ = load_model(str(tmp_path), progress=False)
    tokens = _tokens(9)
    assert np.array_equal(np.array(loaded(tokens)), np.array(model(tokens)))


@pytest.mark.parametrize("name", ["qwen3_moe", "qwen2_moe", "mixtral", "gemma3_text"])
def test_an_mlx_quantized_directory_loads_with_its_quantized_layers(name, tmp_path):
    """mlx-lm's convert layout (quantized switch layers, the router at 8 bits by the model's
    quant_predicate) read back by nuvec.lm.hf.load_model: the same bits."""
    import json

    from nuvec.lm.convert import quantize_model
    from nuvec.lm.hf import load_model

    model = tiny(name)
    predicate = getattr(model, "quant_predicate", None)
    model, config = quantize_model(model, CONFIGS[name], 32, 4, quant_predicate=predicate)
    mx.save_safetensors(str(tmp_path / "model.safetensors"), dict(tree_flatten(model.parameters())))
    (tmp_path / "config.json").write_text(json.dumps(config))
    loaded, _ = load_model(str(tmp_path), progress=False)
    if name != "gemma3_text":
        assert any(isinstance(m, QuantizedSwitchLinear) for _, m in loaded.named_modules())
    tokens = _tokens(9)
    assert np.array_equal(np.array(loaded(tokens)), np.array(model(tokens)))
