"""MLX 0.32's floating-point quantization modes (mxfp4, mxfp8, nvfp4): quantize and dequantize bit
for bit, against a NumPy transcription of MLX's steps (always) and MLX (where installed); the
products through them against NumPy float64, with the row-independence promise."""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng, to_np
from test_quantize import round_as

MODES = {"mxfp4": (32, 4), "mxfp8": (32, 8), "nvfp4": (16, 4)}
DTYPES = ("float32", "float16", "bfloat16")
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)


def e4m3_values():
    """The 127 finite non-negative e4m3 values, by code."""
    c = np.arange(127)
    e, m = c >> 3, c & 7
    return np.where(e == 0, m * 2.0**-9, (1 + m / 8) * 2.0 ** (e - 7)).astype(np.float32)


def to_e4m3(x):
    """Round to nearest e4m3 (ties to the even code), saturating at 448 (MLX's)."""
    x = np.asarray(x, np.float32)
    v = e4m3_values()
    a = np.minimum(np.abs(x), 448.0)[..., None].astype(np.float64)
    d = np.abs(a - v)
    best = d.min(-1, keepdims=True)
    ties = d == best
    code = np.where(
        ties.sum(-1) > 1, np.argmax(ties & (np.arange(127) % 2 == 0), -1), np.argmin(d, -1)
    )
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def from_e4m3(c):
    c = np.asarray(c)
    v = e4m3_values()[np.minimum(c & 0x7F, 126)]
    return np.where(c & 0x80, -v, v).astype(np.float32)


def to_e2m1(x):
    """Round to nearest, ties toward zero; no negative zero (MLX 0.32.4's rule)."""
    a = np.abs(x).astype(np.float64)
    c = sum((a > t).astype(np.uint8) for t in (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5))
    return (c | np.where((c > 0) & np.signbit(x), 8, 0)).astype(np.uint8)


def ref_quantize_fp(w, mode, dtype):
    """(packed bytes, scale bytes) by MLX's steps, each rounded to the input dtype as MLX does."""
    g, bits = MODES[mode]
    grp = np.asarray(w, np.float32).reshape(-1, g)
    t = round_as(np.abs(grp).max(-1) / np.float32(448 if bits == 8 else 6), dtype)
    if mode == "nvfp4":
        sc = to_e4m3(t)
        sf = from_e4m3(sc)
    else:
        with np.errstate(divide="ignore"):
            e = np.where(t == 0, 0, np.clip(np.ceil(np.log2(np.where(t == 0, 1, t))), -127, 127))
        sc = (e + 127).astype(np.uint8)
        sf = np.exp2(e).astype(np.float32)
    sf = round_as(sf, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(sf[:, None] == 0, 0, round_as(grp / np.where(sf == 0, 1, sf)[:, None], dtype))
    codes = to_e4m3(v) if bits == 8 else to_e2m1(v)
    codes = codes.reshape(w.shape[:-1] + (-1,))
    packed = codes if bits == 8 else (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    return packed, sc.reshape(w.shape[:-1] + (-1,))


def values(packed, scales, mode):
    g, bits = MODES[mode]
    if bits == 8:
        v = from_e4m3(packed)
    else:
        c = np.stack([packed & 15, packed >> 4], -1).reshape(packed.shape[:-1] + (-1,))
        v = np.where(c & 8, -E2M1[c & 7], E2M1[c & 7])
    s = from_e4m3(scales) if mode == "nvfp4" else np.exp2(scales.astype(np.float64) - 127)
    return (v.reshape(scales.shape + (g,)) * s[..., None]).reshape(v.shape)


def inputs(rng, shape, dtype):
    """Magnitudes over many decades (half types' subnormals included), a zero group."""
    w = rng.standard_normal(shape) * 10.0 ** rng.uniform(-7, 3.5, shape[:-1] + (1,))
    w = round_as(w.astype(np.float32), dtype)
    w.reshape(-1, shape[-1])[0, :32] = 0
    return w


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_matches_reference(mode, dtype):
    rng = seeded_rng("fp", mode, dtype)
    w = inputs(rng, (3, 16, 64), dtype)
    wq, scales = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), mode=mode)
    assert wq.dtype == mx.uint32 and scales.dtype == mx.uint8
    packed, sc = ref_quantize_fp(w, mode, dtype)
    np.testing.assert_array_equal(np.array(scales), sc)
    np.testing.assert_array_equal(np.array(wq).view(np.uint8), packed)
    out = mx.dequantize(wq, scales, mode=mode)
    assert out.dtype == mx.bfloat16
    np.testing.assert_array_equal(to_np(out), round_as(values(packed, sc, mode), "bfloat16"))
    np.testing.assert_array_equal(
        np.array(mx.dequantize(wq, scales, mode=mode, dtype=mx.float32)), values(packed, sc, mode)
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_bit_exact_with_mlx(mode, dtype):
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("fp-mlx", mode, dtype)
    w = inputs(rng, (4, 8, 128), dtype)
    ours = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), mode=mode)
    theirs = mlx.quantize(mlx.array(w).astype(getattr(mlx, dtype)), mode=mode)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.array(a), np.array(b))
    for out in (None, "float32", "float16"):
        kw = {} if out is None else {"dtype": getattr(mx, out)}
        km = {} if out is None else {"dtype": getattr(mlx, out)}
        d = mx.dequantize(*ours, mode=mode, **kw)
        dm = mlx.dequantize(*theirs, mode=mode, **km)
        np.testing.assert_array_equal(to_np(d), np.array(dm.astype(mlx.float32)))


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_products(mode, transpose):
    rng = seeded_rng("fp-qmm", mode, transpose)
    wq, sc = mx.quantize(mx.array(rng.standard_normal((64, 128)).astype(np.float32)), mode=mode)
    wd = values(np.array(wq).view(np.uint8), np.array(sc), mode).astype(np.float64)
    x = rng.standard_normal((5, 128 if transpose else 64)).astype(np.float32)
    y = mx.quantized_matmul(mx.array(x), wq, sc, transpose=transpose, mode=mode)
    ref = x @ (wd.T if transpose else wd)
    np.testing.assert_allclose(np.array(y), ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())
    if not IS_MLX:  # rows independent, as every product's
        one = np.stack(
            [
                np.array(
                    mx.quantized_matmul(
                        mx.array(x[i : i + 1]), wq, sc, transpose=transpose, mode=mode
                    )
                )[0]
                for i in range(5)
            ]
        )
        np.testing.assert_array_equal(np.array(y), one)
    experts = mx.stack([wq, wq])
    scales = mx.stack([sc, sc])
    idx = mx.array(np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]], np.uint32))
    g = mx.gather_qmm(
        mx.array(x[:, None, None]), experts, scales, rhs_indices=idx, transpose=transpose, mode=mode
    )
    assert g.shape == (5, 2, 1, y.shape[-1])
    np.testing.assert_allclose(np.array(g)[:, 0, 0], ref, rtol=1e-5, atol=1e-4 * np.abs(ref).max())


def test_errors():
    w = mx.zeros((4, 64))
    wq, sc = mx.quantize(w, mode="mxfp4")
    for f in [
        lambda: mx.dequantize(wq, sc.astype(mx.float32), mode="mxfp4"),
        lambda: mx.quantized_matmul(mx.zeros((2, 64)), wq, sc.astype(mx.float32), mode="mxfp4"),
        lambda: mx.quantize(w, mode="mxfp8", group_size=16),
        lambda: mx.quantize(w, mode="nvfp4", bits=8),
        lambda: mx.quantize(w, mode="mxfp4", global_scale=mx.array(1.0)),
    ]:
        with pytest.raises(ValueError):
            f()
