"""nuvec.lm.convert and MLX-format directories: float and quantized directories from a directory
or a GGUF file, loaded back with the quantized layers their config names; the real SmolLM2 GGUF
converted gives bit-identical greedy tokens and an identical tokenizer; `python -m nuvec.lm
convert` and its errors in subprocesses."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nuvec as mx
from lm_reference import smollm2_path
from nuvec.utils import tree_flatten

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
pytest.importorskip("tqdm")

from nuvec.lm import generate, generate_step, load  # noqa: E402
from nuvec.lm.convert import convert, make_shards  # noqa: E402
from nuvec.lm.utils import dequantize_model  # noqa: E402
from nuvec.nn import Embedding, Linear, QuantizedEmbedding, QuantizedLinear, quantize  # noqa: E402
from test_lm_load import CONFIG, logits, tiny_model, write_dir  # noqa: E402

convert_module = sys.modules["nuvec.lm.convert"]  # nuvec.lm.convert is the function (as mlx_lm's)


@pytest.fixture(scope="module")
def source():
    return tiny_model(seed=1)


@pytest.fixture
def src_dir(tmp_path, source):
    return write_dir(str(tmp_path / "src"), source)


def _config(path):
    with open(os.path.join(path, "config.json")) as f:
        return json.load(f)


def test_quantized_directory_as_mlx_lm_writes_it(tmp_path, src_dir, source):
    out = str(tmp_path / "q")
    convert(src_dir, out, quantize=True, q_group_size=32, q_bits=4)
    assert sorted(os.listdir(out)) == [
        "config.json", "model.safetensors", "model.safetensors.index.json", "tokenizer.json",
        "tokenizer_config.json",
    ]  # fmt: skip
    config = _config(out)
    assert config["quantization"] == config["quantization_config"]
    assert config["quantization"] == {"group_size": 32, "bits": 4, "mode": "affine"}
    arrays, meta = mx.load(os.path.join(out, "model.safetensors"), return_metadata=True)
    assert meta == {"format": "mlx"}
    assert arrays["model.layers.0.mlp.up_proj.weight"].dtype == mx.uint32
    assert {"model.embed_tokens.scales", "lm_head.biases"} <= set(arrays)
    model, _ = load(out)
    assert isinstance(model.layers[0].self_attn.q_proj, QuantizedLinear)
    assert isinstance(model.model.embed_tokens, QuantizedEmbedding)
    assert (model.lm_head.bits, model.lm_head.group_size) == (4, 32)
    # The same as quantizing the source model in memory, bit for bit.
    expected = tiny_model(seed=1)
    quantize(expected, 32, 4)
    np.testing.assert_array_equal(logits(model), logits(expected))


def test_per_layer_quantization_entries(tmp_path, src_dir):
    """mlx-lm writes a layer's own parameters (or False) into the quantization entry."""

    def predicate(path, module):
        if path == "lm_head":
            return False
        return {"group_size": 32, "bits": 8} if path.endswith("down_proj") else True

    out = str(tmp_path / "mixed")
    convert(src_dir, out, quantize=True, q_group_size=32, q_bits=4, quant_predicate=predicate)
    q = _config(out)["quantization"]
    assert q["model.layers.1.mlp.down_proj"] == {"group_size": 32, "bits": 8}
    model, _ = load(out)
    down = model.layers[1].mlp.down_proj
    assert isinstance(down, QuantizedLinear) and (down.bits, down.group_size) == (8, 32)
    assert model.layers[1].mlp.up_proj.bits == 4 and isinstance(model.lm_head, Linear)
    # quantizing again quantizes what is float (as mlx-lm: a per-layer entry)
    again = str(tmp_path / "again")
    convert(out, again, quantize=True, q_group_size=32, q_bits=8)
    q2 = _config(again)["quantization"]
    assert q2 == {**q, "lm_head": {"group_size": 32, "bits": 8, "mode": "affine"}}
    model, _ = load(again)
    assert (model.lm_head.bits, model.layers[1].mlp.up_proj.bits) == (8, 4)
    # a layer the config refuses stays float even where the file holds scales for it
    q["model.layers.0.self_attn.o_proj"] = False
    config = {**_config(out), "quantization": q}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f)
    with pytest.raises(ValueError, match="do not fit"):
        load(out)


def test_a_directory_written_by_mlx_loads(tmp_path, source):
    """The layout MLX itself writes (mlx.core.quantize's triple, mlx.core.save_safetensors)
    loads into the same model nuvec's own quantization gives."""
    mlx = pytest.importorskip("mlx.core")
    out = write_dir(str(tmp_path / "mlx"), source)
    weights = {}
    for k, v in tree_flatten(source.parameters()):
        v = mlx.array(np.array(v))
        if k.endswith("proj.weight") or k.endswith(("embed_tokens.weight", "lm_head.weight")):
            w, s, b = mlx.quantize(v, group_size=32, bits=4)
            base = k[: -len(".weight")]
            weights.update({k: w, base + ".scales": s, base + ".biases": b})
        else:
            weights[k] = v
    os.remove(os.path.join(out, "model.safetensors"))
    mlx.save_safetensors(os.path.join(out, "model.safetensors"), weights, {"format": "mlx"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({**CONFIG, "quantization": {"group_size": 32, "bits": 4}}, f)
    model, _ = load(out)
    expected = tiny_model(seed=1)
    quantize(expected, 32, 4)
    np.testing.assert_array_equal(logits(model), logits(expected))


def test_dtype_shards_and_dequantize(tmp_path, src_dir, source, monkeypatch):
    out = str(tmp_path / "bf16")
    convert(src_dir, out, dtype="bfloat16")
    assert _config(out)["torch_dtype"] == "bfloat16"
    model, _ = load(out)
    assert model.layers[0].mlp.gate_proj.weight.dtype == mx.bfloat16
    monkeypatch.setattr(convert_module, "MAX_FILE_SIZE_GB", 40_000 / (1 << 30))
    out = str(tmp_path / "sharded")
    convert(src_dir, out)
    files = sorted(f for f in os.listdir(out) if f.endswith(".safetensors"))
    assert len(files) > 2 and files[0] == f"model-00001-of-{len(files):05d}.safetensors"
    np.testing.assert_array_equal(logits(load(out)[0]), logits(source))
    monkeypatch.undo()
    quantized, back = str(tmp_path / "q"), str(tmp_path / "back")
    convert(src_dir, quantized, quantize=True, q_group_size=32)
    with pytest.raises(ValueError, match="either quantize or dequantize"):
        convert(quantized, str(tmp_path / "both"), quantize=True, dequantize=True)
    convert(quantized, back, dequantize=True)
    assert "quantization" not in _config(back)
    model, _ = load(back)
    assert isinstance(model.layers[0].mlp.up_proj, Linear)
    expected = dequantize_model(load(quantized)[0])
    np.testing.assert_array_equal(logits(model), logits(expected))
    with pytest.raises(ValueError, match="already exists"):
        convert(src_dir, back)


def test_mixed_recipes_and_the_index(tmp_path, src_dir, source):
    out = str(tmp_path / "mixed")
    convert(src_dir, out, quantize=True, q_group_size=32, quant_predicate="mixed_3_6")
    q = _config(out)["quantization"]
    six, three = ({"group_size": 32, "bits": b, "mode": "affine"} for b in (6, 3))
    # 2 layers: the last eighth is layer 1, whose v_proj and down_proj get the high bits
    assert q["model.layers.1.self_attn.v_proj"] == q["lm_head"] == six
    assert q["model.layers.1.mlp.down_proj"] == six
    assert q["model.layers.0.self_attn.v_proj"] == q["model.layers.1.mlp.up_proj"] == three
    model, _ = load(out)
    assert (model.layers[1].mlp.down_proj.bits, model.layers[0].mlp.down_proj.bits) == (6, 3)
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        index = json.load(f)
    n = sum(v.size for _, v in tree_flatten(source.parameters()))
    assert index["metadata"]["total_parameters"] == n
    assert set(index["weight_map"]) == set(dict(tree_flatten(model.parameters())))
    with pytest.raises(ValueError, match="unknown quantization recipe"):
        convert(src_dir, str(tmp_path / "x"), quantize=True, quant_predicate="mixed_1_9")


def test_make_shards_keeps_order_and_limit():
    weights = {str(i): mx.zeros((n,), mx.uint8) for i, n in enumerate([3, 4, 2, 9, 1])}
    shards = make_shards(weights, 6 / (1 << 30))
    assert [list(s) for s in shards] == [["0"], ["1", "2"], ["3"], ["4"]]


# --- the real model ---------------------------------------------------------------------------

TEXTS = [
    "Hello world",
    "The year 2024 had 366 days, didn't it? 3.14159 and 1,000,000.",
    "  leading spaces\tand\ttabs\n\nnew lines  ",
    "café naïve Ünïcödé — “quotes” ½ ∑",
    "日本語のテキスト and 中文, 한국어",
    "def f(x):\n    return x ** 2  # squares\n",
    "emoji: 🙂🚀👩‍💻 done",
    "<|im_start|>user\nhi<|im_end|><|endoftext|>",
]
MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 12 * 34? Réponds en français 🙂"},
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """SmolLM2's GGUF (Q4_1, Q8_0 head) as a float32 directory and a 4-bit/group-32 one."""
    path = smollm2_path()
    root = tmp_path_factory.mktemp("smollm2")
    f32, q4 = str(root / "f32"), str(root / "q4")
    convert(path, f32, dtype="float32")
    convert(path, q4, quantize=True, q_group_size=32, q_bits=4)
    return path, f32, q4


def test_gguf_and_its_float32_directory_give_the_same_tokens(converted):
    path, f32, _ = converted
    gguf_model, gguf_tok = load(path)
    dequantize_model(gguf_model)
    model, tok = load(f32)
    assert isinstance(model.model.embed_tokens, Embedding)
    prompt = tok.apply_chat_template(MESSAGES, add_generation_prompt=True)
    assert prompt == gguf_tok.apply_chat_template(MESSAGES, add_generation_prompt=True)
    np.testing.assert_array_equal(logits(model, [prompt]), logits(gguf_model, [prompt]))
    ours = [t for t, _ in generate_step(prompt, model, max_tokens=10)]
    assert ours == [t for t, _ in generate_step(prompt, gguf_model, max_tokens=10)]


def test_the_written_tokenizer_tokenizes_as_the_gguf_one(converted):
    path, f32, _ = converted
    _, gguf_tok = load(path)
    _, tok = load(f32)
    for text in TEXTS:
        for special in (True, False):
            assert tok.encode(text, special) == gguf_tok.encode(text, special), text
        ids = gguf_tok.encode(text)
        assert tok.decode(ids) == gguf_tok.decode(ids) == text
        assert tok.decode(ids, skip_special_tokens=True) == gguf_tok.decode(ids, True)
    for gen in (False, True):
        a = tok.apply_chat_template(MESSAGES, add_generation_prompt=gen, tokenize=False)
        assert a == gguf_tok.apply_chat_template(
            MESSAGES, add_generation_prompt=gen, tokenize=False
        )
    for name in ("bos_token", "eos_token", "pad_token", "unk_token", "eos_token_ids", "vocab_size"):
        assert getattr(tok, name) == getattr(gguf_tok, name), name
    assert tok.convert_ids_to_tokens(range(49152)) == gguf_tok.convert_ids_to_tokens(range(49152))
    with open(os.path.join(f32, "generation_config.json")) as f:
        assert json.load(f) == {"bos_token_id": 1, "eos_token_id": 2}


def test_the_4_bit_directory_generates_sensibly(converted):
    path, _, q4 = converted
    model, tok = load(q4)
    q = model.layers[5].mlp.down_proj
    assert isinstance(q, QuantizedLinear) and (q.bits, q.group_size) == (4, 32)
    assert model.layers[5].mlp.down_proj.scales.dtype == mx.float32
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True
    )
    assert "Paris" in generate(model, tok, prompt, max_tokens=16)


# --- the command ------------------------------------------------------------------------------


def _run(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(mx.__file__)), env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-m", "nuvec.lm", *args], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip


def test_the_convert_command(tmp_path, src_dir, source):
    out = str(tmp_path / "q")
    r = _run("convert", "--model", src_dir, "-q", "--q-bits", "8", "--q-group-size", "32",
             "--out", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _config(out)["quantization"] == {"group_size": 32, "bits": 8, "mode": "affine"}
    mixed = str(tmp_path / "mixed")
    r = _run("convert", "--hf-path", src_dir, "-q", "--q-group-size", "32", "--quant-predicate",
             "mixed_2_6", "--mlx-path", mixed)  # fmt: skip
    assert r.returncode == 0 and _config(mixed)["quantization"]["lm_head"]["bits"] == 6
    r = _run("generate", "--model", out, "--prompt", "the", "--max-tokens", "3",
             "--ignore-chat-template")  # fmt: skip
    assert r.returncode == 0 and "Generation: 3 tokens" in r.stderr, r.stderr


@pytest.mark.parametrize("kind", ["missing", "exists", "architecture", "corrupt", "no-config"])
def test_convert_errors_are_one_line(tmp_path, src_dir, kind):
    model, out = src_dir, str(tmp_path / "out")
    if kind == "missing":
        model = str(tmp_path / "absent")
    elif kind == "exists":
        os.makedirs(out)
    elif kind == "architecture":
        with open(os.path.join(src_dir, "config.json"), "w") as f:
            json.dump({**CONFIG, "model_type": "rwkv"}, f)
    elif kind == "corrupt":
        with open(os.path.join(src_dir, "model.safetensors"), "r+b") as f:
            f.write(b"\xff" * 16)
    else:
        os.remove(os.path.join(src_dir, "config.json"))
    r = _run("convert", "--model", model, "--out", out, "-q")
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert {"missing": "no such", "exists": "already exists", "architecture": "'rwkv'",
            "corrupt": "safetensors", "no-config": "config.json"}[kind] in lines[0]  # fmt: skip
    if kind != "exists":
        assert not os.path.exists(out)


def test_convert_bad_arguments_exit_2(src_dir):
    assert _run("convert", "--out", "x").returncode == 2  # --model is required
    assert _run("convert", "--model", src_dir, "--dtype", "float64").returncode == 2
