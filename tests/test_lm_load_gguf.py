"""nuvec.lm.load of GGUF files of every tensor type a llama checkpoint comes in (F32, F16, BF16,
Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and the K-quants): tiny llama files written with the `gguf`
package (Q and K rows permuted as llama.cpp's converter permutes them) load into a model whose
weights are the `gguf` package's dequantization of the same bytes, in Hugging Face's row order."""

import numpy as np
import pytest

import nuvec as mx
from nuvec.utils import tree_flatten

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
gguf = pytest.importorskip("gguf")

from gguf.constants import GGMLQuantizationType as T  # noqa: E402

from nuvec.lm import load  # noqa: E402
from nuvec.lm.models import build  # noqa: E402
from nuvec.lm.utils import dequantize_model  # noqa: E402
from nuvec.nn import QuantizedLinear  # noqa: E402
from test_io_compat import _dequantized, _random_blocks  # noqa: E402
from test_lm_load import SPECIALS, tiny_tokenizer  # noqa: E402

DIM, HEADS, KV, FF, VOCAB = 256, 4, 2, 256, 272  # rows of 256: whole K-quant blocks
CONFIG = {
    "model_type": "llama", "hidden_size": DIM, "num_hidden_layers": 1, "intermediate_size": FF,
    "num_attention_heads": HEADS, "num_key_value_heads": KV, "vocab_size": VOCAB,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
}  # fmt: skip
HF = {  # GGUF name -> Hugging Face name, shape
    "token_embd": ("model.embed_tokens", (VOCAB, DIM)),
    "output": ("lm_head", (VOCAB, DIM)),
    "blk.0.attn_q": ("model.layers.0.self_attn.q_proj", (DIM, DIM)),
    "blk.0.attn_k": ("model.layers.0.self_attn.k_proj", (KV * DIM // HEADS, DIM)),
    "blk.0.attn_v": ("model.layers.0.self_attn.v_proj", (KV * DIM // HEADS, DIM)),
    "blk.0.attn_output": ("model.layers.0.self_attn.o_proj", (DIM, DIM)),
    "blk.0.ffn_gate": ("model.layers.0.mlp.gate_proj", (FF, DIM)),
    "blk.0.ffn_up": ("model.layers.0.mlp.up_proj", (FF, DIM)),
    "blk.0.ffn_down": ("model.layers.0.mlp.down_proj", (DIM, FF)),
}
NORMS = {
    "blk.0.attn_norm": "model.layers.0.input_layernorm",
    "blk.0.ffn_norm": "model.layers.0.post_attention_layernorm",
    "output_norm": "model.norm",
}
KEPT_QUANTIZED = (T.Q4_0, T.Q4_1, T.Q8_0)  # nuvec.load gives MLX's triple: QuantizedLinear
FLOAT16_LOADED = (T.Q5_0, T.Q5_1, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_K)


def _permute(w, heads):
    """convert_hf_to_gguf.py's LlamaModel.permute (Hugging Face rows -> llama.cpp's)."""
    return (
        w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


def _encode(w, kind, seed):
    """(raw data for the writer, the values the `gguf` package reads back from it)."""
    if kind == T.F32:
        return w, w
    if kind == T.F16:
        return w.astype(np.float16), w.astype(np.float16).astype(np.float32)
    if kind in (T.BF16, *KEPT_QUANTIZED, T.Q5_0, T.Q5_1):
        raw = gguf.quants.quantize(w, kind)
    else:  # the gguf package cannot quantize K-quants: random valid blocks
        raw = _random_blocks(kind, *w.shape, seed)
    return raw, _dequantized(raw, kind).reshape(w.shape).astype(np.float32)


def _write(path, kind, scaling=None):
    """A tiny llama GGUF whose 2-d tensors are of ``kind``; its weights in Hugging Face's order."""
    rng = np.random.default_rng(int(kind))
    writer = gguf.GGUFWriter(str(path), "llama")
    if scaling is not None:
        writer.add_string("llama.rope.scaling.type", scaling[0])
        writer.add_float32("llama.rope.scaling.factor", scaling[1])
    for key, value in (("block_count", 1), ("context_length", 128), ("embedding_length", DIM),
                       ("feed_forward_length", FF), ("attention.head_count", HEADS),
                       ("attention.head_count_kv", KV), ("vocab_size", VOCAB)):  # fmt: skip
        writer.add_uint32(f"llama.{key}", value)
    writer.add_float32("llama.rope.freq_base", 10000.0)
    writer.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    tok = tiny_tokenizer()
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in vocab] + [f"<unused{i}>" for i in range(VOCAB - len(vocab))]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in SPECIALS else 1 for t in tokens])
    writer.add_token_merges(["Ġ t", "h e", "Ġt he", "1 2"])
    writer.add_bos_token_id(tokens.index("<s>"))
    writer.add_eos_token_id(tokens.index("</s>"))
    weights = {}
    for i, (name, (hf, shape)) in enumerate(HF.items()):
        w = (rng.standard_normal(shape) * 0.05).astype(np.float32)
        heads = {"blk.0.attn_q": HEADS, "blk.0.attn_k": KV}.get(name)
        raw, back = _encode(_permute(w, heads) if heads else w, kind, i)
        weights[hf + ".weight"] = back if heads is None else _permute_back(back, heads)
        if kind in (T.F32, T.F16):
            writer.add_tensor(name + ".weight", raw)
        else:
            writer.add_tensor(name + ".weight", raw, raw_shape=raw.shape, raw_dtype=kind)
    for name, hf in NORMS.items():
        w = (1 + 0.1 * rng.standard_normal(DIM)).astype(np.float32)
        writer.add_tensor(name + ".weight", w)
        weights[hf + ".weight"] = w
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return weights


def _permute_back(w, heads):
    return w.reshape(heads, w.shape[0] // heads // 2, 2, -1).swapaxes(1, 2).reshape(w.shape)


TYPES = [T.F32, T.F16, T.BF16, *KEPT_QUANTIZED, *FLOAT16_LOADED]


@pytest.mark.parametrize("kind", TYPES, ids=[t.name for t in TYPES])
def test_every_tensor_type_loads(tmp_path, kind):
    path = tmp_path / f"tiny-{kind.name}.gguf"
    weights = _write(path, kind)
    model, tokenizer = load(str(path))
    assert isinstance(model.layers[0].mlp.up_proj, QuantizedLinear) == (kind in KEPT_QUANTIZED)
    assert tokenizer.encode("the 12") == tiny_tokenizer().encode("the 12").ids
    tokens = mx.array([[3, 200, 17, 260, 9, 100]])
    as_loaded = np.array(model(tokens))
    dequantize_model(model)
    ours = dict(tree_flatten(model.parameters()))
    for name, want in weights.items():
        if kind in FLOAT16_LOADED and want.ndim == 2:  # nuvec.load rounds these to float16
            weights[name] = want = want.astype(np.float16).astype(np.float32)
        np.testing.assert_array_equal(np.array(ours[name]), want, err_msg=name)
    reference = build(CONFIG)
    reference.load_weights([(k, mx.array(v)) for k, v in weights.items()])
    expected = np.array(reference(tokens))
    np.testing.assert_array_equal(np.array(model(tokens)), expected)
    np.testing.assert_allclose(as_loaded, expected, atol=1e-4, rtol=1e-4)


def test_linear_rope_scaling(tmp_path):
    _write(tmp_path / "linear.gguf", T.F32, ("linear", 4.0))
    model, _ = load(str(tmp_path / "linear.gguf"))
    assert model.args.rope_scaling == {"type": "linear", "factor": 4.0}
    assert model.layers[0].self_attn.rope.scale == 0.25
    _write(tmp_path / "yarn.gguf", T.F32, ("yarn", 4.0))
    with pytest.raises(ValueError, match="unsupported GGUF rope scaling 'yarn'"):
        load(str(tmp_path / "yarn.gguf"))


# --- SentencePiece tokenizers (tokenizer.ggml.model "llama") ------------------------------------

SPM_PIECES = ["▁", "t", "h", "e", "a", "n", "d", "i", "s", "1", "2", "é", "th", "he", "▁t",
              "▁th", "▁the", "an", "and", "▁and", "is", "▁is", "12", "▁a", "in", "▁i"]  # fmt: skip


def _spm_meta(add_space_prefix=True):
    """llama.cpp's metadata for a SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte
    tokens, then pieces scored so that longer ones merge first (distinct scores)."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + SPM_PIECES
    types = [2, 3, 3] + [6] * 256 + [1] * len(SPM_PIECES)
    scores = [0.0] * 259 + [-(i + 0.5 * (10 - len(p))) for i, p in enumerate(SPM_PIECES)]
    return {
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": mx.array(types, dtype=mx.int32),
        "tokenizer.ggml.scores": mx.array(scores),
        "tokenizer.ggml.bos_token_id": mx.array(1, dtype=mx.uint32),
        "tokenizer.ggml.eos_token_id": mx.array(2, dtype=mx.uint32),
        "tokenizer.ggml.unknown_token_id": mx.array(0, dtype=mx.uint32),
        "tokenizer.ggml.add_space_prefix": mx.array(add_space_prefix),
    }


def _llama_cpp_spm(text, meta):
    """llama.cpp's SPM tokenizer, from scratch: spaces as "▁" (one prepended), characters as
    symbols, then repeatedly the adjacent pair whose concatenation is a piece of the highest score
    (the leftmost on a tie) merged; a symbol outside the vocabulary becomes its UTF-8 bytes."""
    tokens = meta["tokenizer.ggml.tokens"]
    scores = np.array(meta["tokenizer.ggml.scores"])
    vocab = {t: i for i, t in enumerate(tokens)}
    prefix = "▁" if meta["tokenizer.ggml.add_space_prefix"].item() else ""
    symbols = list(prefix + text.replace(" ", "▁"))
    while True:
        best = None
        for i in range(len(symbols) - 1):
            j = vocab.get(symbols[i] + symbols[i + 1])
            if j is not None and (best is None or scores[j] > best[0]):
                best = (scores[j], i)
        if best is None:
            break
        i = best[1]
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]
    out = []
    for s in symbols:
        out += [vocab[s]] if s in vocab else [vocab[f"<0x{b:02X}>"] for b in s.encode()]
    return out


SPM_TEXTS = ["the and this is 12", "thethe  and", "hé then 121 ann", "日本 ok", "  spaces  ", "a"]


@pytest.mark.parametrize("prefix", [True, False])
def test_sentencepiece_tokenizers_tokenize_as_llama_cpp(prefix):
    from nuvec.lm.tokenizer_utils import from_gguf_metadata

    meta = _spm_meta(prefix)
    tok = from_gguf_metadata(meta)
    for text in SPM_TEXTS:
        want = _llama_cpp_spm(text, meta)
        assert tok.encode(text) == [1, *want], text  # llama's default: BOS added
        assert tok.encode(text, add_special_tokens=False) == want
        assert tok.decode(want) == text
    assert tok.encode("<s>the</s>", add_special_tokens=False)[0] == 1
    assert tok.decode(tok.encode("the"), skip_special_tokens=True) == "the"
    assert (tok.bos_token, tok.eos_token, tok.unk_token, tok.eos_token_ids) == (
        "<s>", "</s>", "<unk>", {2},
    )  # fmt: skip


def test_sentencepiece_text_streams_with_its_spaces():
    from nuvec.lm.tokenizer_utils import from_gguf_metadata

    tok = from_gguf_metadata(_spm_meta())
    for text in SPM_TEXTS:
        d = tok.detokenizer
        pieces = []
        for i in tok.encode(text, add_special_tokens=False):
            d.add_token(i)
            pieces.append(d.last_segment)
        d.finalize()
        pieces.append(d.last_segment)
        assert "".join(pieces) == text and all("\ufffd" not in p for p in pieces), text
