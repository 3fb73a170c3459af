"""gather_qmm as MLX's (mixture of experts): batch items of x times gathered quantized weights,
with default, broadcast, sorted and unsorted indices; against NumPy float64 (always) and MLX
(where installed); each token row with up to 8 experts has the bits of its one-row
quantized_matmul; gradients w.r.t. x, the scales and the biases; vmap; bad indices."""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng, to_np
from test_quantized_matmul import assert_close, quantized

E, N, K = 6, 128, 256


def experts(rng, transpose, bits=4, group_size=64):
    return quantized(rng, (E, N, K) if transpose else (E, K, N), group_size, bits)


def reference(x, wd, lhs, rhs, transpose):
    """Item i: x's batch item lhs_i times weight rhs_i (flattened batches)."""
    xs = np.asarray(x, np.float64).reshape((-1,) + x.shape[-2:])
    ws = wd.reshape((-1,) + wd.shape[-2:])
    lhs, rhs = np.broadcast_arrays(lhs, rhs)
    out = [xs[a] @ (ws[b].T if transpose else ws[b]) for a, b in zip(lhs.ravel(), rhs.ravel())]
    return np.stack(out).reshape(lhs.shape + out[0].shape)


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("bits,group_size", [(4, 64), (8, 32), (3, 128), (2, 64), (6, 32)])
def test_experts_per_token(transpose, bits, group_size):
    rng = seeded_rng("gqmm", transpose, bits, group_size)
    wq, s, b, wd = experts(rng, transpose, bits, group_size)
    x = rng.standard_normal((5, 1, 1, K)).astype(np.float32)  # tokens, as mlx-lm's SwitchGLU
    idx = rng.integers(0, E, (5, 8)).astype(np.uint32)
    y = mx.gather_qmm(
        mx.array(x),
        wq,
        s,
        b,
        rhs_indices=mx.array(idx),
        transpose=transpose,
        group_size=group_size,
        bits=bits,
    )
    assert y.shape == (5, 8, 1, N)
    lhs = np.arange(5).reshape(5, 1)
    assert_close(y, reference(x, wd, lhs, idx, transpose))
    if not IS_MLX:  # each (token, expert) row: the bits of its one-row product
        for t in range(5):
            for j in range(8):
                e = int(idx[t, j])
                one = mx.quantized_matmul(
                    mx.array(x[t, 0]), wq[e], s[e], b[e], transpose, group_size, bits
                )
                np.testing.assert_array_equal(np.array(y[t, j]), np.array(one))


@pytest.mark.parametrize("transpose", [True, False])
def test_sorted_indices_give_the_unsorted_bits(transpose):
    rng = seeded_rng("gqmm-sorted", transpose)
    wq, s, b, wd = experts(rng, transpose)
    x = rng.standard_normal((9, 1, K)).astype(np.float32)
    idx = rng.integers(0, E, (9, 2)).astype(np.uint32).reshape(-1)
    order = np.argsort(idx, kind="stable")
    xs = mx.array(x[order // 2])
    y_sorted = mx.gather_qmm(
        xs, wq, s, b, rhs_indices=mx.array(idx[order]), transpose=transpose, sorted_indices=True
    )
    y = mx.gather_qmm(
        mx.array(x),
        wq,
        s,
        b,
        lhs_indices=mx.array(np.arange(18) // 2),
        rhs_indices=mx.array(idx),
        transpose=transpose,
    )
    assert_close(y, reference(x, wd, np.arange(18) // 2, idx, transpose))
    if not IS_MLX:
        np.testing.assert_array_equal(np.array(y_sorted), np.array(y)[order])


def test_default_and_broadcast_indices():
    rng = seeded_rng("gqmm-default")
    wq, s, b, wd = experts(rng, True)
    x = rng.standard_normal((E, 3, K)).astype(np.float32)
    y = mx.gather_qmm(mx.array(x), wq, s, b)  # item e: x[e] @ W[e].T
    assert_close(y, reference(x, wd, np.arange(E), np.arange(E), True))
    x2 = rng.standard_normal((4, 3, K)).astype(np.float32)
    lhs, rhs = np.array([[0], [3]], np.int32), np.array([1, 5, 2], np.int64)
    y = mx.gather_qmm(mx.array(x2), wq, s, b, lhs_indices=mx.array(lhs), rhs_indices=mx.array(rhs))
    assert y.shape == (2, 3, 3, N)
    assert_close(y, reference(x2, wd, lhs, rhs, True))


def test_close_to_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("gqmm-mlx")
    w = rng.standard_normal((E, N, K)).astype(np.float32)
    x = rng.standard_normal((5, 1, 1, K)).astype(np.float32)
    idx = rng.integers(0, E, (5, 4)).astype(np.uint32)
    y = mx.gather_qmm(mx.array(x), *mx.quantize(mx.array(w)), rhs_indices=mx.array(idx))
    ym = mlx.gather_qmm(mlx.array(x), *mlx.quantize(mlx.array(w)), rhs_indices=mlx.array(idx))
    assert_close(y, np.array(ym).astype(np.float64))


@pytest.mark.parametrize("transpose", [True, False])
def test_gradients(transpose):
    if IS_MLX and not transpose:
        pytest.skip(
            "MLX 0.32.4 fails to broadcast in its gradient w.r.t. the scales when not transposed"
        )
    rng = seeded_rng("gqmm-grad", transpose)
    wq, s, b, wd = experts(rng, transpose)
    x = rng.standard_normal((4, 1, 1, K)).astype(np.float32)
    idx = rng.integers(0, E, (4, 3)).astype(np.uint32)
    cot = rng.standard_normal((4, 3, 1, N)).astype(np.float32)

    def f(x, s, b):
        y = mx.gather_qmm(x, wq, s, b, rhs_indices=mx.array(idx), transpose=transpose)
        return (y * mx.array(cot)).sum()

    gx, gs, gb = mx.grad(f, argnums=(0, 1, 2))(mx.array(x), s, b)
    # NumPy: x's gradient sums its items' cot @ W; the weights' gathers outer products by expert.
    wt = wd if transpose else np.swapaxes(wd, -1, -2)  # (E, N, K): y = x @ wt.T
    ex = np.zeros((4, K))
    dw = np.zeros((E, N, K))
    for t in range(4):
        for j in range(3):
            ex[t] += cot[t, j, 0] @ wt[idx[t, j]]
            dw[idx[t, j]] += np.outer(cot[t, j, 0], x[t, 0, 0])
    np.testing.assert_allclose(np.array(gx).reshape(4, K), ex, rtol=1e-4, atol=1e-4)
    dw = dw if transpose else np.swapaxes(dw, -1, -2)
    rows = dw.shape[1]
    np.testing.assert_allclose(
        np.array(gb), dw.reshape(E, rows, -1, 64).sum(-1), rtol=1e-4, atol=1e-4
    )
    scales = to_np(s).astype(np.float64)[..., None]
    codes = (wd.reshape(E, rows, -1, 64) - to_np(b).astype(np.float64)[..., None]) / scales
    np.testing.assert_allclose(
        np.array(gs), (dw.reshape(E, rows, -1, 64) * np.rint(codes)).sum(-1), rtol=1e-4, atol=1e-3
    )


@pytest.mark.skipif(IS_MLX, reason="MLX 0.32.4 has no vmap rule for gather_qmm")
def test_vmap():
    rng = seeded_rng("gqmm-vmap")
    wq, s, b, _ = experts(rng, True)
    x = mx.array(rng.standard_normal((3, 4, 1, 1, K)).astype(np.float32))
    idx = mx.array(rng.integers(0, E, (4, 2)).astype(np.uint32))
    got = mx.vmap(lambda x: mx.gather_qmm(x, wq, s, b, rhs_indices=idx))(x)
    for i in range(3):
        np.testing.assert_array_equal(
            np.array(got[i]), np.array(mx.gather_qmm(x[i], wq, s, b, rhs_indices=idx))
        )
    idxs = mx.array(rng.integers(0, E, (3, 4, 2)).astype(np.uint32))
    got = mx.vmap(lambda i: mx.gather_qmm(x[0], wq, s, b, rhs_indices=i))(idxs)
    for i in range(3):
        np.testing.assert_array_equal(
            np.array(got[i]), np.array(mx.gather_qmm(x[0], wq, s, b, rhs_indices=idxs[i]))
        )
    got = mx.vmap(lambda s: mx.gather_qmm(x[0], wq, s, b, rhs_indices=idx))(mx.stack([s, s * 2]))
    np.testing.assert_array_equal(
        np.array(got[1]), np.array(mx.gather_qmm(x[0], wq, s * 2, b, rhs_indices=idx))
    )


def test_errors():
    wq, s, b = mx.quantize(mx.zeros((E, N, K)))
    x = mx.zeros((2, 1, K))
    for f in [
        lambda: mx.gather_qmm(mx.zeros((K,)), wq, s, b, rhs_indices=mx.array([0])),
        lambda: mx.gather_qmm(x, wq, s, b, rhs_indices=mx.array([0.0, 1.0])),
        lambda: mx.gather_qmm(mx.zeros((2, 1, 100)), wq, s, b, rhs_indices=mx.array([0, 1])),
        lambda: mx.gather_qmm(x, wq, s, b, bits=8, rhs_indices=mx.array([0, 1])),
        lambda: mx.gather_qmm(x, wq, s, rhs_indices=mx.array([0, 1])),
        lambda: mx.gather_qmm(mx.zeros((5, 1, K)), wq, s, b),  # batches 5 and 6 do not broadcast
    ]:
        with pytest.raises(ValueError):
            f()


@pytest.mark.skipif(IS_MLX, reason="MLX reads out of bounds")
def test_out_of_range_indices_raise_when_evaluated():
    wq, s, b = mx.quantize(mx.zeros((E, N, K)))
    y = mx.gather_qmm(mx.zeros((2, 1, K)), wq, s, b, rhs_indices=mx.array([0, E]))
    with pytest.raises(IndexError):
        mx.eval(y)
