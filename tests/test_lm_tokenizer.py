"""nuvec.lm's tokenizer rebuilt from SmolLM2's GGUF metadata: tokens equal a from-scratch byte-level
BPE (GPT-2's byte map, pre-split and merge ranks, written here), text round trips, the chat template
renders as transformers renders it, and streamed text never splits a character."""

import re

import numpy as np
import pytest

import nuvec as mx
from lm_reference import smollm2_path

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
jinja2 = pytest.importorskip("jinja2")

from nuvec.lm.tokenizer_utils import TokenizerWrapper, from_gguf_metadata  # noqa: E402

TEXTS = [
    "Hello world",
    "The year 2024 had 366 days, didn't it? We'll see.",
    "  leading spaces\tand\ttabs\n\nnew lines  ",
    "café naïve Ünïcödé",
    "日本語のテキスト and 中文",
    "def f(x):\n    return x ** 2  # squares\n",
    "emoji: 🙂🚀 done",
    "<|im_start|>user\nhi<|im_end|>",
]


@pytest.fixture(scope="module")
def meta():
    return mx.load(smollm2_path(), return_metadata=True)[1]


@pytest.fixture(scope="module")
def tok(meta):
    return from_gguf_metadata(meta)


def _bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


# SmolLM2's pre-split: each digit alone, then GPT-2's pattern (\p{L} as [^\W\d_], \p{N} as \d,
# exact for the texts above).
_SPLIT = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+|_+| ?_[^\s]*"""
)


def _reference_bpe(text, meta):
    tokens = list(meta["tokenizer.ggml.tokens"])
    vocab = {t: i for i, t in enumerate(tokens)}
    ranks = {tuple(m.split(" ", 1)): r for r, m in enumerate(meta["tokenizer.ggml.merges"])}
    byte_map = _bytes_to_unicode()
    out = []
    for piece in re.split(r"(\d)", text):
        for word in _SPLIT.findall(piece):
            parts = [byte_map[b] for b in word.encode()]
            while len(parts) > 1:
                pairs = [(ranks.get(p, 1 << 30), i) for i, p in enumerate(zip(parts, parts[1:]))]
                rank, i = min(pairs)
                if rank == 1 << 30:
                    break
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
            out += [vocab[p] for p in parts]
    return out


@pytest.mark.parametrize("text", [t for t in TEXTS if "<|" not in t])
def test_tokens_equal_a_reference_byte_level_bpe(tok, meta, text):
    assert tok.encode(text) == _reference_bpe(text, meta)


@pytest.mark.parametrize("text", TEXTS)
def test_decode_inverts_encode(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_vocabulary_special_tokens_and_digits(tok, meta):
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(smollm2_path())
    field = reader.fields["tokenizer.ggml.tokens"]
    theirs = [bytes(field.parts[i]).decode() for i in field.data]
    assert tok.convert_ids_to_tokens(range(len(theirs))) == theirs
    assert tok.vocab_size == 49152
    assert tok.encode("<|im_start|>user<|im_end|>") == [1, 4093, 2]
    assert tok.decode([1, 4093, 2], skip_special_tokens=True) == "user"
    assert tok.convert_ids_to_tokens(tok.encode("x 1234")) == ["x", "Ġ", "1", "2", "3", "4"]
    assert tok.encode("Hello") == tok.encode("Hello", add_special_tokens=True)  # no BOS: GGUF says
    assert (tok.bos_token, tok.eos_token, tok.eos_token_ids) == ("<|im_start|>", "<|im_end|>", {2})


CONVO = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Bye"},
]


def test_chat_template_renders_smollm2s_format(tok):
    user = [{"role": "user", "content": "Hi"}]
    default = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    assert (
        tok.apply_chat_template(user, tokenize=False)
        == default + "<|im_start|>user\nHi<|im_end|>\n"
    )
    text = tok.apply_chat_template(CONVO, add_generation_prompt=True, tokenize=False)
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    ids = tok.apply_chat_template(CONVO, add_generation_prompt=True)
    assert ids == tok.encode(text, add_special_tokens=False) and ids.count(1) == 5


def test_chat_template_equals_transformers_rendering(tok):
    transformers = pytest.importorskip("transformers")
    theirs = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok._tokenizer, chat_template=tok.chat_template
    )
    for gen in (False, True):
        want = theirs.apply_chat_template(CONVO, add_generation_prompt=gen, tokenize=False)
        assert tok.apply_chat_template(CONVO, add_generation_prompt=gen, tokenize=False) == want


def test_template_environment_is_transformers(tok):
    """trim_blocks/lstrip_blocks, tojson, raise_exception and the special tokens' names."""
    t = TokenizerWrapper(
        tok._tokenizer,
        bos_token="<|im_start|>",
        chat_template=(
            "{% for m in messages %}\n  {% set x = 1 %}{{ bos_token }}{{ m | tojson }}\n{% endfor %}"
            "{% if messages | length > 1 %}{{ raise_exception('one message only') }}{% endif %}"
        ),
    )
    msg = [{"role": "user", "content": "é"}]
    assert (
        t.apply_chat_template(msg, tokenize=False)
        == '<|im_start|>{"role": "user", "content": "é"}\n'
    )
    with pytest.raises(jinja2.exceptions.TemplateError, match="one message only"):
        t.apply_chat_template(msg * 2)
    with pytest.raises(ValueError, match="no chat template"):
        TokenizerWrapper(tok._tokenizer).apply_chat_template(msg)


def test_streaming_detokenizer_never_splits_a_character(tok):
    for text in TEXTS:
        ids = tok.encode(text)
        d = tok.detokenizer
        segments = []
        for i in ids:
            d.add_token(i)
            segments.append(d.last_segment)
        d.finalize()
        segments.append(d.last_segment)
        assert "".join(segments) == text and d.tokens == ids
        assert all("\ufffd" not in s for s in segments)
    # A lone first byte of a 3-byte character waits, and finalize flushes it as U+FFFD.
    d = tok.detokenizer
    partial = [i for i in tok.encode("日") if tok.decode([i]).endswith("\ufffd")]
    assert partial
    d.add_token(partial[0])
    assert d.last_segment == ""
    d.finalize()
    assert d.last_segment.endswith("\ufffd")
    d.reset()
    assert (d.text, d.tokens) == ("", [])


def test_unsupported_tokenizer_models(meta):
    with pytest.raises(ValueError, match="unsupported GGUF tokenizer model 'bert'"):
        from_gguf_metadata({**meta, "tokenizer.ggml.model": "bert"})
    with pytest.raises(ValueError, match="pre-tokenizer"):
        from_gguf_metadata({**meta, "tokenizer.ggml.pre": "deepseek-coder"})
    assert np.array(meta["tokenizer.ggml.token_type"])[:17].tolist() == [3] * 17
