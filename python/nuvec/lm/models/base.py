"""What the architectures share, as mlx-lm's ``mlx_lm.models.base``: attention masks (causal,
with an optional sliding window) and ``scaled_dot_product_attention``, which runs
``fast.scaled_dot_product_attention`` over a float cache and ``quantized_matmul`` over a
``QuantizedKVCache``'s packed keys and values."""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ... import fast
from ..._dtype_info import finfo

__all__ = ["create_attention_mask", "create_causal_mask", "scaled_dot_product_attention"]


def create_causal_mask(n: int, offset: int = 0, window_size: int | None = None) -> Any:
    """Boolean ``(n, offset + n)``: query ``i`` (at position ``offset + i``) sees key ``j`` when
    ``j`` is no later and, with a window, fewer than ``window_size`` positions earlier."""
    keys = mx.arange(offset + n)[None]
    queries = mx.arange(offset, offset + n)[:, None]
    mask = queries >= keys
    if window_size is not None:
        mask = mx.logical_and(mask, queries < keys + window_size)
    return mask


def create_attention_mask(
    h: Any, cache: Any = None, window_size: int | None = None, return_array: bool = False
) -> Any:
    """The mask for ``h``'s ``(B, L, ...)`` new positions: the cache's own (``make_mask``), or
    for no cache "causal", an array where a window cuts in, or None for one position."""
    n = h.shape[1]
    if cache is not None and hasattr(cache, "make_mask"):
        return cache.make_mask(n, window_size=window_size, return_array=return_array)
    if n == 1:
        return None
    if return_array or (window_size is not None and n > window_size):
        return create_causal_mask(n, window_size=window_size)
    return "causal"


def quantized_scaled_dot_product_attention(
    queries: Any, q_keys: tuple, q_values: tuple, scale: float, mask: Any, group_size: int,
    bits: int,
) -> Any:  # fmt: skip
    """Attention over packed ``(w, scales, biases)`` keys and values: the scores and the output
    are two ``quantized_matmul``s (query heads grouped over their key/value head), a precise
    softmax between them, as mlx-lm's."""
    B, n_q, L, D = queries.shape
    if isinstance(mask, str) and 1 < L <= SERIAL_ROWS:
        return _row_by_row(queries, q_keys, q_values, scale, group_size, bits)
    n_kv = q_keys[0].shape[-3]
    repeats = n_q // n_kv
    queries = queries * scale
    if repeats > 1:
        queries = queries.reshape(B, n_kv, repeats, L, D)
        q_keys = tuple(mx.expand_dims(x, -3) for x in q_keys)
        q_values = tuple(mx.expand_dims(x, -3) for x in q_values)
    scores = mx.quantized_matmul(queries, *q_keys, transpose=True, group_size=group_size, bits=bits)
    if isinstance(mask, str):
        q_len, k_len = scores.shape[-2:]
        mask = create_causal_mask(q_len, k_len - q_len)
    if mask is not None:
        if mask.dtype == mx.bool_:
            scores = mx.where(mask, scores, finfo(scores.dtype).min)
        else:
            scores = scores + mask
    scores = mx.softmax(scores, axis=-1, precise=True)
    out = mx.quantized_matmul(scores, *q_values, transpose=False, group_size=group_size, bits=bits)
    return out.reshape(B, n_q, L, -1) if repeats > 1 else out


SERIAL_ROWS = 8  # as the serial rule of fast.scaled_dot_product_attention


def _row_by_row(
    queries: Any, q_keys: tuple, q_values: tuple, scale: float, group_size: int, bits: int
) -> Any:
    """Causal quantized attention of a few query rows as one-row calls over each row's key
    prefix. The softmax and the scores-by-values product reduce along the keys in an order that
    depends on their number, so one call over all keys with masked scores would round
    differently from decoding the rows one by one; this way a verify step of speculative
    decoding (or a small chunk) gets the bits of one-by-one decoding."""
    L, k_len = queries.shape[2], q_keys[0].shape[-2]
    rows = []
    for i in range(L):
        end = k_len - L + i + 1
        keys = tuple(x[..., :end, :] for x in q_keys)
        values = tuple(x[..., :end, :] for x in q_values)
        rows.append(
            quantized_scaled_dot_product_attention(
                queries[:, :, i : i + 1], keys, values, scale, None, group_size, bits
            )
        )
    return mx.concatenate(rows, axis=2)


def scaled_dot_product_attention(
    queries: Any, keys: Any, values: Any, cache: Any, scale: float, mask: Any
) -> Any:
    """``fast.scaled_dot_product_attention``, its quantized form when ``cache`` holds packed
    keys and values (it has ``bits``), or ``fast.paged_attention`` over a ``PagedKVCache``'s pools
    (it has ``block_tables``)."""
    if hasattr(cache, "block_tables"):
        return fast.paged_attention(
            queries, keys, values, cache.block_tables, cache.context_lens, scale=scale
        )
    if hasattr(cache, "bits"):
        return quantized_scaled_dot_product_attention(
            queries, keys, values, scale, mask, cache.group_size, cache.bits
        )
    return fast.scaled_dot_product_attention(queries, keys, values, scale=scale, mask=mask)
