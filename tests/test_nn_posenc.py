"""nn positional encodings (RoPE, SinusoidalPositionalEncoding, ALiBi) against float64 NumPy
references and mlx.nn / mx.fast.rope."""

import math

import numpy as np
import pytest

from _impl import mx
from nn_layer_helpers import (
    assert_close,
    assert_repr_as_mlx,
    check_grad,
    layers,
    mlx_layers,
    raises_layer_error,
    rand,
)

pe = layers("positional_encoding")


def ref_rope(x, dims, traditional, base, scale, offset):
    """Rotation of each feature pair by (offset + position) * scale * base^(-2i / dims).

    ``offset`` is an int or one int per batch entry."""
    x = x.astype(np.float64)
    out = x.copy()
    length = x.shape[-2]
    off = np.asarray(offset, dtype=np.float64).reshape((-1,) + (1,) * (x.ndim - 1))
    pos = (off + np.arange(length).reshape(length, 1)) * scale  # broadcasts to x[..., :1]
    for i in range(dims // 2):
        a, b = (2 * i, 2 * i + 1) if traditional else (i, i + dims // 2)
        theta = pos[..., 0] * base ** (-2 * i / dims)
        c, s = np.cos(theta), np.sin(theta)
        out[..., a] = x[..., a] * c - x[..., b] * s
        out[..., b] = x[..., a] * s + x[..., b] * c
    return out


# (input shape, dims, traditional, base, scale, offset)
ROPE_CASES = [
    ((2, 5, 8), 8, False, 10000, 1.0, 0),
    ((2, 5, 8), 8, True, 10000, 1.0, 0),
    ((2, 3, 6, 16), 8, False, 10000, 1.0, 7),
    ((2, 3, 6, 16), 10, True, 500.0, 0.5, 3),
    ((1, 4, 12), 12, False, 1e6, 2.0, 100),
    ((3, 2, 4, 6), 4, True, 10000, 1.0, [0, 5, 9]),
    ((3, 4, 6), 6, False, 10000, 0.25, [2, 0, 11]),
]
ROPE_IDS = [f"{'trad' if c[2] else 'half'}-{c[0]}-{c[1]}" for c in ROPE_CASES]


def offset_arg(offset):
    return mx.array(offset) if isinstance(offset, list) else offset


@pytest.mark.parametrize("shape,dims,trad,base,scale,offset", ROPE_CASES, ids=ROPE_IDS)
def test_rope_against_numpy(shape, dims, trad, base, scale, offset):
    x = rand(shape)
    out = pe.RoPE(dims, traditional=trad, base=base, scale=scale)(mx.array(x), offset_arg(offset))
    assert out.shape == shape and out.dtype == mx.float32
    assert_close(out, ref_rope(x, dims, trad, base, scale, offset), rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("shape,dims,trad,base,scale,offset", ROPE_CASES, ids=ROPE_IDS)
def test_rope_against_mlx(shape, dims, trad, base, scale, offset):
    import_mlx = mlx_layers("positional_encoding")
    import mlx.core

    x = rand(shape, seed=1)
    theirs = import_mlx.RoPE(dims, traditional=trad, base=base, scale=scale)
    off = mlx.core.array(offset) if isinstance(offset, list) else offset
    want = np.asarray(theirs(mlx.core.array(x), offset=off))
    got = pe.RoPE(dims, traditional=trad, base=base, scale=scale)(mx.array(x), offset_arg(offset))
    # float32 rounding of the angle (its ulp grows with the position) bounds the difference
    max_angle = (np.max(offset) + shape[-2]) * scale
    assert_close(got, want, rtol=1e-6, atol=1e-6 + 2.4e-7 * max_angle)


def test_rope_scalar_array_offset_and_low_precision():
    x = rand((2, 3, 4, 8))
    layer = pe.RoPE(8)
    assert_close(layer(mx.array(x), mx.array(4)), ref_rope(x, 8, False, 10000, 1.0, 4), 1e-5, 2e-5)
    for dt in (mx.float16, mx.bfloat16):
        xs = mx.array(x).astype(dt)
        out = layer(xs, 4)
        assert out.dtype == dt
        ref = ref_rope(np.asarray(xs.astype(mx.float32)), 8, False, 10000, 1.0, 4)
        assert_close(out.astype(mx.float32), ref, rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("trad", [False, True])
def test_rope_grad(trad):
    check_grad(
        lambda a: pe.RoPE(6, traditional=trad)(a, 2),
        lambda a: ref_rope(a, 6, trad, 10000, 1.0, 2),
        rand((2, 3, 8), seed=3),
    )


@pytest.mark.parametrize(
    "shape,dims,offset",
    [
        ((4, 8), 8, 0),  # fewer than 3 dimensions
        ((2, 4, 8), 7, 0),  # odd dims
        ((2, 4, 8), 10, 0),  # more dims than features
        ((2, 4, 8), 8, [1, 2, 3]),  # offset vector of the wrong length
        ((2, 4, 8), 8, 1.5),  # float offset array
    ],
)
def test_rope_errors(shape, dims, offset):
    off = mx.array(offset) if isinstance(offset, (list, float)) else offset
    with pytest.raises(ValueError):
        mx.eval(pe.RoPE(dims)(mx.zeros(shape), off))


def test_rope_rejects_integer_input():
    with pytest.raises(ValueError):
        pe.RoPE(4)(mx.zeros((1, 2, 4), dtype=mx.int32))


# ---- sinusoidal ----


def ref_sinusoidal(
    x, dims, min_freq=1e-4, max_freq=1.0, scale=None, cos_first=False, full_turns=False
):
    half = dims // 2
    ramp = np.ones(1) if half == 1 else 1 - np.arange(half) / (half - 1)
    freqs = min_freq * (max_freq / min_freq) ** ramp
    if full_turns:
        freqs = freqs * 2 * math.pi
    y = x.astype(np.float64)[..., None] * freqs
    parts = [np.cos(y), np.sin(y)] if cos_first else [np.sin(y), np.cos(y)]
    return np.concatenate(parts, axis=-1) * (math.sqrt(2 / dims) if scale is None else scale)


SIN_CASES = [
    (8, {}),
    (2, {}),
    (16, {"min_freq": 1e-3, "max_freq": 0.5}),
    (6, {"scale": 1.0, "cos_first": True}),
    (10, {"scale": 3.0, "full_turns": True}),
]


@pytest.mark.parametrize("dims,kwargs", SIN_CASES)
def test_sinusoidal_against_numpy_and_mlx(dims, kwargs):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.7
    layer = pe.SinusoidalPositionalEncoding(dims, **kwargs)
    assert layer.parameters() == {}
    out = layer(mx.array(x))
    assert out.shape == (3, 4, dims)
    assert_close(out, ref_sinusoidal(x, dims, **kwargs), rtol=1e-5, atol=1e-5)
    theirs = mlx_layers("positional_encoding").SinusoidalPositionalEncoding(dims, **kwargs)
    import mlx.core

    # angles reach ~50 rad: a float32 ulp of the angle times the scale bounds the difference
    assert_close(out, np.asarray(theirs(mlx.core.array(x))), rtol=1e-6, atol=1e-5)


def test_sinusoidal_grad():
    check_grad(pe.SinusoidalPositionalEncoding(6), lambda a: ref_sinusoidal(a, 6), rand((2, 3)))


@pytest.mark.parametrize("dims", [0, -2, 5])
def test_sinusoidal_bad_dims(dims):
    with pytest.raises(ValueError):
        pe.SinusoidalPositionalEncoding(dims)


# ---- ALiBi ----


def ref_alibi_slopes(n):
    """Powers of 2^(-8/n) for a power-of-two n; otherwise those of the power of two below,
    then every other slope of the power of two above."""
    p = 2 ** int(math.floor(math.log2(n)))
    slopes = [2 ** (-8 * (i + 1) / p) for i in range(p)]
    if p < n:
        slopes += [2 ** (-8 * (i + 1) / (2 * p)) for i in range(0, 2 * p, 2)][: n - p]
    return np.array(slopes)


@pytest.mark.parametrize("heads", [1, 3, 4, 6, 8, 12])
def test_alibi_slopes(heads):
    slopes = pe.ALiBi.create_alibi_slope(heads)
    assert slopes.shape == (heads, 1, 1) and slopes.dtype == mx.float32
    assert_close(slopes.reshape(-1), ref_alibi_slopes(heads), rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    "heads,lq,lk,offset,with_mask", [(4, 5, 5, 0, False), (6, 3, 7, 4, True), (3, 1, 9, 8, False)]
)
def test_alibi_against_numpy_and_mlx(heads, lq, lk, offset, with_mask):
    scores = rand((2, heads, lq, lk))
    mask = rand((lq, lk), seed=5) if with_mask else None
    out = pe.ALiBi()(mx.array(scores), offset=offset, mask=None if mask is None else mx.array(mask))
    q = np.arange(offset, offset + lq)[:, None]
    k = np.arange(lk)[None, :]
    want = (
        scores
        - np.abs(q - k) * ref_alibi_slopes(heads)[:, None, None]
        + (0 if mask is None else mask)
    )
    assert_close(out, want, rtol=1e-5, atol=1e-5)
    import_mlx = mlx_layers("positional_encoding")
    import mlx.core

    theirs = import_mlx.ALiBi()(
        mlx.core.array(scores), offset=offset, mask=None if mask is None else mlx.core.array(mask)
    )
    assert_close(out, np.asarray(theirs), rtol=1e-6, atol=1e-6)


def test_alibi_matrix_dtype_and_shape():
    m = pe.ALiBi.create_alibi_matrix(6, 8, 4, offset=2, dtype=mx.float16)
    assert m.shape == (1, 4, 4, 8) and m.dtype == mx.float16
    s = pe.ALiBi()(mx.zeros((1, 4, 4, 8), dtype=mx.bfloat16), offset=2)
    assert s.dtype == mx.bfloat16


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("RoPE", (8,), {"traditional": True}),
        ("SinusoidalPositionalEncoding", (8,), {}),
        ("ALiBi", (), {}),
    ],
)
def test_repr_as_mlx(name, args, kwargs):
    assert_repr_as_mlx("positional_encoding", name, args, kwargs)


@pytest.mark.nuvec_only
def test_alibi_needs_heads_queries_keys():
    with raises_layer_error("ALiBi"):
        pe.ALiBi()(mx.zeros((4, 4)))
