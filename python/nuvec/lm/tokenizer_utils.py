"""Tokenizers, as mlx-lm's ``mlx_lm.tokenizer_utils``: a ``TokenizerWrapper`` over a Hugging Face
``tokenizers.Tokenizer`` with the surface mlx-lm's code uses (``encode``, ``decode``,
``eos_token_ids``, ``apply_chat_template``, ``detokenizer``), and the streaming detokenizer.

A GGUF file carries its tokenizer as metadata (``tokenizer.ggml.*``): ``from_gguf_metadata``
rebuilds the byte-level BPE that Hugging Face's tokenizer.json describes for GPT-2-style models
(SmolLM2, Llama 3, Qwen2), so text splits into the very tokens the model was trained on. The
``tokenizers`` and ``jinja2`` packages are imported when a tokenizer is built, not with nuvec."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any

__all__ = ["StreamingDetokenizer", "TokenizerWrapper", "from_gguf_metadata", "load_tokenizer"]

_SPECIALS = ("bos_token", "eos_token", "pad_token", "unk_token")

# llama.cpp's pre-tokenizers (tokenizer.ggml.pre) -> whether digits split one by one before the
# GPT-2 regex (Hugging Face's Digits(individual_digits=True) ahead of ByteLevel).
_PRE_DIGITS = {"smollm": True, "gpt2": False, "default": False}
# llama.cpp's token types; unknown, control and user-defined tokens are added (not merged) tokens
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED = 1, 2, 3, 4


def _meta_int(meta: dict, key: str) -> int | None:
    value = meta.get(key)
    return None if value is None else int(value.item())


def _bpe(meta: dict, tokens: list[str], types: list[int]) -> Any:
    """``tokenizer.ggml.model`` "gpt2": byte-level BPE with the file's merges."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    pre = meta.get("tokenizer.ggml.pre", "default")
    if pre not in _PRE_DIGITS:
        raise ValueError(f"unsupported GGUF pre-tokenizer {pre!r}")
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, byte_fallback=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if _PRE_DIGITS[pre]:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    return tok


def _spm(meta: dict, tokens: list[str], types: list[int]) -> Any:
    """``tokenizer.ggml.model`` "llama": SentencePiece's BPE as Hugging Face's llama
    tokenizer.json spells it. Spaces become "▁" (and one is prepended with
    ``add_space_prefix``); merges come from the scores as transformers' SentencePiece converter
    makes them (every normal piece that splits into two pieces of the vocabulary, the higher
    score first), which picks the pair llama.cpp's SPM tokenizer merges; characters outside the
    vocabulary fall back to the ``<0xXX>`` byte tokens."""
    from tokenizers import Tokenizer, decoders, models, normalizers

    scores = meta.get("tokenizer.ggml.scores")
    scores = [0.0] * len(tokens) if scores is None else [float(x) for x in scores.tolist()]
    vocab = {t: i for i, t in enumerate(tokens)}
    ranked = []
    for i, piece in enumerate(tokens):
        if types[i] != _NORMAL:
            continue
        for j in range(1, len(piece)):
            left, right = piece[:j], piece[j:]
            if left in vocab and right in vocab:
                ranked.append((-scores[i], i, vocab[left], vocab[right], left, right))
    merges = [(left, right) for *_, left, right in sorted(ranked)]
    unk = _meta_int(meta, "tokenizer.ggml.unknown_token_id")
    tok = Tokenizer(
        models.BPE(
            vocab, merges, unk_token=tokens[unk] if unk is not None else None, fuse_unk=True,
            byte_fallback=True,
        )
    )  # fmt: skip
    prefix = _flag(meta, "tokenizer.ggml.add_space_prefix", True)
    replace = normalizers.Replace(" ", "\u2581")
    tok.normalizer = (
        normalizers.Sequence([normalizers.Prepend("\u2581"), replace]) if prefix else replace
    )
    steps = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    tok.decoder = decoders.Sequence(steps + ([decoders.Strip(" ", 1, 0)] if prefix else []))
    return tok


def _flag(meta: dict, key: str, default: bool) -> bool:
    return bool(meta[key].item()) if key in meta else default


# tokenizer.ggml.model -> (builder, whether BOS is added when the file does not say)
_MODELS = {"gpt2": (_bpe, False), "llama": (_spm, True)}


def from_gguf_metadata(meta: dict) -> TokenizerWrapper:
    """The tokenizer a GGUF file's metadata describes: ``tokenizer.ggml.model`` "gpt2"
    (byte-level BPE) or "llama" (SentencePiece BPE); others raise ``ValueError``."""
    from tokenizers import AddedToken

    kind = meta.get("tokenizer.ggml.model")
    if kind not in _MODELS:
        supported = ", ".join(map(repr, _MODELS))
        raise ValueError(f"unsupported GGUF tokenizer model {kind!r} (supported: {supported})")
    build, bos_default = _MODELS[kind]
    tokens = list(meta["tokenizer.ggml.tokens"])
    types = meta.get("tokenizer.ggml.token_type")
    types = [_NORMAL] * len(tokens) if types is None else types.tolist()
    tok = build(meta, tokens, types)
    added = [
        AddedToken(tokens[i], special=t in (_UNKNOWN, _CONTROL), normalized=False)
        for i, t in enumerate(types)
        if t in (_UNKNOWN, _CONTROL, _USER_DEFINED)
    ]
    tok.add_tokens(added)

    def token(key: str) -> str | None:
        i = _meta_int(meta, key)
        return tokens[i] if i is not None and 0 <= i < len(tokens) else None

    return TokenizerWrapper(
        tok,
        bos_token=token("tokenizer.ggml.bos_token_id"),
        eos_token=token("tokenizer.ggml.eos_token_id"),
        pad_token=token("tokenizer.ggml.padding_token_id"),
        unk_token=token("tokenizer.ggml.unknown_token_id"),
        add_bos_token=_flag(meta, "tokenizer.ggml.add_bos_token", bos_default),
        add_eos_token=_flag(meta, "tokenizer.ggml.add_eos_token", False),
        chat_template=meta.get("tokenizer.chat_template"),
    )


def _compile_template(source: str) -> Any:
    """A chat template compiled as transformers compiles it (sandboxed, ``trim_blocks``,
    ``lstrip_blocks``, its ``tojson``, ``raise_exception`` and ``strftime_now``)."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(source)


class TokenizerWrapper:
    """A ``tokenizers.Tokenizer`` with the special tokens, chat template and detokenizer that
    mlx-lm's code reads from its wrapper."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        bos_token: str | None = None,
        eos_token: str | None = None,
        pad_token: str | None = None,
        unk_token: str | None = None,
        add_bos_token: bool | None = None,
        add_eos_token: bool | None = None,
        chat_template: str | None = None,
        eos_token_ids: Any = None,
        config: dict | None = None,
    ):
        self._tokenizer = tokenizer
        self.bos_token, self.eos_token = bos_token, eos_token
        self.pad_token, self.unk_token = pad_token, unk_token
        # (the EOS flag is private: ``add_eos_token`` is mlx-lm's method that adds a stop token)
        self.add_bos_token, self._add_eos = add_bos_token, add_eos_token
        self.chat_template = chat_template
        self._template: Any = None
        self._config = dict(config or {})  # a tokenizer_config.json's other entries, kept to save
        if add_bos_token is not None or add_eos_token is not None:
            self._set_post_processor()
        if isinstance(eos_token_ids, int):
            eos_token_ids = [eos_token_ids]
        if eos_token_ids is None:  # as mlx-lm: the given ids replace the EOS token's
            eos_token_ids = [] if self.eos_token_id is None else [self.eos_token_id]
        self.eos_token_ids = set(eos_token_ids)

    def add_eos_token(self, token: str | int) -> None:
        """Stop generation at ``token`` too (a token string or an id), as mlx-lm's wrapper."""
        try:
            token_id = int(token)
        except ValueError:
            token_id = self._id(str(token))
        if token_id is None:
            raise ValueError(f"{token!r} is not a token of this tokenizer")
        self.eos_token_ids.add(token_id)

    def _id(self, token: str | None) -> int | None:
        return None if token is None else self._tokenizer.token_to_id(token)

    @property
    def bos_token_id(self) -> int | None:
        return self._id(self.bos_token)

    @property
    def eos_token_id(self) -> int | None:
        return self._id(self.eos_token)

    @property
    def vocab_size(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def has_chat_template(self) -> bool:
        return bool(self.chat_template)

    def _set_post_processor(self) -> None:
        """Add BOS / EOS as ``add_bos_token`` / ``add_eos_token`` say (what transformers' llama
        tokenizers do with these entries), in the tokenizer itself: its tokenizer.json says so."""
        from tokenizers import processors

        pre = [self.bos_token] if self.add_bos_token and self.bos_token_id is not None else []
        post = [self.eos_token] if self._add_eos and self.eos_token_id is not None else []
        specials = [(t, self._id(t)) for t in dict.fromkeys(pre + post)]
        self._tokenizer.post_processor = processors.TemplateProcessing(
            single=" ".join([*pre, "$A:0", *post]),
            pair=" ".join([*pre, "$A:0", *post, *pre, "$B:1", *post]),
            special_tokens=specials,
        )

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``; ``add_special_tokens`` adds what the tokenizer's post-processor
        adds (a BOS token where the model's tokenizer prepends one)."""
        return self._tokenizer.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        if not isinstance(ids, (list, tuple)):
            ids = list(ids) if hasattr(ids, "__iter__") else [ids]
        return self._tokenizer.decode(
            [int(i) for i in ids], skip_special_tokens=skip_special_tokens
        )

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [self._tokenizer.id_to_token(int(i)) for i in ids]

    def apply_chat_template(
        self,
        messages: list[dict],
        add_generation_prompt: bool = False,
        tokenize: bool = True,
        tools: list | None = None,
        **kwargs: Any,
    ) -> Any:
        """The conversation rendered by the model's chat template, as transformers renders it
        (the special tokens' strings and ``kwargs`` are the template's variables); token ids
        (no BOS added: the template writes it) or, with ``tokenize=False``, the text."""
        if not self.chat_template:
            raise ValueError("this tokenizer has no chat template")
        if self._template is None:
            self._template = _compile_template(self.chat_template)
        specials = {
            k: getattr(self, k) for k in ("bos_token", "eos_token", "pad_token", "unk_token")
        }
        text = self._template.render(
            messages=messages,
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            **{**specials, **kwargs},
        )
        return self.encode(text, add_special_tokens=False) if tokenize else text

    def save_pretrained(self, path: str) -> None:
        """Write tokenizer.json and tokenizer_config.json (the special tokens, ``add_bos_token``,
        the chat template, and the other entries of the file it was read from) into ``path``, as
        transformers' ``save_pretrained`` writes a fast tokenizer."""
        os.makedirs(path, exist_ok=True)
        self._tokenizer.save(os.path.join(path, "tokenizer.json"))
        config = {"tokenizer_class": "PreTrainedTokenizerFast", **self._config}
        config.pop("chat_template", None)
        for key in _SPECIALS:
            if getattr(self, key) is not None:
                config[key] = getattr(self, key)
        for key, value in (("add_bos_token", self.add_bos_token), ("add_eos_token", self._add_eos)):
            if value is not None:
                config[key] = value
        if self.chat_template:
            config["chat_template"] = self.chat_template
        with open(os.path.join(path, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2, ensure_ascii=False)

    @property
    def detokenizer(self) -> StreamingDetokenizer:
        """A fresh streaming detokenizer over this tokenizer."""
        return StreamingDetokenizer(self)


class StreamingDetokenizer:
    """Text from tokens as they come: ``add_token`` each one, read ``last_segment`` for the text
    that is new. A segment never ends inside a multi-byte character: while the undecided tokens
    end with the replacement character (an incomplete UTF-8 sequence under byte-level BPE), they
    wait for the next token; ``finalize`` flushes what is left."""

    def __init__(self, tokenizer: TokenizerWrapper):
        self._tokenizer = tokenizer
        self.reset()

    def reset(self) -> None:
        self.tokens: list[int] = []
        self.text = ""
        self.offset = 0
        self._start = 0

    def _pending(self) -> str:
        """The text of the undecided tokens. A SentencePiece decoder strips the leading space of
        whatever it decodes first (right at the start of the text only), so they are decoded
        after a decided token and its own text removed; that token is the last one that decodes
        alone to whole characters (a lone byte token would spoil the run of bytes after it)."""
        decode, pending = self._tokenizer.decode, self.tokens[self._start :]
        for i in range(self._start - 1, max(self._start - 8, 0) - 1, -1):
            before = decode(self.tokens[i : i + 1])
            if "\ufffd" not in before:
                return decode(self.tokens[i : i + 1] + pending)[len(before) :]
        return decode(pending)

    def add_token(self, token: int) -> None:
        self.tokens.append(int(token))
        pending = self._pending()
        if not pending.endswith("\ufffd"):
            self.text += pending
            self._start = len(self.tokens)

    def finalize(self) -> None:
        if self._start < len(self.tokens):
            self.text += self._pending()
            self._start = len(self.tokens)

    @property
    def last_segment(self) -> str:
        """The text decided since the last read."""
        segment = self.text[self.offset :]
        self.offset = len(self.text)
        return segment


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON ({e})") from None


def _token_text(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or an AddedToken dict."""
    return value.get("content") if isinstance(value, dict) else value


def _chat_template(path: str, config: dict) -> str | None:
    """The chat template: chat_template.jinja (which transformers prefers), else the config's
    entry (a string, or a list of named templates: the "default" one)."""
    jinja = os.path.join(path, "chat_template.jinja")
    if os.path.exists(jinja):
        with open(jinja, encoding="utf-8") as f:
            return f.read()
    template = config.get("chat_template") or _read_json(
        os.path.join(path, "chat_template.json")
    ).get("chat_template")
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template}
        template = named.get("default", next(iter(named.values()), None))
    return template


def load_tokenizer(
    path: str, tokenizer_config_extra: dict | None = None, eos_token_ids: Any = None
) -> TokenizerWrapper:
    """The tokenizer of a Hugging Face model directory: tokenizer.json through the
    ``tokenizers`` package, tokenizer_config.json (special tokens, ``add_bos_token``, chat
    template; special_tokens_map.json fills gaps) and chat_template.jinja. ``eos_token_ids``
    (a config's or generation_config's ``eos_token_id``) stop generation instead of the EOS
    token, as in mlx-lm."""
    from tokenizers import Tokenizer

    file = os.path.join(path, "tokenizer.json")
    if not os.path.exists(file):
        raise ValueError(f"{path} holds no tokenizer.json")
    try:
        tok = Tokenizer.from_file(file)
    except Exception as e:  # the tokenizers package raises its own Exception subclass
        raise ValueError(f"{file} is not a valid tokenizer ({e})".splitlines()[0]) from None
    config = {**_read_json(os.path.join(path, "tokenizer_config.json"))}
    config.update(tokenizer_config_extra or {})
    specials = _read_json(os.path.join(path, "special_tokens_map.json"))
    tokens = {k: _token_text(config.get(k) or specials.get(k)) for k in _SPECIALS}
    rest = {k: v for k, v in config.items() if k not in _SPECIALS}
    for key in ("add_bos_token", "add_eos_token", "chat_template", "added_tokens_decoder"):
        rest.pop(key, None)  # read here; added tokens live in tokenizer.json
    return TokenizerWrapper(
        tok,
        **tokens,
        add_bos_token=config.get("add_bos_token"),
        add_eos_token=config.get("add_eos_token"),
        chat_template=_chat_template(path, config),
        eos_token_ids=eos_token_ids,
        config=rest,
    )
