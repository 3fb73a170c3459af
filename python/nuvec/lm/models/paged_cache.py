"""The paged key/value cache (vLLM's block tables on nuvec's own ``fast.paged_write`` and
``fast.paged_attention``): every layer keeps its keys and values in a pool of fixed-size pages,
and each sequence owns a list of pages (its block table), so sequences of different lengths
share one pool, grow a page at a time and give their pages back when they finish.

``PageTable`` holds the sequences, their lengths and block tables and a ``PageAllocator``; it is
shared by the layers, since every layer stores the same positions. ``PagedKVCache`` is one layer's
pools: a decode step writes each sequence's new key at its next slot and runs one query per
sequence through ``fast.paged_attention`` (``base.scaled_dot_product_attention`` routes there),
which gives each row the bits of the contiguous one-query attention over the same keys."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ... import fast

__all__ = ["PageAllocator", "PageTable", "PagedKVCache", "make_paged_cache"]


class PageAllocator:
    """A free list of ``num_pages`` page ids: ``allocate(n)`` takes the lowest free ones (so a
    run's layout depends only on the order of its requests), ``free(ids)`` gives them back."""

    def __init__(self, num_pages: int) -> None:
        if num_pages < 1:
            raise ValueError(f"a page pool needs at least one page, got {num_pages}")
        self.num_pages = num_pages
        self._free = list(range(num_pages - 1, -1, -1))  # popped from the end: lowest first

    @property
    def free_pages(self) -> int:
        return len(self._free)

    def allocate(self, n: int) -> list[int]:
        if n > len(self._free):
            raise MemoryError(f"the page pool is full: {n} pages asked, {len(self._free)} free")
        return [self._free.pop() for _ in range(n)]

    def free(self, ids: list[int]) -> None:
        if any(not 0 <= i < self.num_pages for i in ids) or set(ids) & set(self._free):
            raise ValueError(f"freeing pages that are not allocated: {ids}")
        self._free.extend(ids)
        self._free.sort(reverse=True)


class PageTable:
    """The sequences a batch of paged caches holds: ``add(n)`` makes room for a sequence of ``n``
    positions and returns its id, ``remove(seq)`` frees its pages, and ``step(seqs)`` readies one
    new position for each of ``seqs`` (in that row order): after it, ``offset`` (the positions
    before the new one, the rotary offsets), ``slot_mapping``, ``block_tables`` and
    ``context_lens`` are the arrays the layers' writes and attention take."""

    def __init__(self, num_pages: int, page_size: int = 64) -> None:
        if page_size < 1 or 256 % page_size:
            raise ValueError(
                f"page_size must divide 256 (the attention's key block), got {page_size}"
            )
        self.page_size = page_size
        self.allocator = PageAllocator(num_pages)
        self.lengths: dict[int, int] = {}
        self.pages: dict[int, list[int]] = {}
        self._next = 0
        self.rows: list[int] = []

    def _reserve(self, seq: int, n: int) -> None:
        need = -(-n // self.page_size) - len(self.pages[seq])
        if need > 0:
            self.pages[seq] += self.allocator.allocate(need)

    def add(self, n: int = 0) -> int:
        seq, self._next = self._next, self._next + 1
        self.pages[seq], self.lengths[seq] = [], 0
        self._reserve(seq, n)
        return seq

    def remove(self, seq: int) -> None:
        self.allocator.free(self.pages.pop(seq))
        del self.lengths[seq]

    def slots(self, seq: int, start: int, n: int) -> list[int]:
        """The pool slots of positions ``start .. start + n`` of ``seq`` (pages reserved)."""
        self._reserve(seq, start + n)
        p = self.page_size
        return [self.pages[seq][i // p] * p + i % p for i in range(start, start + n)]

    def step(self, seqs: list[int]) -> None:
        if not seqs:
            raise ValueError("a step needs at least one sequence")
        self.rows = list(seqs)
        slots = [self.slots(s, self.lengths[s], 1)[0] for s in seqs]
        width = max(len(self.pages[s]) for s in seqs)
        self.offset = mx.array([self.lengths[s] for s in seqs], dtype=mx.int32)
        for s in seqs:
            self.lengths[s] += 1
        self.slot_mapping = mx.array(slots, dtype=mx.int32)
        self.block_tables = mx.array(
            [self.pages[s] + [0] * (width - len(self.pages[s])) for s in seqs], dtype=mx.int32
        )
        self.context_lens = mx.array([self.lengths[s] for s in seqs], dtype=mx.int32)


class PagedKVCache:
    """One layer's page pools ``(num_pages, page_size, kv_heads, head_dim)``, made at the first
    write with the keys' heads, sizes and dtype. ``update_and_fetch(keys, values)`` takes one new
    position per row of the current ``table.step`` and returns the pools, which
    ``base.scaled_dot_product_attention`` hands to ``fast.paged_attention`` with the table's
    ``block_tables`` and ``context_lens``. ``write(seq, keys, values)`` stores a sequence's
    prefilled ``(1, kv_heads, n, head_dim)`` keys and values (from a plain ``KVCache``)."""

    def __init__(self, table: PageTable) -> None:
        self.table = table
        self.k_pages: Any = None
        self.v_pages: Any = None

    @property
    def offset(self) -> Any:
        return self.table.offset

    @property
    def block_tables(self) -> Any:
        return self.table.block_tables

    @property
    def context_lens(self) -> Any:
        return self.table.context_lens

    def _store(self, keys: Any, values: Any, slots: Any) -> None:
        """``keys`` ``(T, kv_heads, head_dim)`` and ``values`` at ``slots``."""
        if self.k_pages is None:
            n, p = self.table.allocator.num_pages, self.table.page_size
            self.k_pages = mx.zeros((n, p, *keys.shape[1:]), keys.dtype)
            self.v_pages = mx.zeros((n, p, *values.shape[1:]), values.dtype)
        # The old pools, no longer held once replaced, are written over in place.
        self.k_pages, self.v_pages = fast.paged_write(
            self.k_pages, self.v_pages, keys, values, slots
        )

    def write(self, seq: int, keys: Any, values: Any) -> None:
        n = keys.shape[2]
        if keys.shape[0] != 1:
            raise ValueError("write takes one sequence's keys, (1, kv_heads, n, head_dim)")
        start = self.table.lengths[seq]
        slots = mx.array(self.table.slots(seq, start, n), dtype=mx.int32)
        self._store(keys[0].transpose(1, 0, 2), values[0].transpose(1, 0, 2), slots)

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        B, _, L, _ = keys.shape
        if L != 1 or B != len(self.table.rows):
            raise ValueError(
                f"a paged cache takes one new position per sequence of the step "
                f"({len(self.table.rows)} rows), got keys of shape {tuple(keys.shape)}"
            )
        self._store(keys[:, :, 0, :], values[:, :, 0, :], self.table.slot_mapping)
        return self.k_pages, self.v_pages

    def make_mask(self, n: int, window_size: int | None = None, return_array: bool = False) -> Any:
        if window_size is not None:
            raise ValueError("the paged cache has no sliding window")
        return None

    @property
    def state(self) -> tuple[Any, Any]:
        return self.k_pages, self.v_pages


def make_paged_cache(model: Any, num_pages: int, page_size: int = 64) -> list[PagedKVCache]:
    """One ``PagedKVCache`` per layer of ``model``, sharing one ``PageTable``."""
    if any(getattr(getattr(model, "model", None), "sliding", None) or ()):
        raise ValueError("the paged cache does not hold sliding-window layers")
    table = PageTable(num_pages, page_size)
    return [PagedKVCache(table) for _ in model.layers]
