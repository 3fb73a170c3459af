"""``nuvec.fast.scaled_dot_product_attention`` (MLX's ``mx.fast`` one) and nuvec's own
``plan_attention``, ``paged_write`` and ``paged_attention`` (docs/attention.md). The kernels are
C++ (csrc/backend/cpu/attention.cpp, paged.cpp)."""

from . import _core

__all__ = ["paged_attention", "paged_write", "plan_attention", "scaled_dot_product_attention"]


def scaled_dot_product_attention(
    q, k, v, *, scale, mask=None, sinks=None, force_fused=False, stream=None
):
    """``softmax(scale * q @ k.T + mask) @ v`` per head, as MLX's ``mx.fast.scaled_dot_product_attention``.

    q is ``(B, N_q, T_q, D)``, k ``(B, N_kv, T_kv, D)`` and v ``(B, N_kv, T_kv, D_v)``, with ``N_q`` a
    multiple of ``N_kv`` (grouped-query and multi-query heads: do not tile k and v). ``mask`` is None,
    ``"causal"`` (the last query aligned with the last key) or an array broadcastable to
    ``(B, N_q, T_q, T_kv)``: boolean (False masks a score) or additive (its dtype must promote to the
    output's). ``sinks`` is an ``(N_q,)`` array of per-head logits that join each row's softmax
    denominator. The output has the promoted dtype of q, k and v; half types compute in float32.
    ``force_fused=True`` raises, as on MLX's CPU (no fused kernel is the one asked for there).
    """
    if force_fused:
        raise ValueError(
            "[scaled_dot_product_attention] force_fused=True but no fused kernel is available in CPU backend."
        )
    return _core._sdpa(q, k, v, scale, mask, sinks, stream)


def _shape_dtype(x, dtype):
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return tuple(x.shape), x.dtype
    return tuple(int(n) for n in x), dtype


def plan_attention(q, k, v, *, scale=None, mask=None, sinks=None, dtype=None):
    """Which kernel ``scaled_dot_product_attention`` with these arguments runs, without running it.

    Takes the same arguments as ``scaled_dot_product_attention`` (``scale`` is optional: it does not
    route), where q, k, v, an array mask and sinks may be arrays or shapes (tuples); shapes take
    ``dtype`` (default float32). Raises what the call would raise for bad shapes or dtypes. Returns
    a dict: ``kernel`` ("decode" for at most 8 query rows, "prefill" otherwise, "reference" for
    float64, computed by the composition of ops, "empty" when there is no key or query),
    ``compute_dtype``, ``key_block`` and ``key_blocks`` (decode: keys per block, and blocks of a row
    that sees every key), ``tile_q`` and ``tile_k`` (prefill) and ``tasks`` (the independent pieces
    the threads share). The plan depends only on shapes, dtypes and options.
    """
    from . import float32

    d = float32 if dtype is None else dtype
    (qs, qd), (ks, kd), (vs, vd) = (_shape_dtype(x, d) for x in (q, k, v))
    mode, md, ms = "", None, None
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(
                f"[scaled_dot_product_attention] invalid mask option '{mask}'. Must be 'causal', or an array."
            )
        mode = "causal"
    elif mask is not None:
        mode = "array"
        ms, md = _shape_dtype(mask, d)
    sd = ss = None
    if sinks is not None:
        ss, sd = _shape_dtype(sinks, d)
    return _core._plan_attention(qs, ks, vs, qd, kd, vd, mode, md, ms, sd, ss)


def paged_write(k_pages, v_pages, keys, values, slot_mapping, *, stream=None):
    """The page pools with new keys and values stored (nuvec's own; vLLM's ``reshape_and_cache``).

    ``k_pages`` is ``(num_pages, page_size, N_kv, D)``, ``v_pages`` ``(num_pages, page_size, N_kv,
    D_v)``, both float32, float16 or bfloat16, with ``page_size`` dividing 256. ``keys`` ``(T, N_kv,
    D)`` and ``values`` ``(T, N_kv, D_v)`` have the pools' dtype; token ``t`` goes to slot
    ``slot_mapping[t]``: row ``slot % page_size`` of page ``slot // page_size`` (a negative slot
    skips the token). Returns the new ``(k_pages, v_pages)``, written over the old pools' memory when
    nothing else holds them (so drop the old arrays to update in place).
    """
    return _core._paged_write(k_pages, v_pages, keys, values, slot_mapping, stream)


def paged_attention(queries, k_pages, v_pages, block_tables, context_lens, *, scale, stream=None):
    """One query per sequence over its paged keys and values (nuvec's own).

    ``queries`` is ``(B, N_q, 1, D)`` (``N_q`` a multiple of the pools' ``N_kv``), the pools as
    ``paged_write`` takes them, ``block_tables`` ``(B, max_pages)`` (sequence ``b``'s key ``j`` is in
    page ``block_tables[b, j // page_size]``) and ``context_lens`` ``(B,)`` the keys each sequence
    sees. Returns ``(B, N_q, 1, D_v)`` in the promoted dtype of the queries and the pools. Each row
    has the bits of ``scaled_dot_product_attention`` of its one query over the same keys laid out
    contiguously; a sequence of no keys gives zeros.
    """
    return _core._paged_attention(
        queries, k_pages, v_pages, block_tables, context_lens, scale, stream
    )
