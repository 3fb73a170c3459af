"""quantized_matmul on the GPU against the CPU (docs/cuda.md, "Quantized products"): MLX's affine
weights of every bit width and group size, x @ W.T, one row to a prompt's worth (past
kRowIndependentRows rows the dense path), scales and outputs in float32, float16 and bfloat16;
batches of weights and gather_qmm (each item with its 2-D product's bits); rows that do not depend
on the other rows, the same bits run to run; the forms that run the CPU kernel. Skipped without a CUDA device."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import assert_same, both, needs_gpu, on
from helpers import seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]


def operands(n, k, group, bits, rows, dtype="float32", seed=0):
    rng = seeded_rng("cuda_qmm", n, k, group, bits, rows, dtype, seed)
    t = getattr(mx, dtype)
    w = mx.array(rng.standard_normal((n, k)).astype(np.float32)).astype(t)
    wq, s, b = mx.quantize(w, group, bits, stream=mx.cpu)
    x = mx.array(rng.standard_normal((rows, k)).astype(np.float32)).astype(t)
    return x, wq, s, b


def qmm(group, bits):
    return lambda x, wq, s, b: mx.quantized_matmul(
        x, wq, s, b, transpose=True, group_size=group, bits=bits
    )


def close(cpu, gpu, k):
    # float32 sums over k in another order; values of the product are O(sqrt(k)).
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5 * k)


@pytest.mark.parametrize("bits", [1, 2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("group", [32, 64, 128])
@pytest.mark.parametrize("rows", [1, 3, 300])
def test_matches_the_cpu(bits, group, rows):
    k = 512
    ops = operands(200, k, group, bits, rows)
    cpu, gpu = both(qmm(group, bits), *ops)
    close(cpu, gpu, k)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("rows", [1, 5, 257])
def test_half_weights_and_outputs(dtype, rows):
    ops = operands(96, 1024, 64, 4, rows, dtype)
    cpu, gpu = both(qmm(64, 4), *ops)
    assert cpu.dtype == gpu.dtype
    np.testing.assert_allclose(gpu, cpu, rtol=2.0**-6, atol=0.05)


@pytest.mark.parametrize("bits", [3, 4, 8])
def test_rows_do_not_depend_on_the_other_rows(bits):
    x, wq, s, b = operands(333, 768, 64, bits, 40)
    full = on(mx.gpu, qmm(64, bits), x, wq, s, b)
    for m in (1, 2, 17):
        part = on(mx.gpu, qmm(64, bits), x[:m], wq, s, b)
        assert full[:m].tobytes() == part.tobytes()
    for i in (0, 5, 39):
        one = on(mx.gpu, qmm(64, bits), x[i : i + 1], wq, s, b)
        assert full[i : i + 1].tobytes() == one.tobytes()
    assert on(mx.gpu, qmm(64, bits), x, wq, s, b).tobytes() == full.tobytes()


def test_strided_and_batched_x():
    x, wq, s, b = operands(128, 256, 32, 4, 12)
    xs = x.reshape(3, 4, 256).transpose(1, 0, 2)  # not row-contiguous
    cpu, gpu = both(qmm(32, 4), xs, wq, s, b)
    close(cpu, gpu, 256)


def test_untransposed_products_run_the_cpu_kernel():
    rng = seeded_rng("cuda_qmm_cpu_forms")
    w = mx.array(rng.standard_normal((256, 128)).astype(np.float32))
    x = mx.array(rng.standard_normal((3, 256)).astype(np.float32))
    wq, s, b = mx.quantize(w, 64, 4, stream=mx.cpu)
    cpu, gpu = both(
        lambda *a: mx.quantized_matmul(*a, transpose=False, group_size=64, bits=4), x, wq, s, b
    )
    assert_same(cpu, gpu)


@pytest.mark.parametrize("rows", [2, 300])
def test_batched_weights(rows):
    # A batch of weights: each item has the bits of its own 2-D product (vmap's promise).
    rng = seeded_rng("cuda_qmm_batched", rows)
    ws = [
        mx.quantize(mx.array(rng.standard_normal((64, 128)).astype(np.float32)), 32, 4)
        for _ in range(3)
    ]
    wq, s, b = (mx.stack([w[i] for w in ws]) for i in range(3))
    x = mx.array(rng.standard_normal((3, rows, 128)).astype(np.float32))
    cpu, gpu = both(qmm(32, 4), x, wq, s, b)
    close(cpu, gpu, 128)
    mapped = on(mx.gpu, lambda *a: mx.vmap(qmm(32, 4))(*a), x, wq, s, b)
    for i in range(3):
        assert mapped[i].tobytes() == on(mx.gpu, qmm(32, 4), x[i], *ws[i]).tobytes()


@pytest.mark.parametrize("rows", [1, 4, 260])
def test_gather_qmm(rows):
    rng = seeded_rng("cuda_gather_qmm", rows)
    experts = mx.array(rng.standard_normal((4, 96, 256)).astype(np.float32))
    wq, s, b = mx.quantize(experts, 64, 4, stream=mx.cpu)
    x = mx.array(rng.standard_normal((5, rows, 256)).astype(np.float32))
    lhs = mx.array(np.array([0, 2, 4, 1], dtype=np.uint32))
    rhs = mx.array(np.array([3, 3, 0, 1], dtype=np.uint32))
    fn = lambda x, wq, s, b, l, r: mx.gather_qmm(x, wq, s, b, lhs_indices=l, rhs_indices=r)
    cpu, gpu = both(fn, x, wq, s, b, lhs, rhs)
    close(cpu, gpu, 256)
    got = on(mx.gpu, fn, x, wq, s, b, lhs, rhs)
    for i, (li, ri) in enumerate([(0, 3), (2, 3), (4, 0), (1, 1)]):
        one = on(mx.gpu, qmm(64, 4), x[li], wq[ri], s[ri], b[ri])
        assert got[i].tobytes() == one.tobytes()


def test_gather_qmm_index_out_of_bounds():
    rng = seeded_rng("cuda_gather_qmm_oob")
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((2, 32, 64)).astype(np.float32)), 32, 4)
    x = mx.array(rng.standard_normal((2, 1, 64)).astype(np.float32))
    bad = mx.array(np.array([0, 2], dtype=np.uint32))
    with mx.stream(mx.gpu), pytest.raises(Exception, match="out of bounds"):
        mx.eval(mx.gather_qmm(x, wq, s, b, rhs_indices=bad, group_size=32))


def test_floating_point_modes():
    # mxfp4 weights (no GPU kernel of their own): within float32 rounding of the CPU's.
    rng = seeded_rng("cuda_qmm_mxfp4")
    w = mx.array(rng.standard_normal((128, 256)).astype(np.float32))
    x = mx.array(rng.standard_normal((3, 256)).astype(np.float32))
    wq, s = mx.quantize(w, mode="mxfp4", stream=mx.cpu)
    cpu, gpu = both(
        lambda x, wq, s: mx.quantized_matmul(x, wq, s, transpose=True, mode="mxfp4"), x, wq, s
    )
    close(cpu, gpu, 256)


def test_empty_and_single_group():
    x, wq, s, b = operands(8, 32, 32, 4, 0)
    cpu, gpu = both(qmm(32, 4), x, wq, s, b)
    assert gpu.shape == (0, 8)
    x, wq, s, b = operands(1, 32, 32, 4, 1)
    cpu, gpu = both(qmm(32, 4), x, wq, s, b)
    close(cpu, gpu, 32)
