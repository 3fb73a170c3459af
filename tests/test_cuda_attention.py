"""fast.scaled_dot_product_attention on the GPU against the CPU (docs/cuda.md, "Attention"): decode
and prefill shapes, grouped heads, causal (with rows that see no key), additive and boolean masks,
sinks, value widths other than the key's, half keys and values, transposed layouts, no keys; row
independence, the serial rule and the same bits run to run; gradients. Skipped without a CUDA
device."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import both, needs_gpu, on
from helpers import seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

sdpa = mx.fast.scaled_dot_product_attention

# (B, Hq, Hkv, Lq, Lk, D, Dv)
SHAPES = {
    "decode": (1, 8, 8, 1, 300, 64, 64),
    "decode_gqa": (2, 8, 2, 1, 1025, 128, 128),
    "verify": (1, 4, 2, 5, 77, 32, 32),
    "prefill": (1, 4, 4, 70, 70, 64, 64),
    "more_queries_than_keys": (1, 2, 1, 9, 4, 16, 16),
    "value_width": (2, 4, 2, 3, 40, 64, 24),
    "wide": (1, 2, 2, 2, 33, 256, 256),
    "odd": (1, 3, 1, 7, 31, 5, 3),
}


def operands(shape, dtype="float32", seed=0):
    B, Hq, Hkv, Lq, Lk, D, Dv = shape
    rng = seeded_rng("cuda_sdpa", shape, dtype, seed)
    t = getattr(mx, dtype)
    q = mx.array(rng.standard_normal((B, Hq, Lq, D)).astype(np.float32)).astype(t)
    k = mx.array(rng.standard_normal((B, Hkv, Lk, D)).astype(np.float32)).astype(t)
    v = mx.array(rng.standard_normal((B, Hkv, Lk, Dv)).astype(np.float32)).astype(t)
    return q, k, v


def masks(shape):
    B, Hq, _, Lq, Lk, _, _ = shape
    rng = seeded_rng("cuda_sdpa_mask", shape)
    keep = rng.random((B, 1, Lq, Lk)) > 0.3
    keep[..., 0, :] = False  # a row that masks every key: the mean of the values
    return {
        "none": None,
        "causal": "causal",
        "additive": mx.array(rng.standard_normal((Lq, Lk)).astype(np.float32)),
        "boolean": mx.array(keep),
    }


def close(cpu, gpu, dtype="float32"):
    tol = {"float32": 3e-5, "float16": 2.0**-9, "bfloat16": 2.0**-6}[dtype]
    np.testing.assert_allclose(gpu, cpu, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(SHAPES))
@pytest.mark.parametrize("mask", ["none", "causal", "additive", "boolean"])
@pytest.mark.parametrize("sinks", [False, True])
def test_matches_the_cpu(name, mask, sinks):
    shape = SHAPES[name]
    q, k, v = operands(shape)
    m = masks(shape)[mask]
    s = mx.array(seeded_rng("sinks", name).standard_normal(shape[1]).astype(np.float32))
    fn = lambda q, k, v: sdpa(q, k, v, scale=shape[5] ** -0.5, mask=m, sinks=s if sinks else None)
    cpu, gpu = both(fn, q, k, v)
    close(cpu, gpu)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_keys_and_values(dtype):
    q, k, v = operands(SHAPES["decode_gqa"], dtype)
    cpu, gpu = both(lambda q, k, v: sdpa(q, k, v, scale=0.1, mask="causal"), q, k, v)
    close(cpu, gpu, dtype)


def test_transposed_layout_and_no_keys():
    rng = seeded_rng("cuda_sdpa_layout")
    x = mx.array(rng.standard_normal((2, 20, 4, 32)).astype(np.float32))  # (B, L, H, D)
    q = k = v = x.transpose(0, 2, 1, 3)
    cpu, gpu = both(lambda q, k, v: sdpa(q, k, v, scale=0.2, mask="causal"), q, k, v)
    close(cpu, gpu)
    q, k, v = operands((1, 2, 2, 3, 0, 8, 8))
    cpu, gpu = both(lambda q, k, v: sdpa(q, k, v, scale=1.0), q, k, v)
    assert not gpu.any() and gpu.shape == (1, 2, 3, 8)


def test_heads_wider_than_the_kernel_run_the_cpu_kernel():
    q, k, v = operands((1, 2, 1, 3, 10, 300, 300))
    cpu, gpu = both(lambda q, k, v: sdpa(q, k, v, scale=0.05), q, k, v)
    assert cpu.tobytes() == gpu.tobytes()


def test_row_independence_and_the_serial_rule():
    shape = (3, 4, 2, 6, 200, 64, 64)
    q, k, v = operands(shape)
    run = lambda *a, mask=None: on(
        mx.gpu, lambda q, k, v: sdpa(q, k, v, scale=0.125, mask=mask), *a
    )
    full = run(q, k, v, mask="causal")
    assert run(q, k, v, mask="causal").tobytes() == full.tobytes()
    for b in range(3):
        one = run(q[b : b + 1], k[b : b + 1], v[b : b + 1], mask="causal")
        assert one.tobytes() == full[b : b + 1].tobytes()
    for i in range(6):
        n = 200 - 6 + i + 1
        one = run(q[:, :, i : i + 1], k[:, :, :n], v[:, :, :n])
        assert one.tobytes() == full[:, :, i : i + 1].tobytes()


def test_gradients_match_the_cpu():
    q, k, v = operands(SHAPES["verify"])

    def loss(q, k, v):
        return (sdpa(q, k, v, scale=0.3, mask="causal") ** 2).sum()

    cpu, gpu = both(lambda q, k, v: mx.grad(loss, argnums=(0, 1, 2))(q, k, v), q, k, v)
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lq", [1, 5, 20])
@pytest.mark.parametrize("form", ["boolean", "additive"])
def test_keys_hidden_before_the_first_visible_one_change_no_bits(lq, form):
    """A row's blocks start at its first key the mask lets through, so a left-padded row has the
    bits of the same row without the pads (decode: lq 1 and 5; prefill: 20)."""
    B, H, D, L, pad = 2, 4, 64, 45, 37
    q, k, v = operands((B, H, H, lq, L, D, D), seed=lq)
    kp = mx.concatenate([mx.zeros((B, H, pad, D)), k], axis=2)
    vp = mx.concatenate([mx.zeros((B, H, pad, D)), v], axis=2)
    causal = np.tril(np.ones((lq, L), bool), L - lq)
    padded = np.concatenate([np.zeros((lq, pad), bool), causal], axis=1)

    def as_mask(keep):
        if form == "boolean":
            return mx.array(keep)
        return mx.array(np.where(keep, 0.0, -np.inf).astype(np.float32))

    alone = on(mx.gpu, lambda q, k, v: sdpa(q, k, v, scale=0.125, mask=as_mask(causal)), q, k, v)
    inside = on(mx.gpu, lambda q, k, v: sdpa(q, k, v, scale=0.125, mask=as_mask(padded)), q, kp, vp)
    assert alone.tobytes() == inside.tobytes()
    close(
        on(mx.cpu, lambda q, k, v: sdpa(q, k, v, scale=0.125, mask=as_mask(causal)), q, k, v), alone
    )
