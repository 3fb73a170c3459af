"""Compiled decode steps (nuvec's own: mlx-lm runs every step through Python).

A one-token step over plain ``KVCache``s is traced once per key-buffer size with ``nuvec.compile``
and replayed: Python builds nothing but the call, and the trace is simplified (constants folded,
no-op views dropped, element-wise chains fused). What makes one trace serve every position: the
position is an array, not a Python int. Each layer's cache is seen through ``_WindowCache``: the
new key and value are written into the whole buffer with ``slice_update`` at an array start, rope
turns by the array offset, and attention reads the whole buffer under a boolean mask that shows
the positions held. The attention kernel runs such a prefix mask as the unmasked call over the keys
it shows, so a compiled step gives the bits of the plain step (``tests/test_lm_decode.py``).

A step falls back to the plain path when a cache is of another kind (rotating, quantized, batched,
paged), is empty, or its buffer is full (the plain step grows it by 256 positions; the next size
traces once more), for a model whose trace fails (code that reads a position as a number), and
while compile is disabled (``disable_compile``, ``NUVEC_DISABLE_COMPILE=1``).
"""

from __future__ import annotations

from typing import Any

from .. import _core as mx
from .._compile import _enabled as _compile_enabled
from .._compile import compile as _compile
from .models.cache import KVCache

__all__ = ["compiled_decode", "forget_compiled_decode"]

_KEY = "_compiled_decode"  # where a model keeps its compiled step


class _WindowCache:
    """A ``KVCache``'s buffers during a trace: one position written at ``offset`` (an array)."""

    def __init__(self, keys: Any, values: Any, offset: Any) -> None:
        self.keys, self.values, self.offset = keys, values, offset

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        keys, values = keys.astype(self.keys.dtype), values.astype(self.values.dtype)
        self.keys = mx.slice_update(self.keys, keys, self.offset, axes=(2,))
        self.values = mx.slice_update(self.values, values, self.offset, axes=(2,))
        return self.keys, self.values

    def make_mask(self, n: int, window_size: int | None = None, return_array: bool = False) -> Any:
        if window_size is not None:  # a sliding window over a plain cache: the plain step's mask
            raise ValueError("a sliding window's mask is not traced")
        return mx.arange(self.keys.shape[2]) <= self.offset  # the positions held, this one too


def _signature(model: Any) -> tuple:
    """What a trace bakes in: every module's arrays (by identity) and plain settings (such as
    ``activation_bits``); a change to any makes a new trace."""
    sig = []
    for m in model.modules():
        arrays = tuple((k, id(v)) for k, v in m.items() if isinstance(v, mx.array))
        plain = tuple(
            (k, v) for k, v in vars(m).items() if isinstance(v, (int, float, str, bool, type(None)))
        )
        sig.append((id(m), arrays, plain))
    return tuple(sig)


class _Decode:
    """A model's compiled step: one token's logits and every layer's key and value buffers with
    its position written, ``(logits, k0, v0, k1, v1, ...)``."""

    def __init__(self, model: Any, signature: tuple) -> None:
        self.model, self.signature, self.failed = model, signature, False

        # Arrays in and out as flat tuples: the call's signature and its outputs need no walk
        # over nested lists.
        def step(y: Any, offset: Any, *buffers: Any) -> tuple:
            caches = [_WindowCache(k, v, offset) for k, v in zip(buffers[::2], buffers[1::2])]
            logits = model(y, cache=caches)[:, -1, :]
            return (logits, *(a for c in caches for a in (c.keys, c.values)))

        self.step = _compile(step)

    def __call__(self, y: Any, cache: list) -> Any:
        """The logits of token ids ``y`` (1, 1), the caches extended in place; None where the
        plain step must run."""
        if self.failed or not _compile_enabled[0] or not _fits(y, cache):
            return None
        offset = cache[0].offset
        buffers = [a for c in cache for a in (c.keys, c.values)]
        try:
            logits, *buffers = self.step(y, mx.array([offset], mx.int32), *buffers)
        except (ValueError, TypeError):  # the model reads the position as a number
            self.failed = True
            return None
        for i, c in enumerate(cache):
            c.keys, c.values, c.offset = buffers[2 * i], buffers[2 * i + 1], offset + 1
        return logits

    def logits(self, y: Any, cache: list) -> Any:
        """The last position's logits of token ids ``y`` ``(1, L)``, the caches extended: the
        compiled step where it can run, else the model's own (the same bits)."""
        out = self(y, cache)
        return self.model(y, cache=cache)[:, -1, :] if out is None else out


def _fits(y: Any, cache: list) -> bool:
    if y.shape != (1, 1) or not cache:
        return False
    offset = cache[0].offset
    for c in cache:  # (a loop: a generator in all() cost ~50 us a step of 30 layers)
        if type(c) is not KVCache or c.keys is None or c.offset != offset:
            return False
        batch, _, size, _ = c.keys.shape
        if batch != 1 or offset >= size:
            return False
    return True


def compiled_decode(model: Any) -> _Decode:
    """The model's compiled step (kept on the model, so its traces serve later generations),
    traced anew where its weights or settings changed."""
    sig = _signature(model)
    step = vars(model).get(_KEY)
    if step is None or step.signature != sig:
        step = _Decode(model, sig)
        vars(model)[_KEY] = step
    return step


def forget_compiled_decode(model: Any) -> None:
    """Drops the model's compiled step now (its traces hold the weights they were traced over),
    not at the next ``compiled_decode`` call."""
    vars(model).pop(_KEY, None)
