"""quantized_matmul as MLX's: x @ W.T (transpose) or x @ W with W the dequantized weight, for
every bit width and group size, float32/float16/bfloat16 x, batched and broadcast; against NumPy
float64 on the dequantized weight (always) and MLX (where installed). Then the determinism
contract: each row of an M-row product (M <= ROW_INDEPENDENT_ROWS) has the bits of its one-row
product, and results are bit-identical for 1, 2 and 3 threads and within each ISA build."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import IS_MLX, mx
from helpers import seeded_rng, to_np
from test_quantize import ref_codes

BITS = (1, 2, 3, 4, 5, 6, 8)
GROUPS = (32, 64, 128)


def quantized(rng, shape, group_size, bits, dtype="float32"):
    """(w, scales, biases) of a random weight, and the weight they stand for in float64 (scale *
    code + bias exactly: the product computes in float32, not in the scales' dtype)."""
    w = mx.array(rng.standard_normal(shape).astype(np.float32)).astype(getattr(mx, dtype))
    wq, s, b = mx.quantize(w, group_size, bits)
    codes = ref_codes(np.array(wq), bits, shape[-1]).astype(np.float64)
    codes = codes.reshape(codes.shape[:-1] + (-1, group_size))
    sn, bn = to_np(s).astype(np.float64)[..., None], to_np(b).astype(np.float64)[..., None]
    return wq, s, b, (codes * sn + bn).reshape(shape)


def reference(x, wd, transpose):
    return np.asarray(x, np.float64) @ (np.swapaxes(wd, -1, -2) if transpose else wd)


def assert_close(got, ref, dtype="float32"):
    """Within float32 rounding of sums of |terms| (or the output dtype's rounding; MLX accumulates
    half types in half precision)."""
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    tol = max(tol, 6e-2) if IS_MLX and dtype != "float32" else tol
    got = to_np(got).astype(np.float64)
    scale = np.abs(ref).max() + 1e-30
    assert np.abs(got - ref).max() <= tol * scale, np.abs(got - ref).max() / scale


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("group_size", GROUPS)
def test_matches_numpy(transpose, bits, group_size):
    rng = seeded_rng("qmm", transpose, bits, group_size)
    k, n = 256, 384
    wq, s, b, wd = quantized(rng, (n, k) if transpose else (k, n), group_size, bits)
    x = rng.standard_normal((5, k)).astype(np.float32)
    y = mx.quantized_matmul(mx.array(x), wq, s, b, transpose, group_size, bits)
    assert y.shape == (5, n) and y.dtype == mx.float32
    assert_close(y, reference(x, wd, transpose))


@pytest.mark.parametrize("xdtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("wdtype", ["float32", "float16", "bfloat16"])
def test_dtypes(xdtype, wdtype):
    rng = seeded_rng("qmm-dtypes", xdtype, wdtype)
    wq, s, b, wd = quantized(rng, (96, 128), 64, 4, wdtype)
    x = mx.array(rng.standard_normal((3, 128)).astype(np.float32)).astype(getattr(mx, xdtype))
    y = mx.quantized_matmul(x, wq, s, b)
    names = {xdtype, wdtype}
    expect = (
        names.pop() if len(names) == 1 else "float32"
    )  # float16 with bfloat16 promotes to float32
    assert y.dtype == getattr(mx, expect)
    assert_close(y, reference(to_np(x), wd, True), expect)


@pytest.mark.parametrize("transpose", [True, False])
def test_batched_and_broadcast(transpose):
    rng = seeded_rng("qmm-batch", transpose)
    k, n = 128, 64
    shape = (2, 1, n, k) if transpose else (2, 1, k, n)
    wq, s, b, wd = quantized(rng, shape, 32, 4)
    x = rng.standard_normal((3, 5, k)).astype(np.float32)
    y = mx.quantized_matmul(mx.array(x), wq, s, b, transpose, 32, 4)
    assert y.shape == (2, 3, 5, n)
    assert_close(y, reference(x, wd, transpose))
    # A 2-D weight under batched x, and a 1-D x.
    wq2, s2, b2, wd2 = quantized(rng, (n, k) if transpose else (k, n), 32, 4)
    x4 = rng.standard_normal((2, 3, 4, k)).astype(np.float32)
    assert_close(
        mx.quantized_matmul(mx.array(x4), wq2, s2, b2, transpose, 32, 4),
        reference(x4, wd2, transpose),
    )
    v = mx.quantized_matmul(mx.array(x4[0, 0, 0]), wq2, s2, b2, transpose, 32, 4)
    assert v.shape == (n,)
    assert_close(v, reference(x4[0, 0, 0], wd2, transpose))
    # A non-contiguous x (a transposed view) and a sliced weight.
    xt = mx.array(rng.standard_normal((k, 6)).astype(np.float32)).T
    assert_close(
        mx.quantized_matmul(xt, wq2, s2, b2, transpose, 32, 4), reference(to_np(xt), wd2, transpose)
    )


@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize(
    "bits,group_size", [(4, 64), (8, 32), (3, 128), (2, 64), (6, 32), (1, 128), (5, 64)]
)
def test_close_to_mlx(transpose, bits, group_size):
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("qmm-mlx", transpose, bits, group_size)
    w = rng.standard_normal((256, 384)).astype(np.float32)
    x = rng.standard_normal((2, 3, 256 if not transpose else 384)).astype(np.float32)
    ours = mx.quantize(mx.array(w), group_size, bits)
    theirs = mlx.quantize(mlx.array(w), group_size, bits)
    y = mx.quantized_matmul(mx.array(x), *ours, transpose, group_size, bits)
    ym = mlx.quantized_matmul(mlx.array(x), *theirs, transpose, group_size, bits)
    assert y.shape == ym.shape
    assert_close(y, np.array(ym).astype(np.float64))


@pytest.mark.skipif(IS_MLX, reason="nuvec's row-independence promise")
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize(
    "bits,group_size", [(4, 64), (8, 128), (3, 32), (1, 64), (5, 128), (2, 32), (6, 64)]
)
def test_rows_have_their_one_row_bits(transpose, bits, group_size):
    rng = seeded_rng("qmm-rows", transpose, bits, group_size)
    k, n = 256, (130 if transpose else 384)  # 130: a last block of two weight rows
    wq, s, b, _ = quantized(rng, (n, k) if transpose else (k, n), group_size, bits)
    x = mx.array(rng.standard_normal((mx.ROW_INDEPENDENT_ROWS, k)).astype(np.float32))
    ones = np.stack(
        [
            np.array(mx.quantized_matmul(x[i : i + 1], wq, s, b, transpose, group_size, bits))[0]
            for i in range(256)
        ]
    )
    for m in (2, 3, 7, 64, 256):
        got = np.array(mx.quantized_matmul(x[:m], wq, s, b, transpose, group_size, bits))
        np.testing.assert_array_equal(got, ones[:m], err_msg=f"M={m}")


_SCRIPT = r"""
import hashlib, sys
sys.path.insert(0, {tests!r})
from test_quantized_matmul import determinism_digests
print(" ".join(determinism_digests()))
"""


def determinism_digests():
    """Digests of products that reach every kernel path: one row and many, transposed or not."""
    out = []
    for transpose in (True, False):
        for bits, group_size in ((4, 64), (8, 32), (3, 128), (6, 64)):
            rng = np.random.default_rng(bits * 1000 + group_size)
            k, n = 512, 1024
            w = mx.array(rng.standard_normal((n, k) if transpose else (k, n)).astype(np.float32))
            wq, s, b = mx.quantize(w, group_size, bits)
            for m in (1, 3, 300):
                x = mx.array(rng.standard_normal((m, k)).astype(np.float32))
                y = mx.quantized_matmul(x, wq, s, b, transpose, group_size, bits)
                # Row independence in this build too (the promise's rows; longer transposed
                # products take the dense path).
                if m <= mx.ROW_INDEPENDENT_ROWS:
                    y1 = mx.quantized_matmul(x[m - 1 :], wq, s, b, transpose, group_size, bits)
                    assert np.array_equal(np.array(y)[m - 1 :], np.array(y1))
                out.append(hashlib.sha256(np.array(y).tobytes()).hexdigest()[:16])
    # gather_qmm: 40 tokens with 8 experts each, unsorted, and sorted as one run per expert.
    rng = np.random.default_rng(7)
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((6, 256, 512)).astype(np.float32)), 64, 4)
    x = mx.array(rng.standard_normal((40, 1, 1, 512)).astype(np.float32))
    idx = rng.integers(0, 6, (40, 8)).astype(np.uint32)
    y = mx.gather_qmm(x, wq, s, b, rhs_indices=mx.array(idx))
    order = np.argsort(idx.reshape(-1), kind="stable")
    xs = mx.array(np.array(x).reshape(40, 1, 512)[order // 8])
    ys = mx.gather_qmm(
        xs, wq, s, b, rhs_indices=mx.array(idx.reshape(-1)[order]), sorted_indices=True
    )
    assert np.array_equal(np.array(ys)[:, 0], np.array(y).reshape(320, -1)[order])
    out.append(hashlib.sha256(np.array(y).tobytes()).hexdigest()[:16])
    return out


def _run(env):
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(IS_MLX, reason="nuvec's kernel paths")
@pytest.mark.parametrize("bits", [3, 4, 8])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_products_past_the_row_promise_dequantize_then_multiply(bits, dtype):
    """More rows than ROW_INDEPENDENT_ROWS (a prompt's prefill): w = q * scale + bias in float32,
    then the dense product; it agrees with the row kernels to float32 rounding."""
    rng = seeded_rng("qmm-dense", bits, dtype)
    n, k, g = 200, 256, 64
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((n, k)).astype(np.float32)), g, bits)
    s, b = s.astype(getattr(mx, dtype)), b.astype(getattr(mx, dtype))
    x = rng.standard_normal((mx.ROW_INDEPENDENT_ROWS + 44, k)).astype(np.float32)
    y = np.array(mx.quantized_matmul(mx.array(x), wq, s, b, True, g, bits))
    codes = np.array(
        mx.dequantize(wq, mx.ones(s.shape), mx.zeros(b.shape), group_size=g, bits=bits)
    )
    sc = np.repeat(np.array(s.astype(mx.float32)), g, axis=1)
    bi = np.repeat(np.array(b.astype(mx.float32)), g, axis=1)
    w32 = (codes.astype(np.float32) * sc).astype(np.float32) + bi
    ref = x.astype(np.float64) @ w32.astype(np.float64).T
    np.testing.assert_allclose(y, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())
    rows = np.array(mx.quantized_matmul(mx.array(x[:3]), wq, s, b, True, g, bits))
    np.testing.assert_allclose(y[:3], rows, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.skipif(IS_MLX, reason="nuvec's determinism promise")
@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_same_bits_for_any_thread_count(isa):
    runs = {n: _run({"NUVEC_NUM_THREADS": n, "NUVEC_CPU_ISA": isa}) for n in ("1", "2", "3")}
    assert runs["1"] == runs["2"] == runs["3"]


def test_errors():
    wq, s, b = mx.quantize(mx.zeros((64, 128)))
    x = mx.zeros((3, 128))
    bad = [
        lambda: mx.quantized_matmul(mx.zeros((3, 100)), wq, s, b),
        lambda: mx.quantized_matmul(mx.zeros((3, 128)), wq, s, b, transpose=False),
        lambda: mx.quantized_matmul(x, wq, s, b, bits=8),
        lambda: mx.quantized_matmul(x, wq, s, b, group_size=32),
        lambda: mx.quantized_matmul(x, wq, s),
        lambda: mx.quantized_matmul(x, wq, s[:, :1], b),
        lambda: mx.quantized_matmul(x, wq.astype(mx.int32), s, b),
        lambda: mx.quantized_matmul(x, wq, s, b, bits=7),
        lambda: mx.quantized_matmul(x, wq, s, b, group_size=16),
        lambda: mx.quantized_matmul(x, wq, s, b, mode="foo"),
    ]
    for f in bad:
        with pytest.raises(ValueError):
            f()


@pytest.mark.parametrize("transpose", [True, False])
def test_gradients_match_numpy_and_mlx(transpose):
    rng = seeded_rng("qmm-grad", transpose)
    wq, s, b, wd = quantized(rng, (64, 128), 32, 4)
    k = 128 if transpose else 64
    x = rng.standard_normal((3, k)).astype(np.float32)
    cot = rng.standard_normal((3, 64 if transpose else 128)).astype(np.float32)

    def f(x, s, b):
        return (mx.quantized_matmul(x, wq, s, b, transpose, 32, 4) * mx.array(cot)).sum()

    gx, gs, gb = mx.grad(f, argnums=(0, 1, 2))(mx.array(x), s, b)
    # NumPy: d/dx = cot @ W (or W.T); d/dW = x.T @ cot (or its transpose), summed per group with
    # the codes for the scales and alone for the biases.
    w_op = wd.T if transpose else wd
    np.testing.assert_allclose(np.array(gx), cot @ w_op.T, rtol=1e-4, atol=1e-4)
    dw = (cot.T @ x) if transpose else (x.T @ cot)
    codes = ref_codes(np.array(wq), 4, 128).reshape(64, 4, 32)
    np.testing.assert_allclose(
        np.array(gs), (dw.reshape(64, 4, 32) * codes).sum(-1), rtol=1e-4, atol=1e-3
    )
    np.testing.assert_allclose(np.array(gb), dw.reshape(64, 4, 32).sum(-1), rtol=1e-4, atol=1e-4)
    # jvp w.r.t. x: the product of the tangent.
    t = rng.standard_normal(x.shape).astype(np.float32)
    _, (jt,) = mx.jvp(
        lambda a: mx.quantized_matmul(a, wq, s, b, transpose, 32, 4), [mx.array(x)], [mx.array(t)]
    )
    np.testing.assert_allclose(np.array(jt), t @ w_op, rtol=1e-4, atol=1e-4)
    with pytest.raises((ValueError, RuntimeError)):
        mx.grad(lambda w: mx.quantized_matmul(mx.array(x), w, s, b, transpose, 32, 4).sum())(wq)
    mlx = pytest.importorskip("mlx.core")
    if IS_MLX:
        return
    m = [mlx.array(np.array(a)) for a in (wq, s, b)]

    def fm(x, s, b):
        return (mlx.quantized_matmul(x, m[0], s, b, transpose, 32, 4) * mlx.array(cot)).sum()

    for ours, theirs in zip(
        (gx, gs, gb), mlx.grad(fm, argnums=(0, 1, 2))(mlx.array(x), m[1], m[2])
    ):
        np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(IS_MLX, reason="MLX 0.32.4 has no vmap rule for quantized_matmul")
def test_vmap_over_x_and_weights():
    rng = seeded_rng("qmm-vmap")
    ws = [quantized(rng, (32, 64), 32, 4) for _ in range(3)]
    wq, s, b = (mx.stack([w[i] for w in ws]) for i in range(3))
    x = mx.array(rng.standard_normal((3, 2, 64)).astype(np.float32))
    got = mx.vmap(lambda x, w, s, b: mx.quantized_matmul(x, w, s, b, group_size=32))(x, wq, s, b)
    for i in range(3):
        np.testing.assert_array_equal(
            np.array(got[i]), np.array(mx.quantized_matmul(x[i], *ws[i][:3], group_size=32))
        )
    got = mx.vmap(lambda x: mx.quantized_matmul(x, *ws[0][:3], group_size=32), in_axes=1)(x)
    for i in range(2):
        np.testing.assert_array_equal(
            np.array(got[i]), np.array(mx.quantized_matmul(x[:, i], *ws[0][:3], group_size=32))
        )


@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    masks=st.tuples(st.integers(0, 3), st.integers(0, 3), st.booleans()),
    m=st.integers(1, 9),
    kn=st.tuples(st.integers(1, 3), st.integers(1, 9)),
    spec=st.sampled_from([(32, 4), (64, 8), (32, 3), (128, 2), (32, 6), (64, 1), (32, 5)]),
    transpose=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_random_shapes_against_numpy(batch, masks, m, kn, spec, transpose, seed):
    """Broadcast batch shapes, any M, K and N (multiples of the group where they are grouped)."""
    # Each operand keeps or sets to 1 each batch axis (bit masks); one may drop the leading axis.
    x_batch = [d if masks[0] >> i & 1 else 1 for i, d in enumerate(batch)]
    w_batch = [d if masks[1] >> i & 1 else 1 for i, d in enumerate(batch)]
    if masks[2] and w_batch:
        w_batch = w_batch[1:]
    group_size, bits = spec
    rng = np.random.default_rng(seed)
    k = kn[0] * group_size
    n = kn[1] * (1 if transpose else group_size)
    wq, s, b, wd = quantized(
        rng, (*w_batch, n, k) if transpose else (*w_batch, k, n), group_size, bits
    )
    x = rng.standard_normal((*x_batch, m, k)).astype(np.float32)
    y = mx.quantized_matmul(mx.array(x), wq, s, b, transpose, group_size, bits)
    ref = reference(x, wd, transpose)
    assert y.shape == ref.shape
    assert_close(y, ref)
