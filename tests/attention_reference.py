"""A NumPy float64 reference of scaled_dot_product_attention (MLX's definition), and the
random operands the attention tests share."""

import numpy as np

LOWEST32 = float(np.finfo(np.float32).min)  # a masked score, as MLX's where(mask, s, finfo.min)


def sdpa_reference(q, k, v, scale, mask=None, sinks=None):
    """softmax(scale * q k^T + mask) v per head, in float64; k and v heads shared by groups of q heads."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s = q @ np.swapaxes(k, -1, -2) * scale
    lq, lk = s.shape[-2:]
    if isinstance(mask, str):
        keep = np.arange(lq)[:, None] + lk - lq >= np.arange(lk)[None, :]
        s = np.where(keep, s, LOWEST32)
    elif mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, LOWEST32) if mask.dtype == bool else s + mask.astype(np.float64)
    if sinks is not None:
        col = np.broadcast_to(
            np.asarray(sinks, np.float64)[None, :, None, None], s.shape[:-1] + (1,)
        )
        s = np.concatenate([col, s], axis=-1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    if sinks is not None:
        p = p[..., 1:]
    return p @ v


def operands(b, hq, hkv, lq, lk, d, dv=None, seed=0):
    """float32 q (b, hq, lq, d), k (b, hkv, lk, d), v (b, hkv, lk, dv)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, hq, lq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, lk, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, lk, dv or d)).astype(np.float32)
    return q, k, v
