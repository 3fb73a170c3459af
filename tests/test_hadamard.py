"""hadamard_transform: MLX's bits (the same order of operations as its CPU kernel, every size form
m * 2^k and float dtype), NumPy float64 references built from Sylvester's construction and MLX's
m-point matrices, the argument rules, the gradient (the transposed transform: H_20 and H_28 are
not symmetric) against finite differences, vmap, and the bits across thread counts."""

import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng

nuvec_only = pytest.mark.nuvec_only

SIZES = [2, 8, 64, 4096, 12, 20, 28, 24, 40, 56, 12 * 64, 20 * 128, 28 * 256]


def sylvester(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def m_matrix(m):
    """H_m as the transform applies it (rows of the transform of the identity, transposed)."""
    return np.array(mx.hadamard_transform(mx.eye(m), scale=1.0)).T.astype(np.float64)


def full_matrix(n):
    for m in (28, 20, 12):
        if n % m == 0:
            return np.kron(m_matrix(m), sylvester(n // m))
    return sylvester(n)


def test_m_point_matrices_are_hadamard_matrices():
    for m in (12, 20, 28):
        h = m_matrix(m)
        assert set(np.unique(h)) == {-1.0, 1.0}
        np.testing.assert_array_equal(h @ h.T, m * np.eye(m))


@pytest.mark.parametrize("n", SIZES)
def test_values_against_numpy(n):
    rng = seeded_rng("hadamard", n)
    x = rng.standard_normal((3, n)).astype(np.float32)
    got = mx.hadamard_transform(mx.array(x))
    ref = x.astype(np.float64) @ full_matrix(n).T / np.sqrt(n)
    assert got.dtype == mx.float32 and got.shape == (3, n)
    np.testing.assert_allclose(np.array(got), ref, rtol=1e-4, atol=1e-4 * np.sqrt(n))


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", SIZES)
def test_same_bits_as_mlx(n, dt):
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("hadamard mlx", n, dt)
    x = rng.standard_normal((2, 3, n)).astype(np.float32)
    for scale in (None, 0.25, 3.0):
        got = mx.hadamard_transform(mx.array(x).astype(getattr(mx, dt)), scale=scale)
        want = mlx.hadamard_transform(mlx.array(x).astype(getattr(mlx, dt)), scale=scale)
        assert got.dtype == getattr(mx, dt)
        g, w = got.astype(mx.float32), want.astype(mlx.float32)
        assert np.array(g).tobytes() == np.array(w).tobytes(), f"n={n} {dt} scale={scale}"


def test_argument_rules():
    # Non-float inputs compute in float32 (complex: the real part); size 1 is a scaling.
    assert mx.hadamard_transform(mx.ones((2, 8), mx.int32)).dtype == mx.float32
    assert mx.hadamard_transform(mx.ones((2, 8), mx.bool_)).dtype == mx.float32
    assert mx.hadamard_transform(mx.array(3)).dtype == mx.int32
    assert np.array(mx.hadamard_transform(mx.array([3]), scale=2.0)).tolist() == [6.0]
    assert mx.hadamard_transform(mx.array([3]), scale=2.0).dtype == mx.float32
    assert np.array(mx.hadamard_transform(mx.array([1, 2, 3, 4]), scale=3)).tolist() == [
        30,
        -6,
        -12,
        0,
    ]
    z = mx.hadamard_transform(mx.array([[1, 2], [3, 4]], mx.complex64) + 1j)
    np.testing.assert_allclose(np.array(z), np.array([[3, -1], [7, -1]]) / np.sqrt(2), rtol=1e-6)
    assert mx.hadamard_transform(mx.ones((8,))).shape == (8,)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.eval(mx.hadamard_transform(mx.ones((2, 3)))),
        lambda: mx.eval(mx.hadamard_transform(mx.ones((2, 44)))),
        lambda: mx.eval(mx.hadamard_transform(mx.ones((0, 8)))),
    ],
    ids=["3", "44", "empty"],
)
def test_bad_sizes_raise_value_error(call):
    # nuvec raises at the call, MLX (for the sizes) when evaluating.
    with pytest.raises(ValueError):
        call()


@nuvec_only
@pytest.mark.parametrize("n", [8, 12, 20, 28, 40])
def test_float64_gradients_are_the_transposed_transform(n):
    # The transform is linear: its vjp is v H (H^T applied), its jvp t H^T, exactly. MLX's vjp
    # applies the transform itself, H v: wrong for m = 20 and 28, whose H_m is not symmetric.
    rng = seeded_rng("hadamard grad", n)
    x, w = rng.standard_normal((2, n)), rng.standard_normal((2, n))
    H = full_matrix(n) * float(np.float32(1 / np.sqrt(n)))  # the default scale is a float32
    X = mx.array(x, dtype=mx.float64)
    g = mx.grad(lambda v: (mx.hadamard_transform(v) * mx.array(w, dtype=mx.float64)).sum())(X)
    np.testing.assert_allclose(np.array(g), w @ H, rtol=1e-12, atol=1e-12)
    t = rng.standard_normal((2, n))
    _, (jt,) = mx.jvp(mx.hadamard_transform, [X], [mx.array(t, dtype=mx.float64)])
    np.testing.assert_allclose(np.array(jt), t @ H.T, rtol=1e-12, atol=1e-12)
    out = np.array(mx.hadamard_transform(X, scale=0.5))
    np.testing.assert_allclose(out, x @ full_matrix(n).T * 0.5, rtol=1e-12, atol=1e-12)


def test_gradient_against_mlx_where_mlx_is_right():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("hadamard grad mlx")
    for n in (16, 12, 48):
        x, w = (
            rng.standard_normal((3, n)).astype(np.float32),
            rng.standard_normal((3, n)).astype(np.float32),
        )
        grads = [
            np.array(
                m.grad(lambda v: (m.hadamard_transform(v, scale=0.3) * m.array(w)).sum())(
                    m.array(x)
                )
            )
            for m in (mx, mlx)
        ]
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap(axis):
    rng = seeded_rng("hadamard vmap", axis)
    x = rng.standard_normal((4, 3, 20) if axis < 2 else (4, 20, 3)).astype(np.float32)
    got = np.array(mx.vmap(mx.hadamard_transform, in_axes=axis)(mx.array(x)))
    want = np.stack(
        [
            np.array(mx.hadamard_transform(mx.array(np.take(x, k, axis=axis))))
            for k in range(x.shape[axis])
        ]
    )
    np.testing.assert_array_equal(got, want)


_SCRIPT = r"""
import hashlib
import numpy as np
import nuvec as mx
rng = np.random.default_rng(5)
for n, dt in ((4096, "float32"), (28 * 64, "bfloat16"), (12 * 256, "float16"), (1024, "float64")):
    x = mx.array(rng.standard_normal((300, n)), dtype=mx.float64).astype(getattr(mx, dt))
    y = mx.hadamard_transform(x)
    y = y.view(mx.uint16) if dt in ("float16", "bfloat16") else y
    print(hashlib.sha256(np.array(y).tobytes()).hexdigest())
"""


@nuvec_only
@pytest.mark.skipif(IS_MLX, reason="nuvec only")
def test_same_bits_for_any_thread_count():
    outs = []
    for n in ("1", "2", "3"):
        r = subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            env=dict(os.environ, NUVEC_NUM_THREADS=n),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert len(outs[0]) == 4 and outs[0] == outs[1] == outs[2]
