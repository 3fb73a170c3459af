"""quantize / dequantize (affine mode) as MLX's, bit for bit: the packed words, scales and biases
for every bit width (1-6, 8), group size (32, 64, 128) and input dtype, with leading batch axes;
against a NumPy transcription of MLX's rule (always) and MLX itself (where installed). Errors as
MLX's (ValueError; nuvec raises OpError, a ValueError)."""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import round_to_bf16, seeded_rng, to_np

BITS = (1, 2, 3, 4, 5, 6, 8)
GROUPS = (32, 64, 128)
DTYPES = ("float32", "float16", "bfloat16")


def round_as(x, dtype):
    """float32 values rounded to `dtype` (float32, float16, bfloat16), as float32."""
    x = np.asarray(x, np.float32)
    if dtype == "float16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        return round_to_bf16(x)
    return x


def ref_quantize(w, group_size, bits):
    """MLX's affine rule in float32 (COMPAT.md "Affine quantization"; 1 bit keeps the minimum as
    the bias): packed uint32 words and the unrounded float32 scales and biases."""
    w = np.asarray(w, np.float32)
    g = w.reshape(-1, group_size)
    n = np.float32((1 << bits) - 1)
    w_max, w_min = g.max(-1), g.min(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if bits == 1:
            scale, bias = np.maximum(w_max - w_min, np.float32(1e-7)), w_min
        else:
            mask = np.abs(w_min) > np.abs(w_max)
            scale = np.maximum((w_max - w_min) / n, np.float32(1e-7))
            scale = np.where(mask, scale, -scale).astype(np.float32)
            edge = np.where(mask, w_min, w_max).astype(np.float32)
            q0 = np.rint(edge / scale)
            scale = np.where(q0 != 0, edge / np.where(q0 != 0, q0, 1), scale).astype(np.float32)
            bias = np.where(q0 != 0, edge, 0).astype(np.float32)
    q = np.clip(np.rint((g - bias[:, None]) / scale[:, None]), 0, n).astype(np.uint64)
    q = q.reshape(w.shape)
    stream = ((q[..., None] >> np.arange(bits, dtype=np.uint64)) & 1).astype(np.uint8)
    words = np.packbits(stream.reshape(w.shape[:-1] + (-1,)), axis=-1, bitorder="little")
    lead = w.shape[:-1] + (-1,)
    return words.view(np.uint32), scale.reshape(lead), bias.reshape(lead)


def ref_codes(words, bits, k):
    """The k codes of each row of packed words."""
    b = np.unpackbits(np.asarray(words).view(np.uint8), axis=-1, bitorder="little")
    b = b.reshape(words.shape[:-1] + (k, bits)).astype(np.uint32)
    return (b << np.arange(bits, dtype=np.uint32)).sum(-1).astype(np.float32)


def ref_dequantize(words, scales, biases, group_size, bits, dtype):
    """MLX's chain: round(round(q * scale) + bias) in `dtype`, each op in float32."""
    s, b = np.asarray(scales, np.float32), np.asarray(biases, np.float32)
    q = ref_codes(words, bits, s.shape[-1] * group_size)
    q = q.reshape(s.shape + (group_size,))
    out = round_as(round_as(q * s[..., None], dtype) + b[..., None], dtype)
    return out.reshape(q.shape[:-2] + (-1,))


def weights(rng, shape, dtype):
    """Row scales spread over decades, some groups constant, one-signed or zero."""
    w = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 2, shape[:-1] + (1,))
    w = w.astype(np.float32)
    flat = w.reshape(-1, shape[-1])
    flat[0, :32] = 0.0
    flat[1 % len(flat), :32] = 1.5
    flat[2 % len(flat), 32:64] = np.abs(flat[2 % len(flat), 32:64])
    flat[3 % len(flat), 32:64] = -np.abs(flat[3 % len(flat), 32:64])
    return round_as(w, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("group_size", GROUPS)
def test_quantize_matches_reference(dtype, bits, group_size):
    rng = seeded_rng("quantize", dtype, bits, group_size)
    w = weights(rng, (2, 3, 256), dtype)
    wq, scales, biases = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), group_size, bits)
    rw, rs, rb = ref_quantize(w, group_size, bits)
    assert wq.dtype == mx.uint32 and scales.dtype == getattr(mx, dtype) == biases.dtype
    assert wq.shape == (2, 3, 256 * bits // 32) and scales.shape == (2, 3, 256 // group_size)
    np.testing.assert_array_equal(np.array(wq), rw)
    np.testing.assert_array_equal(to_np(scales), round_as(rs, dtype))
    np.testing.assert_array_equal(to_np(biases), round_as(rb, dtype))
    got = mx.dequantize(wq, scales, biases, group_size, bits)
    assert got.dtype == getattr(mx, dtype)
    expect = ref_dequantize(rw, round_as(rs, dtype), round_as(rb, dtype), group_size, bits, dtype)
    np.testing.assert_array_equal(to_np(got), expect)
    # A sanity check beside the transcription: on average within a step of the input.
    err = np.abs(to_np(got).astype(np.float64) - w).reshape(-1, group_size).mean(-1)
    assert np.all(err <= np.abs(to_np(scales).astype(np.float64)).reshape(-1) + 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("group_size", GROUPS)
def test_quantize_bit_exact_with_mlx(dtype, bits, group_size):
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("quantize-mlx", dtype, bits, group_size)
    w = weights(rng, (3, 2, 384), dtype)
    ours = mx.quantize(mx.array(w).astype(getattr(mx, dtype)), group_size, bits)
    theirs = mlx.quantize(mlx.array(w).astype(getattr(mlx, dtype)), group_size, bits)
    for a, b in zip(ours, theirs):
        b = b.astype(mlx.float32) if b.dtype != mlx.uint32 else b
        np.testing.assert_array_equal(to_np(a), np.array(b))
    d_ours = mx.dequantize(*ours, group_size, bits)
    d_theirs = mlx.dequantize(*theirs, group_size, bits)
    np.testing.assert_array_equal(to_np(d_ours), np.array(d_theirs.astype(mlx.float32)))


def test_defaults_modes_and_dtypes():
    w = mx.array(np.linspace(-1, 2, 4 * 128, dtype=np.float32).reshape(4, 128))
    wq, s, b = mx.quantize(w)  # group 64, 4 bits
    assert wq.shape == (4, 16) and s.shape == (4, 2)
    out = mx.dequantize(wq, s, b, dtype=mx.float16)
    assert out.dtype == mx.float16
    np.testing.assert_array_equal(np.array(out), to_np(mx.dequantize(wq, s, b)).astype(np.float16))
    # Mixed scale and bias dtypes: q * scale in the scales' dtype, + bias promoted (MLX's chain).
    out = mx.dequantize(wq, s.astype(mx.float16), b)
    assert out.dtype == mx.float32
    q = ref_codes(np.array(wq), 4, 128).reshape(4, 2, 64)
    sh = to_np(s.astype(mx.float16)).astype(np.float32)[..., None]
    np.testing.assert_array_equal(
        np.array(out), (round_as(q * sh, "float16") + to_np(b)[..., None]).reshape(4, 128)
    )


@pytest.mark.skipif(IS_MLX, reason="MLX 0.32.4 returns garbage scales for float64 input")
def test_float64_input_quantizes_in_float32():
    rng = seeded_rng("f64")
    w = rng.standard_normal((2, 64))
    wq, s, b = mx.quantize(mx.array(w, dtype=mx.float64), 32, 4)
    assert s.dtype == mx.float64
    rw, rs, rb = ref_quantize(w.astype(np.float32), 32, 4)
    np.testing.assert_array_equal(np.array(wq), rw)
    np.testing.assert_array_equal(np.array(s), rs.astype(np.float64))


@pytest.mark.skipif(IS_MLX, reason="MLX 0.32.4 fails to reshape an empty input")
def test_empty_rows():
    wq, s, b = mx.quantize(mx.zeros((0, 64)))
    assert wq.shape == (0, 8) and s.shape == (0, 1)
    assert mx.dequantize(wq, s, b).shape == (0, 64)


def test_vmap_quantize_is_per_example():
    rng = seeded_rng("vmap")
    w = rng.standard_normal((3, 2, 64)).astype(np.float32)
    got = mx.vmap(lambda a: mx.quantize(a, 32, 3), in_axes=1)(mx.array(w.transpose(1, 0, 2)))
    for g, r in zip(got, mx.quantize(mx.array(w), 32, 3)):
        np.testing.assert_array_equal(np.array(g), np.array(r))


BAD_QUANTIZE = [
    (dict(bits=7), "bits"),
    (dict(bits=0), "bits"),
    (dict(bits=16), "bits"),
    (dict(group_size=16), "group size"),
    (dict(group_size=256), "group size"),
    (dict(mode="foo"), "mode"),
    (dict(mode="mxfp4", bits=8), "bits"),
    (dict(mode="mxfp4", group_size=64), "group size"),
    (dict(global_scale=mx.array(1.0)), "Global scale"),
]


@pytest.mark.parametrize("kw,msg", BAD_QUANTIZE)
def test_quantize_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        mx.quantize(mx.zeros((4, 128)), **kw)


@pytest.mark.parametrize(
    "w",
    [np.zeros(128, np.float32), np.zeros((4, 100), np.float32), np.zeros((4, 128), np.int32)],
    ids=["1-d", "not-divisible", "int"],
)
def test_quantize_bad_input(w):
    with pytest.raises(ValueError):
        mx.quantize(mx.array(w))


def test_dequantize_errors():
    wq, s, b = mx.quantize(mx.zeros((4, 128)))
    for args, kw in [
        ((wq, s, b), dict(bits=8)),
        ((wq, s[:, :1], b[:, :1]), {}),
        ((wq.astype(mx.int32), s, b), {}),
        ((wq[0], s[0], b[0]), {}),
        ((wq, s, b), dict(dtype=mx.int32)),
        ((wq, s), {}),
        ((wq[None], s, b), {}),
    ]:
        with pytest.raises(ValueError):
            mx.dequantize(*args, **kw)


def test_errors_match_mlx():
    mlx = pytest.importorskip("mlx.core")
    for kw, _ in BAD_QUANTIZE:
        kw = {k: (mlx.array(1.0) if k == "global_scale" else v) for k, v in kw.items()}
        with pytest.raises(ValueError):
            mlx.quantize(mlx.zeros((4, 128)), **kw)
