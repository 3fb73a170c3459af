"""Convolutions (conv1d/2d/3d, conv_general, conv_transpose1d/2d/3d): values against a float64
NumPy reference (tests/conv_reference.py) over a table of configurations, against mlx.core and
PyTorch where they import, dtypes, argument errors as MLX raises them, and bitwise-equal results
whatever the thread count."""

import hashlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import conv_reference as ref
from _impl import IS_MLX, mx

RNG = np.random.default_rng(12)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(got, want, tol=1e-4):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


# (input shape, weight shape, conv_general keyword arguments)
GENERAL = [
    ((2, 9, 4), (5, 3, 4), {}),
    ((2, 9, 4), (5, 3, 4), {"stride": 2, "padding": 1}),
    ((2, 9, 4), (6, 3, 2), {"groups": 2, "padding": ([2], [0])}),
    ((1, 12, 3), (4, 2, 3), {"kernel_dilation": 3, "input_dilation": 2, "flip": True}),
    ((2, 9, 4), (20, 3, 4), {"padding": -1}),
    ((2, 8, 8, 4), (6, 3, 3, 4), {"padding": 1}),
    ((2, 8, 8, 4), (6, 3, 3, 4), {"padding": 1, "stride": 2}),
    ((2, 8, 7, 4), (6, 3, 3, 2), {"padding": ([1, 0], [2, 1]), "groups": 2, "flip": True}),
    (
        (2, 9, 7, 4),
        (6, 2, 3, 4),
        {"kernel_dilation": (2, 1), "input_dilation": (1, 3), "stride": (1, 2)},
    ),
    ((3, 7, 7, 16), (40, 1, 1, 16), {}),
    ((2, 9, 9, 8), (8, 3, 3, 1), {"groups": 8, "padding": 1}),
    ((2, 9, 9, 8), (16, 3, 3, 1), {"groups": 8, "padding": 1, "stride": 2}),
    ((2, 10, 10, 8), (8, 3, 3, 1), {"groups": 8, "kernel_dilation": 2, "flip": True}),
    ((2, 6, 5, 3), (17, 2, 2, 3), {"padding": (1, 2), "stride": (2, 1)}),
    ((2, 5, 6, 4, 3), (4, 2, 3, 1, 3), {"padding": 1}),
    (
        (1, 6, 6, 6, 4),
        (6, 3, 3, 3, 2),
        {"groups": 2, "stride": 2, "padding": ([1, 0, 1], [0, 1, 1])},
    ),
    ((2, 7, 7, 33), (35, 3, 3, 33), {"padding": 1}),  # channels past one register panel
    ((2, 7, 6, 6), (2, 3, 3, 3), {"groups": 2, "padding": 1}),  # one output channel per group
    ((3, 9, 20), (1, 3, 20), {"stride": 2, "flip": True}),  # one output channel, 20 = 2 vectors + 4
]


def mlx_lacks(xs, kw):
    """MLX has no grouped 3-D convolutions (nuvec has)."""
    return len(xs) == 5 and kw.get("groups", 1) > 1


@pytest.mark.parametrize("xs,ws,kw", GENERAL)
def test_conv_general_matches_reference(xs, ws, kw):
    if IS_MLX and mlx_lacks(xs, kw):
        pytest.skip("MLX has no grouped 3-D convolutions")
    x, w = rand(*xs), rand(*ws)
    close(mx.conv_general(mx.array(x), mx.array(w), **kw), ref.conv_general(x, w, **kw))


@pytest.mark.parametrize("xs,ws,kw", GENERAL)
def test_conv_general_matches_mlx(xs, ws, kw):
    mlx = pytest.importorskip("mlx.core")
    if mlx_lacks(xs, kw):
        pytest.skip("MLX has no grouped 3-D convolutions")
    x, w = rand(*xs), rand(*ws)
    want = np.asarray(mlx.conv_general(mlx.array(x), mlx.array(w), **kw), np.float64)
    close(mx.conv_general(mx.array(x), mx.array(w), **kw), want)


# (dims, input shape, weight shape, keyword arguments) for conv1d/2d/3d.
ND = [
    (1, (2, 11, 3), (4, 3, 3), {"stride": 2, "padding": 1, "dilation": 2}),
    (1, (2, 11, 4), (4, 3, 2), {"groups": 2}),
    (2, (2, 9, 8, 3), (5, 3, 2, 3), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    (2, (2, 9, 9, 6), (6, 3, 3, 1), {"groups": 6, "padding": 1}),
    (3, (1, 5, 6, 7, 2), (3, 2, 3, 2, 2), {"stride": 2, "padding": 1}),
]


@pytest.mark.parametrize("dims,xs,ws,kw", ND)
def test_conv_nd(dims, xs, ws, kw):
    x, w = rand(*xs), rand(*ws)
    f = getattr(mx, f"conv{dims}d")
    general = {"stride": kw.get("stride", 1), "padding": kw.get("padding", 0)}
    general.update(kernel_dilation=kw.get("dilation", 1), groups=kw.get("groups", 1))
    close(f(mx.array(x), mx.array(w), **kw), ref.conv_general(x, w, **general))


def test_strided_views_as_input_and_weight():
    x, w = rand(2, 7, 6, 4), rand(5, 3, 2, 4)
    xv = mx.array(x)[:, ::-1, ::2]  # negative and doubled strides, contiguous channels
    wv = mx.swapaxes(mx.array(w.transpose(3, 1, 2, 0).copy()), 0, 3)  # a transposed weight
    want = ref.conv_general(x[:, ::-1, ::2], w, padding=1)
    close(mx.conv2d(xv, wv, padding=1), want)


def test_conv2d_positional_arguments():
    x, w = rand(2, 6, 6, 4), rand(4, 3, 3, 2)
    close(mx.conv2d(mx.array(x), mx.array(w), 2, 1, 1, 2), ref.conv_general(x, w, 2, 1, 1, 1, 2))


# (dims, input shape, weight shape, keyword arguments) for conv_transpose1d/2d/3d.
TRANSPOSED = [
    (1, (2, 7, 4), (5, 3, 4), {}),
    (1, (2, 7, 4), (5, 3, 4), {"stride": 2, "padding": 1, "output_padding": 1}),
    (1, (2, 8, 4), (6, 3, 4), {"dilation": 2, "padding": 3}),
    (1, (2, 6, 4), (6, 3, 2), {"groups": 2, "stride": 3}),
    (2, (2, 5, 6, 3), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    (2, (2, 5, 4, 4), (8, 3, 2, 2), {"groups": 2, "stride": (2, 3), "output_padding": (1, 0)}),
    (2, (2, 5, 5, 4), (4, 3, 3, 1), {"groups": 4, "dilation": 2}),
    (3, (1, 3, 4, 3, 2), (3, 2, 3, 2, 2), {"stride": 2, "padding": (0, 1, 0)}),
]


@pytest.mark.parametrize("dims,xs,ws,kw", TRANSPOSED)
def test_conv_transpose_matches_reference(dims, xs, ws, kw):
    x, w = rand(*xs), rand(*ws)
    f = getattr(mx, f"conv_transpose{dims}d")
    close(f(mx.array(x), mx.array(w), **kw), ref.conv_transpose(x, w, **kw))


@pytest.mark.parametrize("dims,xs,ws,kw", TRANSPOSED)
def test_conv_transpose_matches_mlx(dims, xs, ws, kw):
    mlx = pytest.importorskip("mlx.core")
    x, w = rand(*xs), rand(*ws)
    want = np.asarray(
        getattr(mlx, f"conv_transpose{dims}d")(mlx.array(x), mlx.array(w), **kw), np.float64
    )
    close(getattr(mx, f"conv_transpose{dims}d")(mx.array(x), mx.array(w), **kw), want)


def _torch_nchw(a):
    return np.moveaxis(a, -1, 1)


@pytest.mark.parametrize("dims,xs,ws,kw", [c for c in ND if "groups" not in c[3]] + [ND[3]])
def test_conv_matches_torch(dims, xs, ws, kw):
    torch = pytest.importorskip("torch")
    x, w = rand(*xs), rand(*ws)
    f = getattr(torch.nn.functional, f"conv{dims}d")
    want = f(torch.tensor(_torch_nchw(x)), torch.tensor(_torch_nchw(w)), **kw).numpy()
    got = np.asarray(getattr(mx, f"conv{dims}d")(mx.array(x), mx.array(w), **kw))
    close(_torch_nchw(got), want.astype(np.float64))


@pytest.mark.parametrize("dims,xs,ws,kw", TRANSPOSED)
def test_conv_transpose_matches_torch(dims, xs, ws, kw):
    torch = pytest.importorskip("torch")
    x, w = rand(*xs), rand(*ws)
    g = kw.get("groups", 1)
    # torch's weight: (C_in, C_out / groups, *kernel); MLX's: (C_out, *kernel, C_in / groups).
    cog, cig = ws[0] // g, ws[-1]
    tw = np.moveaxis(w.reshape((g, cog) + ws[1:]), -1, 1).reshape((g * cig, cog) + ws[1:-1])
    f = getattr(torch.nn.functional, f"conv_transpose{dims}d")
    want = f(torch.tensor(_torch_nchw(x)), torch.tensor(np.ascontiguousarray(tw)), **kw).numpy()
    got = np.asarray(getattr(mx, f"conv_transpose{dims}d")(mx.array(x), mx.array(w), **kw))
    close(_torch_nchw(got), want.astype(np.float64))


@pytest.mark.parametrize(
    "dx,dw,want",
    [
        ("float32", "float32", "float32"),
        ("float16", "float16", "float16"),
        ("bfloat16", "bfloat16", "bfloat16"),
        ("float16", "float32", "float32"),
        ("bfloat16", "float16", "float32"),
        ("float64", "float64", "float64"),
        ("float32", "int32", "float32"),  # an integer weight takes the input's type
        ("float16", "int64", "float16"),
    ],
)
def test_dtypes(dx, dw, want):
    if IS_MLX and "float64" in (dx, dw):
        pytest.skip("MLX computes float64 on the CPU stream only")
    x, w = rand(2, 6, 6, 8), rand(5, 3, 3, 8)
    y = mx.conv2d(
        mx.array(x).astype(getattr(mx, dx)), mx.array(w).astype(getattr(mx, dw)), padding=1
    )
    assert y.dtype == getattr(mx, want)
    xr = np.asarray(mx.array(x).astype(getattr(mx, dx)).astype(mx.float32))
    wr = np.asarray(mx.array(w).astype(getattr(mx, dw)).astype(mx.float32))
    tol = {"float16": 2e-3, "bfloat16": 1e-2}.get(want, 1e-5)
    close(y.astype(mx.float32), ref.conv_general(xr, wr, padding=1), tol)


def test_half_types_match_mlx():
    mlx = pytest.importorskip("mlx.core")
    x, w = rand(2, 7, 7, 8), rand(6, 3, 3, 8)
    for d in ("float16", "bfloat16"):
        got = mx.conv2d(
            mx.array(x).astype(getattr(mx, d)), mx.array(w).astype(getattr(mx, d)), padding=1
        )
        want = mlx.conv2d(
            mlx.array(x).astype(getattr(mlx, d)), mlx.array(w).astype(getattr(mlx, d)), padding=1
        )
        close(got.astype(mx.float32), np.asarray(want.astype(mlx.float32), np.float64), 1e-2)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


def _error_cases(m):
    x, w = m.ones((2, 8, 8, 4)), m.ones((6, 3, 3, 4))
    return [
        lambda: m.conv2d(x.astype(m.int32), w),
        lambda: m.conv2d(x.astype(m.bool_), w),
        lambda: m.conv2d(x.astype(m.complex64), w),
        lambda: m.conv2d(x, w, stride=0),
        lambda: m.conv2d(x, w, stride=-1),
        lambda: m.conv2d(x, w, dilation=0),
        lambda: m.conv2d(x, w, groups=3),
        lambda: m.conv2d(x, m.ones((5, 3, 3, 2)), groups=2),
        lambda: m.conv2d(x, m.ones((6, 3, 3, 3))),
        lambda: m.conv2d(x[0], w),
        lambda: m.conv2d(x, w[0]),
        lambda: m.conv2d(x, m.ones((6, 9, 9, 4))),
        lambda: m.conv2d(x, w, stride=(1, 2, 3)),
        lambda: m.conv2d(x, w, stride=2.0),
        lambda: m.conv1d(m.ones((2, 8, 4)), m.ones((6, 3, 4)), stride=(2,)),
        lambda: m.conv_general(x, w, padding=([1, 0, 1], [0, 1, 1])),
        lambda: m.conv_general(x, w, input_dilation=0),
        lambda: m.conv_general(x, w, stride=[1, 2, 3]),
        lambda: m.conv_general(m.ones((2, 8, 4)), m.ones((3, 3, 4)), padding=(1, 2)),
        lambda: m.conv_general(m.ones((2, 4)), m.ones((3, 4))),
        lambda: m.conv_general(m.ones((2, 3, 3, 3, 3, 4)), m.ones((3, 1, 1, 1, 1, 4))),
        lambda: m.conv_transpose2d(x, w, dilation=0),
        lambda: m.conv_transpose2d(x, w, stride=0),
        lambda: m.conv_transpose1d(m.ones((2, 2, 4)), m.ones((6, 3, 4)), padding=3),
    ]


def test_errors_raise_as_mlx():
    mlx = pytest.importorskip("mlx.core")
    for i, (ours, theirs) in enumerate(zip(_error_cases(mx), _error_cases(mlx))):
        want = _error(theirs)
        assert want is not None, i
        got = _error(ours)
        assert got is not None and issubclass(got, want), (i, got, want)


def test_errors_name_the_problem():
    x, w = mx.ones((2, 8, 8, 4)), mx.ones((6, 3, 3, 3))
    with pytest.raises(ValueError, match="input channels"):
        mx.conv2d(x, w)
    with pytest.raises(ValueError, match="divisible"):
        mx.conv2d(x, mx.ones((6, 3, 3, 4)), groups=3)
    with pytest.raises(ValueError, match="positive"):
        mx.conv2d(x, mx.ones((6, 3, 3, 4)), stride=0)
    with pytest.raises(ValueError, match="floating point"):
        mx.conv2d(x.astype(mx.int32), mx.ones((6, 3, 3, 4)))


@pytest.mark.skipif(IS_MLX, reason="MLX raises a floating point exception on groups=0")
def test_zero_groups():
    with pytest.raises(ValueError, match="groups"):
        mx.conv2d(mx.ones((2, 8, 8, 4)), mx.ones((6, 3, 3, 4)), groups=0)


def test_empty_batch_and_channels():
    y = mx.conv2d(mx.zeros((0, 8, 8, 4)), mx.ones((6, 3, 3, 4)))
    assert y.shape == (0, 6, 6, 6)
    if not IS_MLX:  # MLX's CPU kernels fail on these
        assert mx.conv2d(mx.ones((2, 8, 8, 4)), mx.zeros((0, 3, 3, 4))).shape == (2, 6, 6, 0)
        z = mx.conv2d(mx.ones((2, 8, 8, 0)), mx.zeros((6, 3, 3, 0)))
        assert z.shape == (2, 6, 6, 6) and not np.asarray(z).any()


def _digest(threads, cases):
    mx.set_num_threads(threads)
    out = []
    for xs, ws, kw in cases:
        r = np.random.default_rng(3)
        x, w = r.standard_normal(xs).astype(np.float32), r.standard_normal(ws).astype(np.float32)
        y = mx.conv_general(mx.array(x), mx.array(w), **kw)
        gx, gw = mx.grad(lambda a, b: mx.sum(mx.conv_general(a, b, **kw) * y), argnums=(0, 1))(
            mx.array(x), mx.array(w)
        )
        out.append(
            hashlib.sha256(b"".join(np.asarray(a).tobytes() for a in (y, gx, gw))).hexdigest()
        )
    return out


@pytest.mark.skipif(IS_MLX, reason="nuvec's promise (MLX has no set_num_threads)")
def test_same_bits_whatever_the_thread_count():
    cases = [
        ((16, 20, 20, 32), (64, 3, 3, 32), {"padding": 1}),
        ((8, 17, 17, 24), (40, 3, 3, 24), {"stride": 2, "padding": 1}),
        ((8, 20, 20, 32), (32, 3, 3, 1), {"groups": 32, "padding": 1}),
        ((16, 64, 24), (48, 5, 24), {"padding": 2}),
        ((8, 20, 20, 36), (1, 3, 3, 36), {"padding": 1}),
    ]
    before = mx.get_num_threads()
    try:
        one = _digest(1, cases)
        for n in (2, 3):
            assert _digest(n, cases) == one
    finally:
        mx.set_num_threads(before)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_output_same_bits_as_its_parts(dtype):
    # nuvec writes outputs over 8 MB around the caches, and batch slices of one through the cache.
    if IS_MLX and dtype == "float64":
        pytest.skip("MLX has no float64 convolution")
    r = np.random.default_rng(5)
    x = r.standard_normal((48, 28, 28, 32)).astype(dtype)
    w = r.standard_normal((64, 3, 3, 32)).astype(dtype)
    X, W = mx.array(x, dtype=getattr(mx, dtype)), mx.array(w, dtype=getattr(mx, dtype))
    whole = np.asarray(mx.conv2d(X, W, padding=1))
    parts = [np.asarray(mx.conv2d(X[i : i + 12], W, padding=1)) for i in range(0, 48, 12)]
    assert whole.nbytes > 8 << 20 > parts[0].nbytes
    assert whole.tobytes() == np.concatenate(parts).tobytes()
    close(whole[:2], ref.conv_general(x[:2].astype(np.float64), w.astype(np.float64), padding=1))


@st.composite
def configs(draw):
    dims = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cig, cog = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = [draw(st.integers(1, 3)) for _ in range(dims)]
    kd = [draw(st.integers(1, 2)) for _ in range(dims)]
    idil = [draw(st.integers(1, 2)) for _ in range(dims)]
    lo = [draw(st.integers(-1, 2)) for _ in range(dims)]
    hi = [draw(st.integers(-1, 2)) for _ in range(dims)]
    spatial = []
    for i in range(dims):
        need = (k[i] - 1) * kd[i] + 1 - lo[i] - hi[i]  # dilated size the kernel needs
        spatial.append(max(1, -(-(need - 1) // idil[i]) + 1) + draw(st.integers(0, 3)))
    stride = [draw(st.integers(1, 3)) for _ in range(dims)]
    xs = (draw(st.integers(1, 2)), *spatial, groups * cig)
    ws = (groups * cog, *k, cig)
    kw = {"stride": stride, "padding": (lo, hi), "kernel_dilation": kd, "input_dilation": idil}
    return xs, ws, dict(kw, groups=groups, flip=draw(st.booleans()))


@given(configs())
def test_conv_general_random_configurations(cfg):
    xs, ws, kw = cfg
    if IS_MLX and mlx_lacks(xs, kw):
        return
    x, w = rand(*xs), rand(*ws)
    close(mx.conv_general(mx.array(x), mx.array(w), **kw), ref.conv_general(x, w, **kw))
