"""Key/value caches, as mlx-lm's ``mlx_lm.models.cache``: ``KVCache`` for one sequence (or a batch
whose rows all start together), ``BatchKVCache`` for a batch of left-padded prompts,
``RotatingKVCache`` for sliding windows (and ``max_kv_size``), ``QuantizedKVCache`` holding packed
keys and values; ``make_prompt_cache``, prompt-cache files (``save_prompt_cache`` /
``load_prompt_cache``) and trimming.

A cache holds each layer's keys and values ``(B, heads, T, head_dim)`` in a buffer that grows in
steps of ``step`` positions, so a decode step writes one position in place instead of copying the
whole history (``concatenate`` would, every step)."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ... import io
from .base import create_causal_mask

__all__ = [
    "BatchKVCache",
    "KVCache",
    "QuantizedKVCache",
    "RotatingKVCache",
    "can_trim_prompt_cache",
    "load_prompt_cache",
    "make_prompt_cache",
    "maybe_quantize_kv_cache",
    "save_prompt_cache",
    "trim_prompt_cache",
]


class _BaseCache:
    """What every cache has for files: ``state``, a tuple of its arrays and numbers (as mlx-lm
    0.32's), and ``from_state``, which rebuilds a cache from it."""

    @classmethod
    def from_state(cls, state: Any) -> Any:
        obj = cls.__new__(cls)
        obj.state = state
        return obj

    def is_trimmable(self) -> bool:
        return False

    def empty(self) -> bool:
        return self.keys is None  # type: ignore[attr-defined]


class KVCache(_BaseCache):
    """The plain cache: ``update_and_fetch(keys, values)`` appends ``(B, H, L, D)`` keys and values
    and returns all of them so far; ``offset`` counts the positions held. ``dtype`` (nuvec's own,
    as llama.cpp's ``--cache-type-k``): the buffers' dtype, the new keys and values rounded to it
    (float16 halves what attention reads at long contexts); None keeps the keys' own."""

    step = 256
    dtype: Any = None  # (a class default: caches loaded from a file are made without __init__)

    def __init__(self, dtype: Any = None) -> None:
        self.keys: Any = None
        self.values: Any = None
        self.offset = 0
        self.dtype = dtype

    def _grow(self, keys: Any, values: Any, held: int) -> None:
        """A buffer for ``held`` kept positions and ``keys``' new ones, in whole steps."""
        B, H, L, Dk = keys.shape
        size = (held + L + self.step - 1) // self.step * self.step
        # A loaded cache keeps its buffers' dtypes.
        old_k, old_v = (keys, values) if self.keys is None else (self.keys, self.values)
        new_k = mx.zeros((B, H, size, Dk), self.dtype or old_k.dtype)
        new_v = mx.zeros((B, H, size, values.shape[3]), self.dtype or old_v.dtype)
        if self.keys is not None:
            new_k[..., :held, :] = self.keys[..., :held, :]
            new_v[..., :held, :] = self.values[..., :held, :]
        self.keys, self.values = new_k, new_v

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        prev = self.offset
        if self.keys is None or prev + keys.shape[2] > self.keys.shape[2]:
            self._grow(keys, values, prev)
        self.offset += keys.shape[2]
        self.keys[..., prev : self.offset, :] = keys.astype(self.keys.dtype)
        self.values[..., prev : self.offset, :] = values.astype(self.values.dtype)
        return self.keys[..., : self.offset, :], self.values[..., : self.offset, :]

    @property
    def state(self) -> tuple[Any, Any, int]:
        """``(keys, values, offset)``: the positions held (what ``mx.eval`` of it evaluates)."""
        if self.keys is None:
            return None, None, 0
        return self.keys[..., : self.offset, :], self.values[..., : self.offset, :], self.offset

    @state.setter
    def state(self, v: tuple[Any, Any, int]) -> None:
        self.keys, self.values, self.offset = v

    def is_trimmable(self) -> bool:
        return True

    def trim(self, n: int) -> int:
        """Forget the last ``n`` positions (at most all); returns how many were forgotten."""
        n = min(self.offset, n)
        self.offset -= n
        return n

    def make_mask(self, n: int, window_size: int | None = None, return_array: bool = False) -> Any:
        """The mask for ``n`` new queries: "causal" for a prompt, none for one token, a boolean
        array where a sliding window hides old keys."""
        windowed = window_size is not None and self.offset + n > window_size
        if return_array or windowed:
            return create_causal_mask(n, self.offset, window_size)
        return "causal" if n > 1 else None

    def to_quantized(self, group_size: int = 64, bits: int = 4) -> QuantizedKVCache:
        """A ``QuantizedKVCache`` holding these keys and values, packed (mlx-lm's)."""
        q = QuantizedKVCache(group_size, bits)
        q.offset = self.offset
        if self.keys is not None:
            k, v, _ = self.state
            q.keys = mx.quantize(k, group_size, bits)
            q.values = mx.quantize(v, group_size, bits)
        return q


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
    def state(self) -> tuple[Any, Any, Any, Any]:
        if self.keys is None:
            return None, None, self.offset, self.left_padding
        k, v = self.keys[..., : self._idx, :], self.values[..., : self._idx, :]
        return k, v, self.offset, self.left_padding

    def is_trimmable(self) -> bool:
        return False

    def make_mask(self, n: int, window_size: int | None = None, return_array: bool = False) -> Any:
        """Boolean ``(B, 1, n, idx + n)``: query ``i`` sees key ``j`` when ``j`` is no later than it
        (and within the window), and not a pad of its row."""
        mask = create_causal_mask(n, self._idx, window_size)
        real = mx.arange(self._idx + n)[None, :] >= self.left_padding[:, None]
        return mx.logical_and(mask[None, None], real[:, None, None, :])


class RotatingKVCache(_BaseCache):
    """A cache of at most ``max_size`` positions (a sliding window, or mlx-lm's ``max_kv_size``):
    the first ``keep`` positions stay, the rest rotate. One new position overwrites the oldest in
    place; a prompt of several is appended to the keys in temporal order with the last
    ``max_size - 1`` kept, so each of its queries still sees a whole window (mlx-lm's rule)."""

    step = 256

    def __init__(self, max_size: int, keep: int = 0) -> None:
        self.keep, self.max_size = keep, max_size
        self.keys: Any = None
        self.values: Any = None
        self.offset = 0
        self._idx = 0  # where the next position goes in the buffer

    def _trim(self, trim_size: int, v: Any, append: Any = None) -> Any:
        parts = (
            [v[..., : self.keep, :], v[..., trim_size + self.keep :, :]] if trim_size > 0 else [v]
        )
        return mx.concatenate(parts + ([append] if append is not None else []), axis=2)

    def _temporal_order(self, v: Any) -> Any:
        """The buffer in the order of positions, unused tail dropped."""
        if self._idx == v.shape[2]:
            return v
        if self._idx < self.offset:
            return mx.concatenate(
                [v[..., : self.keep, :], v[..., self._idx :, :], v[..., self.keep : self._idx, :]],
                axis=2,
            )
        return v[..., : self._idx, :]

    def _update_concat(self, keys: Any, values: Any) -> tuple[Any, Any]:
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = self._temporal_order(self.keys)
            self.values = self._temporal_order(self.values)
            self._idx = self.keys.shape[2]
            trim_size = self._idx - self.max_size + 1
            self.keys = self._trim(trim_size, self.keys, keys)
            self.values = self._trim(trim_size, self.values, values)
        self.offset += keys.shape[2]
        self._idx = self.keys.shape[2]
        return self.keys, self.values

    def _update_in_place(self, keys: Any, values: Any) -> tuple[Any, Any]:
        B, H, S, Dk = keys.shape
        prev = self.offset
        if self.keys is None or (prev >= self.keys.shape[2] and self.keys.shape[2] < self.max_size):
            size = min(self.step, self.max_size - prev)
            new_k = mx.zeros((B, H, size, Dk), keys.dtype)
            new_v = mx.zeros((B, H, size, values.shape[3]), values.dtype)
            if self.keys is None:
                self.keys, self.values = new_k, new_v
            else:
                self.keys = mx.concatenate([self.keys, new_k], axis=2)
                self.values = mx.concatenate([self.values, new_v], axis=2)
            self._idx = prev
        trim_size = self.keys.shape[2] - self.max_size
        if trim_size > 0:
            self.keys = self._trim(trim_size, self.keys)
            self.values = self._trim(trim_size, self.values)
            self._idx = self.max_size
        if self._idx == self.max_size:
            self._idx = self.keep
        self.keys[..., self._idx : self._idx + S, :] = keys
        self.values[..., self._idx : self._idx + S, :] = values
        self.offset += S
        self._idx += S
        if self.offset < self.max_size:
            return self.keys[..., : self.offset, :], self.values[..., : self.offset, :]
        return self.keys, self.values

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        # A buffer trimmed after it rotated holds fewer than max_size positions of a longer
        # text: it grows by appending until it is whole again.
        short = self.keys is not None and self.keys.shape[2] < min(self.offset, self.max_size)
        if keys.shape[2] == 1 and not short:
            return self._update_in_place(keys, values)
        return self._update_concat(keys, values)

    @property
    def state(self) -> tuple:
        """``(keys, values, offset, keep, max_size, idx)``; the buffer's unused tail dropped."""
        k, v = self.keys, self.values
        if k is not None and self.offset < k.shape[2]:
            k, v = k[..., : self.offset, :], v[..., : self.offset, :]
        return k, v, self.offset, self.keep, self.max_size, self._idx

    @state.setter
    def state(self, v: tuple) -> None:
        self.keys, self.values, self.offset, self.keep, self.max_size, self._idx = v

    def _spare(self) -> int:
        """How many of the newest positions can be forgotten with the keys left still covering
        the window of the next query: any while the buffer holds every position in order, else
        (a prompt appended after the last ``max_size - 1``) those beyond ``max_size - 1``."""
        if self.keys is None or self._idx != self.keys.shape[2]:
            return 0
        if self._idx == self.offset:
            return self.offset
        return max(self._idx - (self.max_size - 1), 0)

    def is_trimmable(self) -> bool:
        """While nothing has been overwritten (mlx-lm's rule), or after a prompt was appended:
        then its positions beyond a window (what speculative decoding's verify step rewinds)."""
        return self.offset < self.max_size or self._spare() > 0

    def trim(self, n: int) -> int:
        """Forget the last ``n`` positions, or as many as can be (returned)."""
        if self.offset < self.max_size:
            n = min(self.offset, n)
            self.offset -= n
            self._idx -= n
            return n
        n = min(n, self._spare())
        if n == 0:
            return 0
        self._idx -= n
        self.offset -= n
        self.keys, self.values = self.keys[..., : self._idx, :], self.values[..., : self._idx, :]
        return n

    def make_mask(self, n: int, window_size: int | None = None, return_array: bool = False) -> Any:
        """For a prompt: causal over the ``max_size - 1`` positions kept before it (a window
        cuts in where needed). For one token: none, or where ``window_size`` is below
        ``max_size``, the buffer's slots holding the last ``window_size`` positions."""
        if n > 1:
            window_size = window_size or self.max_size
            offset = min(self.max_size - 1, self.offset)
            if offset + n > window_size or return_array:
                return create_causal_mask(n, offset, window_size)
            return "causal"
        if window_size is None or self.offset < window_size or self.max_size <= window_size:
            return None
        # Ages of the slots once the new key is written at idx: the kept first positions are as
        # old as they are; the others rotate through slots keep..size (mlx-lm takes idx = 0 and
        # no kept positions, which differs where keep > 0).
        size = min(self.max_size, self.offset + 1)
        idx = self._idx if self._idx < self.max_size else self.keep
        slots = mx.arange(size)
        age = mx.where(slots < self.keep, self.offset - slots, (idx - slots) % (size - self.keep))
        return age < window_size


class QuantizedKVCache(_BaseCache):
    """Keys and values packed by ``nuvec.quantize`` (``(w, scales, biases)`` each, ``bits`` per
    element in groups of ``group_size`` along head_dim), as mlx-lm's. Attention then runs two
    ``quantized_matmul``s over them (``base.quantized_scaled_dot_product_attention``)."""

    step = 256

    def __init__(self, group_size: int = 64, bits: int = 8) -> None:
        self.keys: Any = None
        self.values: Any = None
        self.offset = 0
        self.group_size, self.bits = group_size, bits

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[tuple, tuple]:
        B, H, S, Dk = keys.shape
        prev = self.offset
        if self.keys is None or prev + S > self.keys[0].shape[-2]:
            per_word = 32 // self.bits
            steps = (self.step + S - 1) // self.step * self.step
            shape = (B, H, steps)

            def empty(dim: int) -> tuple:
                return (
                    mx.zeros((*shape, dim // per_word), mx.uint32),
                    mx.zeros((*shape, dim // self.group_size), keys.dtype),
                    mx.zeros((*shape, dim // self.group_size), keys.dtype),
                )

            def grow(x: Any) -> Any:
                return mx.concatenate(
                    [x[..., :prev, :], mx.zeros((*shape, x.shape[-1]), x.dtype)], 2
                )

            if self.keys is None:
                self.keys, self.values = empty(Dk), empty(values.shape[-1])
            else:
                self.keys = tuple(map(grow, self.keys))
                self.values = tuple(map(grow, self.values))
        self.offset += S
        qk = mx.quantize(keys, self.group_size, self.bits)
        qv = mx.quantize(values, self.group_size, self.bits)
        for held, new in zip(self.keys + self.values, qk + qv):
            held[..., prev : self.offset, :] = new
        return self._held(self.keys), self._held(self.values)

    def _held(self, packed: tuple) -> tuple:
        return tuple(x[..., : self.offset, :] for x in packed)

    @property
    def state(self) -> tuple:
        """``((w, scales, biases) of keys, of values, offset, group_size, bits)``."""
        if self.keys is None:
            return None, None, self.offset, self.group_size, self.bits
        return self._held(self.keys), self._held(self.values), *self._config()

    def _config(self) -> tuple[int, int, int]:
        return self.offset, self.group_size, self.bits

    @state.setter
    def state(self, v: tuple) -> None:
        keys, values, self.offset, self.group_size, self.bits = v
        self.keys = None if keys is None else tuple(keys)
        self.values = None if values is None else tuple(values)

    def is_trimmable(self) -> bool:
        return True

    def trim(self, n: int) -> int:
        n = min(self.offset, n)
        self.offset -= n
        return n

    make_mask = KVCache.make_mask


def make_prompt_cache(
    model: Any,
    max_kv_size: int | None = None,
    left_padding: list[int] | None = None,
    kv_dtype: Any = None,
) -> list[Any]:
    """One cache per layer of ``model`` (mlx-lm's name): the model's own ``make_cache()`` where it
    has one (sliding-window layers), else ``KVCache``s; with ``max_kv_size``, each plain cache
    becomes a ``RotatingKVCache(max_kv_size, keep=4)``; ``left_padding``: a ``BatchKVCache`` per
    layer for a left-padded batch (sliding windows then come from the masks). ``kv_dtype``
    (nuvec's own): the plain caches' dtype (``KVCache``)."""
    n = len(model.layers)
    if left_padding is not None:
        return [BatchKVCache(left_padding) for _ in range(n)]
    caches = model.make_cache() if hasattr(model, "make_cache") else [KVCache() for _ in range(n)]
    if max_kv_size is not None:
        caches = [RotatingKVCache(max_kv_size, keep=4) if type(c) is KVCache else c for c in caches]
    for c in caches:
        if type(c) is KVCache:
            c.dtype = kv_dtype
    return caches


def maybe_quantize_kv_cache(
    cache: list[Any], quantized_kv_start: int, kv_group_size: int, kv_bits: int | None
) -> None:
    """Replace, in place, each plain cache holding at least ``quantized_kv_start`` positions by
    its ``QuantizedKVCache`` (mlx-lm's ``kv_bits`` option; rotating caches stay float)."""
    if kv_bits is None:
        return
    for i, c in enumerate(cache):
        if type(c) is KVCache and c.offset >= quantized_kv_start:
            cache[i] = c.to_quantized(group_size=kv_group_size, bits=kv_bits)


def can_trim_prompt_cache(cache: list[Any]) -> bool:
    return all(c.is_trimmable() for c in cache)


def trim_prompt_cache(cache: list[Any], num_tokens: int) -> int:
    """Forget the last ``num_tokens`` positions of every layer; returns how many were forgotten
    (0 where some layer cannot trim)."""
    if not cache or not can_trim_prompt_cache(cache):
        return 0
    return [c.trim(num_tokens) for c in cache][0]


_CLASSES = {c.__name__: c for c in (KVCache, RotatingKVCache, QuantizedKVCache)}


def save_prompt_cache(file: str, cache: list[Any], metadata: dict[str, str] | None = None) -> None:
    """Write ``cache`` to a safetensors file in mlx-lm's layout: tensor ``"{layer}.{i}"`` (or
    ``"{layer}.{i}.{j}"`` inside a quantized cache's triples) is item ``i`` of the layer's
    ``state``, numbers stored as 0-d arrays, strings as arrays of code points and None as an
    empty array; the string metadata holds the user's ``metadata`` under ``"0.{key}"``, the
    class names under ``"1.{layer}"`` and, under ``"2.{n}.0"`` / ``"2.{n}.1"``, which tensors are
    such "scalar", "string" or "none" items."""
    from ...utils import tree_flatten

    for c in cache:
        if type(c).__name__ not in _CLASSES:
            raise ValueError(f"cannot save a {type(c).__name__} (only {', '.join(_CLASSES)})")
    scalars: list = [""]  # never empty, so that the flattened metadata keeps the entry
    arrays = {}
    for key, item in tree_flatten([c.state for c in cache]):
        if isinstance(item, mx.array):
            arrays[key] = item
            continue
        if isinstance(item, (bool, int, float)):
            kind, item = "scalar", mx.array(item)
        elif isinstance(item, str):
            kind, item = "string", mx.array([ord(ch) for ch in item], dtype=mx.int32)
        elif item is None:
            kind, item = "none", mx.array([], dtype=mx.float32)
        else:
            raise ValueError(f"cannot save a cache state item {item!r}")
        scalars.append((key, kind))
        arrays[key] = item
    classes = [type(c).__name__ for c in cache]
    meta = dict(tree_flatten([dict(metadata or {}), classes, scalars]))
    io.save_safetensors(file, arrays, meta)


def load_prompt_cache(file: str, return_metadata: bool = False) -> Any:
    """The caches ``save_prompt_cache`` (or mlx-lm's) wrote, and with ``return_metadata`` the
    user's metadata too. ``ValueError`` for a file that is not a prompt cache."""
    arrays, meta = io.load(file, return_metadata=True)
    classes = {int(k[2:]): v for k, v in meta.items() if k.startswith("1.")}
    user = {k[2:]: v for k, v in meta.items() if k.startswith("0.")}
    kinds = {
        meta[k]: meta[k[:-1] + "1"]
        for k in meta
        if k.startswith("2.") and k.count(".") == 2 and k.endswith(".0")
    }
    if not classes or any(c not in _CLASSES for c in classes.values()):
        raise ValueError(f"{file}: not a prompt cache of {', '.join(_CLASSES)}")
    states: list[dict] = [{} for _ in classes]
    for key, a in arrays.items():
        kind = kinds.get(key)
        if kind == "scalar":
            item = a.item()
        elif kind == "string":
            item = "".join(chr(c) for c in a.tolist())
        else:
            item = None if kind == "none" else a
        layer, rest = key.split(".", 1)
        states[int(layer)][tuple(map(int, rest.split(".")))] = item
    cache = [_CLASSES[classes[i]].from_state(_nest(states[i])) for i in range(len(classes))]
    return (cache, user) if return_metadata else cache


def _nest(flat: dict[tuple[int, ...], Any]) -> Any:
    """``{(0,): k, (1,): v, (2,): n}`` -> ``(k, v, n)``; keys of two indices nest a tuple."""
    if () in flat:
        return flat[()]
    heads = sorted({k[0] for k in flat})
    return tuple(_nest({k[1:]: v for k, v in flat.items() if k[0] == h}) for h in heads)
