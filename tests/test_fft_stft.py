"""nuvec.fft.stft / istft: against a NumPy float64 framing of the same definition (always) and
against MLX's mx.fft.stft / istft (where installed), round trips, errors."""

import numpy as np
import pytest

import nuvec as mx

rng = np.random.default_rng(3)


def stft_ref(
    x,
    n_fft,
    hop=None,
    win=None,
    window=None,
    center=True,
    pad_mode="reflect",
    norm="backward",
    onesided=None,
):
    hop = hop or n_fft // 4
    w = np.ones(win or n_fft) if window is None else np.asarray(window, np.float64)
    left = (n_fft - len(w)) // 2
    w = np.pad(w, (left, n_fft - len(w) - left))
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=pad_mode)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., i * hop : i * hop + n_fft] * w for i in range(n_frames)], axis=-2)
    onesided = not np.iscomplexobj(x) if onesided is None else onesided
    y = (
        np.fft.rfft(frames.real, axis=-1, norm=norm)
        if onesided
        else np.fft.fft(frames, axis=-1, norm=norm)
    )
    return np.swapaxes(y, -1, -2)


STFT_CASES = [
    ((64,), {"n_fft": 16}),
    ((64,), {"n_fft": 16, "hop_length": 5, "center": False}),
    (
        (2, 40),
        {"n_fft": 8, "hop_length": 2, "window": [1.0, 2.0, 3.0, 2.0], "pad_mode": "constant"},
    ),
    ((50,), {"n_fft": 12, "win_length": 9, "pad_mode": "edge", "norm": "ortho"}),
    ((3, 60), {"n_fft": 8, "onesided": False, "norm": "forward"}),
    ((61,), {"n_fft": 7, "hop_length": 3}),
]


def _ref_kwargs(kw):
    return {
        "n_fft": kw["n_fft"],
        "hop": kw.get("hop_length"),
        "win": kw.get("win_length"),
        "window": kw.get("window"),
        "center": kw.get("center", True),
        "pad_mode": kw.get("pad_mode", "reflect"),
        "norm": kw.get("norm", "backward"),
        "onesided": kw.get("onesided"),
    }


def _with_window(kw, m):
    kw = dict(kw)
    if "window" in kw:
        kw["window"] = m.array(np.asarray(kw["window"], np.float32))
    return kw


@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("shape,kw", STFT_CASES)
def test_stft_against_numpy(shape, kw, complex_input):
    x = rng.standard_normal(shape)
    if complex_input:
        x = x + 1j * rng.standard_normal(shape)
    x = x.astype(np.complex64 if complex_input else np.float32)
    got = mx.fft.stft(mx.array(x), **_with_window(kw, mx))
    want = stft_ref(x.astype(np.complex128 if complex_input else np.float64), **_ref_kwargs(kw))
    assert got.shape == want.shape and got.dtype == mx.complex64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("complex_input", [False, True])
@pytest.mark.parametrize("shape,kw", STFT_CASES)
def test_stft_and_istft_match_mlx(shape, kw, complex_input):
    mlx = pytest.importorskip("mlx.core")
    x = rng.standard_normal(shape).astype(np.float32)
    if complex_input:
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    ours = mx.fft.stft(mx.array(x), **_with_window(kw, mx))
    theirs = mlx.fft.stft(mlx.array(x), **_with_window(kw, mlx), stream=mlx.cpu)
    np.testing.assert_allclose(np.asarray(ours), np.array(theirs), rtol=1e-5, atol=1e-5)
    ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
    for length in (None, 20, shape[-1] + 9):
        a = mx.fft.istft(ours, **_with_window(ikw, mx), length=length)
        b = mlx.fft.istft(theirs, **_with_window(ikw, mlx), length=length, stream=mlx.cpu)
        assert a.shape == tuple(b.shape) and a.dtype == mx.float32
        np.testing.assert_allclose(np.asarray(a), np.array(b), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n_fft,hop", [(16, 4), (15, 5), (32, 8)])
def test_istft_inverts_stft(n_fft, hop):
    x = rng.standard_normal((2, 100)).astype(np.float32)
    w = np.hanning(n_fft + 2)[1:-1].astype(np.float32)
    s = mx.fft.stft(mx.array(x), n_fft=n_fft, hop_length=hop, window=mx.array(w))
    y = mx.fft.istft(s, n_fft=n_fft, hop_length=hop, window=mx.array(w), length=100)
    np.testing.assert_allclose(np.asarray(y), x, rtol=1e-4, atol=1e-4)


def test_stft_grad_and_vmap():
    x = mx.array(rng.standard_normal((3, 40)).astype(np.float32))

    def f(a):
        return mx.real(mx.fft.stft(a, n_fft=8, hop_length=2)).sum()

    g = mx.grad(f)(x[0])
    eps, x0 = 1e-2, np.asarray(x[0]).astype(np.float64)
    num = [
        (
            float(f(mx.array((x0 + eps * e).astype(np.float32))))
            - float(f(mx.array((x0 - eps * e).astype(np.float32))))
        )
        / (2 * eps)
        for e in np.eye(40)
    ]
    np.testing.assert_allclose(np.asarray(g), num, rtol=1e-2, atol=1e-2)
    v = mx.vmap(lambda a: mx.fft.stft(a, n_fft=8))(x)
    np.testing.assert_allclose(
        np.asarray(v), np.asarray(mx.fft.stft(x, n_fft=8)), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x: m.fft.stft(x, n_fft=0),
        lambda m, x: m.fft.stft(x, n_fft=8, win_length=10),
        lambda m, x: m.fft.stft(x, n_fft=8, hop_length=0),
        lambda m, x: m.fft.stft(x, n_fft=8, pad_mode="bad"),
        lambda m, x: m.fft.stft(m.array(1.0), n_fft=8),
    ],
)
def test_stft_errors(call):
    with pytest.raises(ValueError):
        mx.eval(call(mx, mx.ones((32,))))
    mlx = pytest.importorskip("mlx.core")
    with pytest.raises(ValueError):
        mlx.eval(call(mlx, mlx.ones((32,))))
