"""nuvec.fft against NumPy's float64 transforms (always) and MLX's mx.fft (where installed): values,
shapes, dtypes, n / s / axes / norm arguments, strided and batched inputs, errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nuvec as mx

NORMS = ("backward", "ortho", "forward")
rng = np.random.default_rng(17)


def crandn(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def rel_err(got, want):
    got = np.asarray(got)
    return (
        float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)) if want.size else 0.0
    )


def check(got, want, n):
    # float32 round-off grows like log n: NumPy/pocketfft's own float32 error is ~1e-7 * log2 n.
    assert np.asarray(got).shape == want.shape
    assert rel_err(got, want) < 2e-7 * (2 + math.log2(max(n, 2)))


LENGTHS = [
    *range(1, 65),
    97,
    101,
    360,
    1000,
    1009,
    4096,
    4096 * 3,
    15015,
    16411,
    59049,
    1 << 15,
    1 << 17,
    1 << 20,
]


@pytest.mark.parametrize("n", LENGTHS)
def test_lengths_all_kinds(n):
    batch = 3 if n < 1 << 14 else 1
    x = crandn(batch, n)
    x64 = x.astype(np.complex128)
    check(mx.fft.fft(mx.array(x)), np.fft.fft(x64), n)
    check(mx.fft.ifft(mx.array(x)), np.fft.ifft(x64), n)
    r = x.real.copy()
    check(mx.fft.rfft(mx.array(r)), np.fft.rfft(r.astype(np.float64)), n)
    c = x[:, : n // 2 + 1].copy()
    check(mx.fft.irfft(mx.array(c), n=n), np.fft.irfft(c.astype(np.complex128), n), n)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("n", [None, 5, 8, 13, 24])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_axis_n_norm(name, n, axis, norm):
    x = crandn(12, 10, 3)
    if name == "rfft":
        x = x.real.copy()
    got = getattr(mx.fft, name)(mx.array(x), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(
        x.astype(np.complex128 if x.dtype == np.complex64 else np.float64), n, axis, norm
    )
    check(got, want, n or x.shape[axis])
    assert got.dtype == (mx.float32 if name == "irfft" else mx.complex64)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "name,s,axes",
    [
        ("fft2", None, (-2, -1)),
        ("fft2", (5, 7), (0, 2)),
        ("ifft2", (4, 6), (1, 2)),
        ("fftn", None, None),
        ("fftn", (3, 8, 5), (0, 1, 2)),
        ("ifftn", None, (2, 0)),
        ("rfft2", None, (-2, -1)),
        ("rfft2", (6, 9), (2, 0)),
        ("rfftn", None, None),
        ("rfftn", (4, 5), (0, 1)),
        ("irfft2", None, (-2, -1)),
        ("irfft2", (6, 9), (1, 0)),
        ("irfftn", None, None),
        ("irfftn", (4, 7, 6), (0, 1, 2)),
    ],
)
def test_many_axes(name, s, axes, norm):
    x = crandn(6, 7, 10)
    if name.startswith("rfft"):
        x = x.real.copy()
    kw = {} if axes is None else {"axes": axes}
    got = getattr(mx.fft, name)(mx.array(x), s=s, norm=norm, **kw)
    ref = x.astype(np.complex128 if x.dtype == np.complex64 else np.float64)
    want = getattr(np.fft, name)(ref, s=s, norm=norm, **kw)
    check(got, want, x.size)


def test_strided_and_broadcast_inputs():
    x = crandn(16, 24)
    xs = mx.array(x)[::2, 1::3]  # a strided view
    check(mx.fft.fft(xs), np.fft.fft(x[::2, 1::3].astype(np.complex128)), 8)
    check(mx.fft.fft(mx.array(x).T, axis=0), np.fft.fft(x.T.astype(np.complex128), axis=0), 16)
    b = mx.broadcast_to(mx.array(x[0].real), (5, 24))
    check(mx.fft.rfft(b), np.fft.rfft(np.broadcast_to(x[0].real.astype(np.float64), (5, 24))), 24)


@pytest.mark.parametrize(
    "shape,axis", [((64, 1000), 0), ((3, 1024, 9), 1), ((4096, 3), 0), ((2, 5, 2048), 1)]
)
def test_non_last_axes_and_batches(shape, axis):
    x = crandn(*shape)
    check(
        mx.fft.fft(mx.array(x), axis=axis),
        np.fft.fft(x.astype(np.complex128), axis=axis),
        shape[axis],
    )
    r = x.real.copy()
    check(
        mx.fft.rfft(mx.array(r), axis=axis),
        np.fft.rfft(r.astype(np.float64), axis=axis),
        shape[axis],
    )


def test_long_transform_along_other_axis():
    x = crandn(1 << 15, 2)  # four-step lengths on a strided axis
    check(mx.fft.fft(mx.array(x), axis=0), np.fft.fft(x.astype(np.complex128), axis=0), 1 << 15)
    c = x[: (1 << 14) + 1]
    check(mx.fft.irfft(mx.array(c), axis=0), np.fft.irfft(c.astype(np.complex128), axis=0), 1 << 15)
    y = crandn(59049, 2)  # odd four-step lengths, real both ways
    check(
        mx.fft.rfft(mx.array(y.real), axis=0), np.fft.rfft(y.real.astype(np.float64), axis=0), 59049
    )
    d = y[:29525]
    check(
        mx.fft.irfft(mx.array(d), n=59049, axis=0),
        np.fft.irfft(d.astype(np.complex128), 59049, axis=0),
        59049,
    )


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), batch=st.integers(1, 11), m=st.integers(1, 3000))
def test_hypothesis_lengths(n, batch, m):
    x = crandn(batch, n)
    check(mx.fft.fft(mx.array(x), n=m), np.fft.fft(x.astype(np.complex128), m), m)
    check(mx.fft.irfft(mx.array(x), n=m), np.fft.irfft(x.astype(np.complex128), m), m)
    check(mx.fft.rfft(mx.array(x.real)), np.fft.rfft(x.real.astype(np.float64)), n)


@pytest.mark.parametrize(
    "dtype,want",
    [
        (mx.float64, mx.complex64),
        (mx.int32, mx.complex64),
        (mx.bool_, mx.complex64),
        (mx.float16, mx.complex64),
    ],
)
def test_input_dtypes(dtype, want):
    x = mx.arange(8).astype(dtype)
    ref = np.asarray(x.astype(mx.float32)).astype(np.float64)
    for name in ("fft", "rfft"):
        y = getattr(mx.fft, name)(x)
        assert y.dtype == want
        np.testing.assert_allclose(np.asarray(y), getattr(np.fft, name)(ref), atol=1e-4)
    assert mx.fft.irfft(x).dtype == mx.float32


def test_rfft_of_complex_takes_the_real_part_and_irfft_ignores_edge_imaginaries():
    x = crandn(2, 9)
    check(mx.fft.rfft(mx.array(x)), np.fft.rfft(x.real.astype(np.float64)), 9)
    check(mx.fft.irfft(mx.array(x), 16), np.fft.irfft(x.astype(np.complex128), 16), 16)


def test_empty_and_no_axes():
    y = mx.fft.fft(mx.zeros((0, 4)), axis=1)
    assert y.shape == (0, 4) and y.dtype == mx.complex64
    a = mx.arange(6).reshape(2, 3)
    assert mx.fft.fftn(a, axes=[]).dtype == mx.int32
    assert mx.fft.rfftn(a, axes=[]).dtype == mx.int32
    with pytest.raises(ValueError):
        mx.fft.fftn(mx.array(1.0))


@pytest.mark.parametrize(
    "call,exc",
    [
        (lambda x: mx.fft.fft(x, n=0), ValueError),
        (lambda x: mx.fft.fft(x, n=-3), ValueError),
        (lambda x: mx.fft.fft(x, axis=2), IndexError),
        (lambda x: mx.fft.fftn(x, axes=[0, 0]), ValueError),
        (lambda x: mx.fft.fftn(x, axes=[1, -1]), ValueError),
        (lambda x: mx.fft.fftn(x, s=[4], axes=[0, 1]), ValueError),
        (lambda x: mx.fft.fftn(x, s=[3, 5]), ValueError),
        (lambda x: mx.fft.fftn(x, s=[3, 5], axes=[0, 7]), IndexError),
        (lambda x: mx.fft.fft(x, norm="bad"), ValueError),
        (lambda x: mx.fft.fft(mx.array(1.0)), IndexError),
        (lambda x: mx.fft.fft(mx.zeros((0,))), ValueError),
        (lambda x: mx.fft.irfft(x[:, :1]), ValueError),
        (lambda x: mx.fft.fft2(x[0]), IndexError),
        (lambda x: mx.fft.fftshift(x, axes=3), IndexError),
        (lambda x: mx.fft.fftfreq(0), ValueError),
    ],
)
def test_errors(call, exc):
    x = mx.ones((2, 4), dtype=mx.complex64)
    with pytest.raises(exc):
        mx.eval(call(x))
    mlx = pytest.importorskip("mlx.core")
    with pytest.raises(exc):
        mlx.eval(call.__code__ and _mlx_call(call, mlx, mlx.ones((2, 4), dtype=mlx.complex64)))


def _mlx_call(call, mlx, x):
    # The same lambda on mlx.core: rebind its global `mx` to MLX.
    g = dict(call.__globals__, mx=mlx)
    return type(call)(call.__code__, g)(x)


@pytest.mark.parametrize("axes", [None, 0, 1, [0], (1, 0), [-1]])
@pytest.mark.parametrize("inverse", [False, True])
def test_shift(axes, inverse):
    x = np.arange(35.0).reshape(5, 7)
    f = mx.fft.ifftshift if inverse else mx.fft.fftshift
    g = np.fft.ifftshift if inverse else np.fft.fftshift
    np.testing.assert_array_equal(np.asarray(f(mx.array(x), axes=axes)), g(x, axes=axes))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 11])
@pytest.mark.parametrize("d", [1.0, 0.1, 2.5])
def test_freq(n, d):
    np.testing.assert_allclose(np.asarray(mx.fft.fftfreq(n, d)), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(mx.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d), rtol=1e-6)
    assert mx.fft.fftfreq(n, d).dtype == mx.float32


# ---- MLX differential tests: the same call on mlx.core.fft and nuvec.fft.

MLX_CASES = [
    ("fft", {"n": 12, "axis": 0}),
    ("ifft", {"norm": "ortho"}),
    ("rfft", {"n": 9, "norm": "forward"}),
    ("irfft", {"n": 7}),
    ("irfft", {}),
    ("fft2", {"s": (3, 4)}),
    ("ifft2", {"axes": (0, 1), "norm": "forward"}),
    ("fftn", {}),
    ("ifftn", {"s": (4, 6), "axes": (2, 1)}),
    ("rfft2", {}),
    ("irfft2", {"s": (5, 6)}),
    ("rfftn", {"axes": (0, 2), "norm": "ortho"}),
    ("irfftn", {}),
    ("fftshift", {"axes": (0, 2)}),
    ("ifftshift", {}),
]


@pytest.mark.parametrize("name,kw", MLX_CASES)
@pytest.mark.parametrize("real", [False, True])
def test_matches_mlx(name, kw, real):
    mlx = pytest.importorskip("mlx.core")
    x = crandn(4, 5, 8)
    if real:
        x = x.real.copy()
    ours = getattr(mx.fft, name)(mx.array(x), **kw)
    theirs = getattr(mlx.fft, name)(mlx.array(x), **kw, stream=mlx.cpu)
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(ours), np.array(theirs), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("n,d", [(5, 0.1), (8, 1.0), (7, 3.0)])
def test_freq_matches_mlx(n, d):
    mlx = pytest.importorskip("mlx.core")
    np.testing.assert_array_equal(np.asarray(mx.fft.fftfreq(n, d)), np.array(mlx.fft.fftfreq(n, d)))
    np.testing.assert_array_equal(
        np.asarray(mx.fft.rfftfreq(n, d)), np.array(mlx.fft.rfftfreq(n, d))
    )
