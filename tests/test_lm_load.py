"""nuvec.lm.load of Hugging Face model directories: config.json (rope_theta, transformers 5's
rope_parameters, llama3 rope_scaling), one or sharded safetensors files, tokenizer.json with
tokenizer_config.json / chat_template.jinja / generation_config.json; the model registry; the
errors. Tiny random llama models written here stand for real checkpoints."""

import io
import json
import math
import os
import sys

import numpy as np
import pytest

import nuvec as mx
from nuvec.utils import tree_flatten

pytestmark = pytest.mark.nuvec_only  # nuvec.lm is mlx-lm's counterpart; mlx.core has no lm

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
pytest.importorskip("tqdm")

from nuvec.lm import load  # noqa: E402
from nuvec.lm.convert import save_model  # noqa: E402
from nuvec.lm.hf import load_weights  # noqa: E402
from nuvec.lm.models import MODELS, build, normalize_config  # noqa: E402
from nuvec.lm.models.rope_utils import Llama3RoPE, initialize_rope  # noqa: E402

CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 96,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 272,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "float32",
    "transformers_version": "4.50.0",  # keys ModelArgs lacks are ignored
}
SPECIALS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>"]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
PROMPT = [[5, 70, 100, 3, 200, 17, 9]]


def tiny_tokenizer():
    """A byte-level BPE: the 256 byte symbols, a few merges, four special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("1", "2")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(SPECIALS)
    return tok


def tiny_model(config=CONFIG, seed=0):
    mx.random.seed(seed)
    model = build(config)
    mx.eval(model.parameters())
    return model


def write_dir(path, model, config=CONFIG, shards=1, dtype=None, tokenizer_config=None):
    """A Hugging Face directory holding ``model``: config.json, the weights (in ``shards`` files
    with an index when more than one), tokenizer.json and tokenizer_config.json."""
    os.makedirs(path, exist_ok=True)
    weights = dict(tree_flatten(model.parameters()))
    if dtype is not None:
        weights = {k: v.astype(dtype) for k, v in weights.items()}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)
    keys = sorted(weights)
    parts = [keys[i::shards] for i in range(shards)]
    names = (
        ["model.safetensors"]
        if shards == 1
        else [f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards)]
    )
    for name, part in zip(names, parts):
        mx.save_safetensors(os.path.join(path, name), {k: weights[k] for k in part})
    if shards > 1:
        index = {"weight_map": {k: n for n, part in zip(names, parts) for k in part}}
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f)
    tiny_tokenizer().save(os.path.join(path, "tokenizer.json"))
    tc = tokenizer_config or {
        "bos_token": "<s>",
        "eos_token": {"content": "</s>", "__type": "AddedToken"},
        "chat_template": TEMPLATE,
    }
    with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f)
    return path


def logits(model, tokens=PROMPT):
    return np.array(model(mx.array(tokens)))


@pytest.fixture(scope="module")
def source():
    return tiny_model()


def test_a_directory_loads_the_weights_it_holds(tmp_path, source):
    model, tokenizer = load(write_dir(str(tmp_path / "m"), source))
    assert (model.args.hidden_size, model.args.num_key_value_heads) == (64, 2)
    assert not model.args.tie_word_embeddings and "lm_head" in model
    assert model.layers[0].mlp.up_proj.weight.dtype == mx.float32
    np.testing.assert_array_equal(logits(model), logits(source))
    model, tokenizer, config = load(str(tmp_path / "m"), return_config=True)
    assert config["transformers_version"] == "4.50.0"


@pytest.mark.parametrize("with_index", [True, False])
def test_sharded_weights(tmp_path, source, with_index):
    path = write_dir(str(tmp_path / "m"), source, shards=3)
    if not with_index:
        os.remove(os.path.join(path, "model.safetensors.index.json"))
    model, _ = load(path)
    np.testing.assert_array_equal(logits(model), logits(source))


def test_weights_keep_the_files_dtype_and_are_mapped(tmp_path, source):
    """As mlx-lm: a bfloat16 checkpoint computes in bfloat16 (convert --dtype changes it)."""
    model, _ = load(write_dir(str(tmp_path / "m"), source, dtype=mx.bfloat16))
    assert model.layers[1].self_attn.q_proj.weight.dtype == mx.bfloat16
    want = source.layers[1].self_attn.q_proj.weight.astype(mx.bfloat16)
    assert mx.array_equal(model.layers[1].self_attn.q_proj.weight, want).item()
    out = model(mx.array(PROMPT))
    assert out.dtype == mx.bfloat16 and np.isfinite(np.array(out.astype(mx.float32))).all()


def test_tied_heads_and_extra_checkpoint_tensors(tmp_path):
    """A tied model's checkpoint may still hold lm_head.weight, old ones rotary_emb.inv_freq:
    both are dropped, as mlx-lm's llama sanitizes them."""
    config = {**CONFIG, "tie_word_embeddings": True}
    model = tiny_model(config)
    path = write_dir(str(tmp_path / "m"), model, config)
    extra = {
        "lm_head.weight": model.model.embed_tokens.weight,
        "model.layers.0.self_attn.rotary_emb.inv_freq": mx.ones((8,)),
    }
    mx.save_safetensors(os.path.join(path, "model-extra.safetensors"), extra)
    loaded, _ = load(path)
    assert "lm_head" not in loaded
    np.testing.assert_array_equal(logits(loaded), logits(model))


def test_rope_parameters_of_transformers_5():
    new = {k: v for k, v in CONFIG.items() if k != "rope_theta"}
    new["rope_parameters"] = {"rope_type": "default", "rope_theta": 5e5}
    assert build(new).args.rope_theta == 5e5 and build(new).args.rope_scaling is None
    nested = normalize_config(
        {
            "rope_parameters": {
                "full_attention": {"rope_type": "default", "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            }
        }
    )
    assert (nested["rope_theta"], nested["rope_local_base_freq"]) == (1e6, 1e4)
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 64}  # fmt: skip
    via_new = build({**new, "rope_parameters": {**llama3, "rope_theta": 5e5}})
    via_old = build({**CONFIG, "rope_theta": 5e5, "rope_scaling": llama3})
    assert via_new.args.rope_scaling == llama3 == via_old.args.rope_scaling
    assert isinstance(via_new.layers[0].self_attn.rope, Llama3RoPE)
    assert via_new.args.rope_theta == 5e5


def _transformers_llama3_inv_freq(dims, base, s):
    """transformers' _compute_llama3_parameters, in float64."""
    inv = 1.0 / base ** (np.arange(0, dims, 2, dtype=np.float64) / dims)
    low_wl = s["original_max_position_embeddings"] / s["low_freq_factor"]
    high_wl = s["original_max_position_embeddings"] / s["high_freq_factor"]
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > low_wl, inv / s["factor"], inv)
    smooth = (s["original_max_position_embeddings"] / wavelen - s["low_freq_factor"]) / (
        s["high_freq_factor"] - s["low_freq_factor"]
    )
    smoothed = (1 - smooth) * out / s["factor"] + smooth * out
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)
    return np.where(medium, smoothed, out)


def test_llama3_rope_scaling_matches_transformers():
    s = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 256}  # fmt: skip
    dims, base = 32, 5e5
    rope = initialize_rope(dims, base, False, s, 1024)
    inv = _transformers_llama3_inv_freq(dims, base, s)
    np.testing.assert_allclose(1.0 / np.array(rope._freqs), inv, rtol=1e-6)
    assert (inv < 1.0 / base ** (np.arange(0, dims, 2) / dims)).any()  # some are scaled
    x = np.random.default_rng(0).standard_normal((1, 2, 5, dims)).astype(np.float32)
    got = np.array(rope(mx.array(x), offset=3))
    ang = (3 + np.arange(5))[:, None] * inv[None, :]
    a, b = x[..., : dims // 2], x[..., dims // 2 :]
    want = np.concatenate(
        [a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)], -1
    )
    np.testing.assert_allclose(got, want, atol=1e-5)
    linear = initialize_rope(dims, base, False, {"type": "linear", "factor": 2.0})
    assert linear.scale == 0.5
    with pytest.raises(ValueError, match="unsupported rope type 'yarn'"):
        initialize_rope(dims, base, False, {"rope_type": "yarn", "factor": 2.0})


def test_the_tokenizer_of_a_directory(tmp_path, source):
    from tokenizers import Tokenizer

    path = write_dir(str(tmp_path / "m"), source)
    _, tok = load(path)
    assert (tok.bos_token, tok.eos_token, tok.eos_token_id) == ("<s>", "</s>", 261)
    assert tok.eos_token_ids == {261}
    assert tok.encode("the 12 thé") == tiny_tokenizer().encode("the 12 thé").ids  # no BOS
    text = "hi <|im_start|> ünï 12"
    assert tok.decode(tok.encode(text)) == text
    msg = [{"role": "user", "content": "the"}]
    rendered = tok.apply_chat_template(msg, add_generation_prompt=True, tokenize=False)
    assert rendered == "<|im_start|>user\nthe<|im_end|>\n<|im_start|>assistant\n"
    ids = tok.apply_chat_template(msg, add_generation_prompt=True)
    assert ids[0] == tok._tokenizer.token_to_id("<|im_start|>") and ids == tok.encode(rendered)
    # add_bos_token, chat_template.jinja (preferred by transformers), generation_config's ids.
    with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True}, f)
    with open(os.path.join(path, "chat_template.jinja"), "w") as f:
        f.write("{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}")
    with open(os.path.join(path, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [261, 263]}, f)
    _, tok = load(path)
    assert tok.encode("the") == [260, *tiny_tokenizer().encode("the").ids]
    assert tok.encode("the", add_special_tokens=False) == tiny_tokenizer().encode("the").ids
    assert tok.apply_chat_template(msg, tokenize=False) == "<s>the"
    assert tok.apply_chat_template(msg) == [260, *tok.encode("the", add_special_tokens=False)]
    assert tok.eos_token_ids == {261, 263}
    with open(os.path.join(path, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": 263}, f)  # replaces the EOS token's id, as in mlx-lm
    _, tok = load(path)
    assert tok.eos_token_ids == {263}
    tok.add_eos_token("</s>")
    tok.add_eos_token(5)
    assert tok.eos_token_ids == {261, 263, 5}
    with pytest.raises(ValueError, match="not a token"):
        tok.add_eos_token("<nope>")
    with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<s>", "eos_token": "</s>", "add_eos_token": True}, f)
    _, tok = load(path)
    assert tok.encode("the") == [*tiny_tokenizer().encode("the").ids, 261]
    tok.save_pretrained(str(tmp_path / "saved"))  # the flags travel in both files
    with open(tmp_path / "saved" / "tokenizer_config.json") as f:
        assert json.load(f)["add_eos_token"] is True
    saved = Tokenizer.from_file(str(tmp_path / "saved" / "tokenizer.json"))
    assert saved.encode("the").ids == tok.encode("the")


def test_the_progress_bar_shows_on_a_terminal_only(tmp_path, source, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    files = [os.path.join(write_dir(str(tmp_path / "m"), source), "model.safetensors")]
    for progress, shown in ((True, True), (False, False)):
        err = Terminal()
        monkeypatch.setattr(sys, "stderr", err)
        weights = load_weights(files, progress=progress)
        monkeypatch.undo()
        assert ("Loading" in err.getvalue() and "100%" in err.getvalue()) == shown
        assert set(weights) == set(dict(tree_flatten(source.parameters())))
        monkeypatch.setattr(sys, "stderr", err := Terminal())
        save_model(str(tmp_path / f"saved{progress}"), source, progress=progress)
        monkeypatch.undo()
        assert ("Converting" in err.getvalue()) == shown


def test_the_registry():
    assert isinstance(MODELS, dict) and MODELS["llama"] == MODELS["mistral"] == "llama"
    with pytest.raises(ValueError, match="unsupported model type 'mamba'") as e:
        build({**CONFIG, "model_type": "mamba"})
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="lacks a hyper-parameter"):
        build({"model_type": "llama", "hidden_size": 8})


def test_load_errors(tmp_path, source):
    with pytest.raises(FileNotFoundError, match="no such model"):
        load(str(tmp_path / "absent"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        load(str(empty))
    path = write_dir(str(tmp_path / "m"), source)
    weights = os.path.join(path, "model.safetensors")
    with open(weights, "rb") as f:
        good = f.read()

    def config(**kw):
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump({**CONFIG, **kw}, f)

    config(model_type="gpt_bigcode")
    with pytest.raises(ValueError, match="unsupported model type 'gpt_bigcode'"):
        load(path)
    config(num_hidden_layers=3)  # the weights lack layer 2
    with pytest.raises(ValueError, match="do not fit the config.*Missing"):
        load(path)
    config()
    with open(weights, "wb") as f:
        f.write(good[: len(good) // 2])  # truncated
    with pytest.raises(mx.io.LoadError):
        load(path)
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(good)
    with open(os.path.join(path, "tokenizer.json"), "w") as f:
        f.write('{"version": "1.0", "model": 3}')
    with pytest.raises(ValueError, match="not a valid tokenizer"):
        load(path)
    os.remove(os.path.join(path, "tokenizer.json"))
    with pytest.raises(ValueError, match="no tokenizer.json"):
        load(path)
    os.remove(weights)
    with pytest.raises(ValueError, match="no \\*.safetensors"):
        load(path)
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"a": "model-00001-of-00002.safetensors"}}, f)
    with pytest.raises(ValueError, match="missing weight files"):
        load(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        f.write("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load(path)
