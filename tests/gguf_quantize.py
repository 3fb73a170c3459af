"""Quantizers for GGUF test files: Q4_K, Q6_K and Q5_0 blocks as llama.cpp lays them out.

The gguf package dequantizes these types but cannot quantize them. These are plain (not
llama.cpp's error-minimising) quantizers: the tests need valid blocks close to the weights, and
check every dequantized value against ``gguf.quants.dequantize`` of the same bytes.
"""

import numpy as np


def _f16(x):
    return np.asarray(x, np.float32).astype(np.float16)


def q4_k(x):
    """(rows, cols) float32, cols a multiple of 256 -> (rows, cols // 256 * 144) uint8."""
    b = x.reshape(-1, 8, 32).astype(np.float32)
    lo = np.minimum(b.min(-1), 0)
    scale, mins = (b.max(-1) - lo) / 15, -lo
    d = _f16(scale.max(-1) / 63)
    dmin = _f16(mins.max(-1) / 63)
    df, dminf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    sc = np.clip(np.round(np.divide(scale, df, out=np.zeros_like(scale), where=df > 0)), 0, 63)
    m = np.clip(np.round(np.divide(mins, dminf, out=np.zeros_like(mins), where=dminf > 0)), 0, 63)
    step, low = (df * sc)[..., None], (dminf * m)[..., None]
    q = np.clip(np.round(np.divide(b + low, step, out=np.zeros_like(b), where=step > 0)), 0, 15)
    sc, m, q = sc.astype(np.uint8), m.astype(np.uint8), q.astype(np.uint8)
    scales = np.zeros((len(b), 12), np.uint8)
    scales[:, 0:4] = (sc[:, :4] & 63) | ((sc[:, 4:] >> 4) << 6)
    scales[:, 4:8] = (m[:, :4] & 63) | ((m[:, 4:] >> 4) << 6)
    scales[:, 8:12] = (sc[:, 4:] & 15) | ((m[:, 4:] & 15) << 4)
    qs = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(len(b), 128)  # sub-blocks 2i and 2i+1 share bytes
    blocks = np.concatenate(
        [d[:, None].view(np.uint8), dmin[:, None].view(np.uint8), scales, qs], axis=1
    )
    return blocks.reshape(x.shape[0], -1)


def q6_k(x):
    """(rows, cols) float32, cols a multiple of 256 -> (rows, cols // 256 * 210) uint8."""
    b = x.reshape(-1, 16, 16).astype(np.float32)
    scale = np.abs(b).max(-1) / 31
    d = _f16(scale.max(-1) / 127)
    df = d.astype(np.float32)[:, None]
    sc = np.clip(np.round(np.divide(scale, df, out=np.zeros_like(scale), where=df > 0)), 0, 127)
    step = (df * sc)[..., None]
    q = np.clip(np.round(np.divide(b, step, out=np.zeros_like(b), where=step > 0)), -32, 31)
    q = (q + 32).astype(np.uint8).reshape(-1, 2, 4, 32)  # two halves of 128, four rows of 32
    ql = np.concatenate(
        [q[:, :, 0] & 15 | (q[:, :, 2] & 15) << 4, q[:, :, 1] & 15 | (q[:, :, 3] & 15) << 4], axis=2
    ).reshape(-1, 128)
    qh = q[:, :, 0] >> 4 | (q[:, :, 1] >> 4) << 2 | (q[:, :, 2] >> 4) << 4 | (q[:, :, 3] >> 4) << 6
    blocks = np.concatenate(
        [ql, qh.reshape(-1, 64), sc.astype(np.int8).view(np.uint8), d[:, None].view(np.uint8)],
        axis=1,
    )
    return blocks.reshape(x.shape[0], -1)


def q5_0(x):
    """(rows, cols) float32, cols a multiple of 32 -> (rows, cols // 32 * 22) uint8."""
    b = x.reshape(-1, 32).astype(np.float32)
    d = _f16(np.abs(b).max(-1) / 15)
    df = d.astype(np.float32)[:, None]
    q = np.clip(np.round(np.divide(b, df, out=np.zeros_like(b), where=df > 0)) + 16, 0, 31)
    q = q.astype(np.uint32)
    qh = ((q >> 4) << np.arange(32, dtype=np.uint32)).sum(-1, dtype=np.uint32)
    qs = (q[:, :16] & 15 | (q[:, 16:] & 15) << 4).astype(np.uint8)
    blocks = np.concatenate([d[:, None].view(np.uint8), qh[:, None].view(np.uint8), qs], axis=1)
    return blocks.reshape(x.shape[0], -1)
