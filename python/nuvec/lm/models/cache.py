"""Key/value caches, as mlx-lm's ``mlx_lm.models.cache``: ``KVCache`` for one sequence (or a batch
whose rows all start together) and ``BatchKVCache`` for a batch of left-padded prompts.

A cache holds each layer's keys and values ``(B, heads, T, head_dim)`` in a buffer that grows in
steps of ``step`` positions, so a decode step writes one position in place instead of copying the
whole history (``concatenate`` would, every step)."""

from __future__ import annotations

from typing import Any

from ... import _core as mx

__all__ = ["BatchKVCache", "KVCache", "make_prompt_cache"]


class KVCache:
    """The plain cache: ``update_and_fetch(keys, values)`` appends ``(B, H, L, D)`` keys and values
    and returns all of them so far; ``offset`` counts the positions held."""

    step = 256

    def __init__(self) -> None:
        self.keys: Any = None
        self.values: Any = None
        self.offset = 0

    def _grow(self, keys: Any, values: Any, held: int) -> None:
        """A buffer for ``held`` kept positions and ``keys``' new ones, in whole steps."""
        B, H, L, Dk = keys.shape
        size = (held + L + self.step - 1) // self.step * self.step
        new_k = mx.zeros((B, H, size, Dk), keys.dtype)
        new_v = mx.zeros((B, H, size, values.shape[3]), values.dtype)
        if self.keys is not None:
            new_k[..., :held, :] = self.keys[..., :held, :]
            new_v[..., :held, :] = self.values[..., :held, :]
        self.keys, self.values = new_k, new_v

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        prev = self.offset
        if self.keys is None or prev + keys.shape[2] > self.keys.shape[2]:
            self._grow(keys, values, prev)
        self.offset += keys.shape[2]
        self.keys[..., prev : self.offset, :] = keys
        self.values[..., prev : self.offset, :] = values
        return self.keys[..., : self.offset, :], self.values[..., : self.offset, :]

    @property
    def state(self) -> tuple[Any, Any]:
        """The keys and values held (what ``mx.eval`` of the cache evaluates)."""
        if self.keys is None:
            return ()  # type: ignore[return-value]
        return self.keys[..., : self.offset, :], self.values[..., : self.offset, :]

    def is_trimmable(self) -> bool:
        return True

    def trim(self, n: int) -> int:
        """Forget the last ``n`` positions (at most all); returns how many were forgotten."""
        n = min(self.offset, n)
        self.offset -= n
        return n

    def make_mask(self, n: int) -> Any:
        """The attention mask for ``n`` new queries: causal for a prompt, none for one token."""
        return "causal" if n > 1 else None

    def empty(self) -> bool:
        return self.keys is None


class BatchKVCache(KVCache):
    """A cache for a batch of prompts left-padded to one length: row ``b`` starts after
    ``left_padding[b]`` pad positions. Each row's rotary positions count from its own first token
    (``offset`` is then a ``(B,)`` array, as mlx-lm's), and the mask hides the pads, so a row's
    scores are those it has alone."""

    def __init__(self, left_padding: list[int]) -> None:
        super().__init__()
        self.left_padding = mx.array(left_padding, dtype=mx.int32)
        self.offset = mx.array([-p for p in left_padding], dtype=mx.int32)
        self._idx = 0

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        prev = self._idx
        if self.keys is None or prev + keys.shape[2] > self.keys.shape[2]:
            self._grow(keys, values, prev)
        self._idx += keys.shape[2]
        self.offset = self.offset + keys.shape[2]
        self.keys[..., prev : self._idx, :] = keys
        self.values[..., prev : self._idx, :] = values
        return self.keys[..., : self._idx, :], self.values[..., : self._idx, :]

    @property
    def state(self) -> tuple[Any, Any]:
        if self.keys is None:
            return ()  # type: ignore[return-value]
        return self.keys[..., : self._idx, :], self.values[..., : self._idx, :]

    def is_trimmable(self) -> bool:
        return False

    def make_mask(self, n: int) -> Any:
        """Boolean ``(B, 1, n, idx + n)``: query ``i`` sees key ``j`` when ``j`` is no later than it
        and not a pad of its row."""
        total = self._idx + n
        keys = mx.arange(total)
        queries = mx.arange(self._idx, total)
        causal = keys[None, :] <= queries[:, None]
        real = keys[None, :] >= self.left_padding[:, None]
        return mx.logical_and(causal[None, None], real[:, None, None, :])


def make_prompt_cache(model: Any, left_padding: list[int] | None = None) -> list[KVCache]:
    """One cache per layer of ``model`` (mlx-lm's name); ``left_padding``: a ``BatchKVCache`` per
    layer for a left-padded batch."""
    n = len(model.layers)
    if left_padding is not None:
        return [BatchKVCache(left_padding) for _ in range(n)]
    return [KVCache() for _ in range(n)]
