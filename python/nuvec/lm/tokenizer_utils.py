"""Tokenizers, as mlx-lm's ``mlx_lm.tokenizer_utils``: a ``TokenizerWrapper`` over a Hugging Face
``tokenizers.Tokenizer`` with the surface mlx-lm's code uses (``encode``, ``decode``,
``eos_token_ids``, ``apply_chat_template``, ``detokenizer``), and the streaming detokenizer.

A GGUF file carries its tokenizer as metadata (``tokenizer.ggml.*``): ``from_gguf_metadata``
rebuilds the byte-level BPE that Hugging Face's tokenizer.json describes for GPT-2-style models
(SmolLM2, Llama 3, Qwen2), so text splits into the very tokens the model was trained on. The
``tokenizers`` and ``jinja2`` packages are imported when a tokenizer is built, not with nuvec."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

__all__ = ["StreamingDetokenizer", "TokenizerWrapper", "from_gguf_metadata"]

# llama.cpp's pre-tokenizers (tokenizer.ggml.pre) -> whether digits split one by one before the
# GPT-2 regex (Hugging Face's Digits(individual_digits=True) ahead of ByteLevel).
_PRE_DIGITS = {"smollm": True, "gpt2": False, "default": False}
_CONTROL, _USER_DEFINED = 3, 4  # llama.cpp's token types that are added (not merged) tokens


def _meta_int(meta: dict, key: str) -> int | None:
    value = meta.get(key)
    return None if value is None else int(value.item())


def from_gguf_metadata(meta: dict) -> TokenizerWrapper:
    """The tokenizer a GGUF file's metadata describes (``tokenizer.ggml.model`` "gpt2": byte-level
    BPE). Other tokenizer models (llama's SentencePiece) raise ``ValueError``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    kind = meta.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(f"unsupported GGUF tokenizer model {kind!r} (supported: 'gpt2')")
    pre = meta.get("tokenizer.ggml.pre", "default")
    if pre not in _PRE_DIGITS:
        raise ValueError(f"unsupported GGUF pre-tokenizer {pre!r}")
    tokens = list(meta["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    types = meta.get("tokenizer.ggml.token_type")
    types = [1] * len(tokens) if types is None else types.tolist()
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
    added = [
        AddedToken(tokens[i], special=t == _CONTROL, normalized=False)
        for i, t in enumerate(types)
        if t in (_CONTROL, _USER_DEFINED)
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
        add_bos_token=bool(meta["tokenizer.ggml.add_bos_token"].item())
        if "tokenizer.ggml.add_bos_token" in meta
        else False,
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
        add_bos_token: bool = False,
        chat_template: str | None = None,
        eos_token_ids: list[int] | None = None,
    ):
        self._tokenizer = tokenizer
        self.bos_token, self.eos_token = bos_token, eos_token
        self.pad_token, self.unk_token = pad_token, unk_token
        self.add_bos_token = add_bos_token
        self.chat_template = chat_template
        self._template: Any = None
        ids = {self.eos_token_id} if self.eos_token_id is not None else set()
        self.eos_token_ids = ids | set(eos_token_ids or ())

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

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``; ``add_special_tokens`` prepends the BOS token where the model's
        tokenizer adds one."""
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        if add_special_tokens and self.add_bos_token and self.bos_token_id is not None:
            ids = [self.bos_token_id, *ids]
        return ids

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

    def add_token(self, token: int) -> None:
        self.tokens.append(int(token))
        pending = self._tokenizer.decode(self.tokens[self._start :])
        if not pending.endswith("\ufffd"):
            self.text += pending
            self._start = len(self.tokens)

    def finalize(self) -> None:
        if self._start < len(self.tokens):
            self.text += self._tokenizer.decode(self.tokens[self._start :])
            self._start = len(self.tokens)

    @property
    def last_segment(self) -> str:
        """The text decided since the last read."""
        segment = self.text[self.offset :]
        self.offset = len(self.text)
        return segment
