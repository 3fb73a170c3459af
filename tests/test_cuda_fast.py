"""nuvec.fast on the GPU against the CPU (docs/cuda.md, "Row norms and RoPE"): RMS norm, layer
norm and add_rms_norm over dtypes, odd widths, batched and strided inputs (those not
row-contiguous run the CPU kernel), rows that do not depend on the other rows; RoPE with its
offsets, periods and gradient. Skipped without a CUDA device."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import both, needs_gpu, on
from helpers import seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

TOL = {"float32": 2e-6, "float16": 2.0**-10, "bfloat16": 2.0**-7}
WIDTHS = [1, 7, 64, 255, 1000, 4097]


def as_f32(x):
    return x.astype(mx.float32) if x.dtype != mx.float32 else x


def close(cpu, gpu, dtype):
    # Output rounding (half types) and float32 sums in another order; values are O(1) after a norm.
    np.testing.assert_allclose(gpu, cpu, rtol=2 * TOL[dtype], atol=4 * TOL[dtype])


def operands(dtype, rows, d, seed):
    rng = seeded_rng("fast", dtype, rows, d, seed)
    x = mx.array(rng.standard_normal((rows, d)).astype(np.float32) * 3 + 0.5).astype(
        getattr(mx, dtype)
    )
    r = mx.array(rng.standard_normal((rows, d)).astype(np.float32)).astype(getattr(mx, dtype))
    w = mx.array(rng.standard_normal(d).astype(np.float32))
    b = mx.array(rng.standard_normal(d).astype(np.float32))
    return x, r, w, b


NORMS = {
    "rms": lambda x, r, w, b: [mx.fast.rms_norm(x, w, 1e-5)],
    "rms_unweighted": lambda x, r, w, b: [mx.fast.rms_norm(x, None, 1e-5)],
    "layer": lambda x, r, w, b: [mx.fast.layer_norm(x, w, b, 1e-5)],
    "layer_plain": lambda x, r, w, b: [mx.fast.layer_norm(x, None, None, 1e-5)],
    "add_rms": lambda x, r, w, b: list(mx.fast.add_rms_norm(x, r, w, 1e-5)),
}


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("d", WIDTHS)
@pytest.mark.parametrize("norm", list(NORMS))
def test_matches_the_cpu(dtype, d, norm):
    args = operands(dtype, 5, d, 0)
    cpu, gpu = both(lambda *a: [as_f32(o) for o in NORMS[norm](*a)], *args)
    for c, g in zip(cpu, gpu):
        close(c, g, dtype)


VIEWS = {
    "batched": lambda t: mx.reshape(t, (3, 4, 96)),
    "swapped": lambda t: mx.swapaxes(mx.reshape(t, (3, 4, 96)), 0, 1),
    "strided": lambda t: t[:, ::2],
    "reversed": lambda t: t[::-1],
}


@pytest.mark.parametrize("norm", list(NORMS))
@pytest.mark.parametrize("view", list(VIEWS))
def test_batched_and_strided_inputs(norm, view):
    """Batch axes; operands that are not row-contiguous run the CPU kernel."""
    x, r, w, b = operands("float32", 12, 96, 1)
    xv, rv = VIEWS[view](x), VIEWS[view](r)
    d = xv.shape[-1]
    cpu, gpu = both(NORMS[norm], xv, rv, w[:d], b[:d])
    for c, g in zip(cpu, gpu):
        close(c, g, "float32")


@pytest.mark.parametrize("norm", list(NORMS))
def test_rows_do_not_depend_on_the_other_rows(norm):
    x, r, w, b = operands("bfloat16", 300, 1000, 2)
    full = on(mx.gpu, lambda *a: [as_f32(o) for o in NORMS[norm](*a)], x, r, w, b)
    for m in (1, 3, 17):
        part = on(mx.gpu, lambda *a: [as_f32(o) for o in NORMS[norm](*a)], x[:m], r[:m], w, b)
        for f, p in zip(full, part):
            assert f[:m].tobytes() == p.tobytes()
    again = on(mx.gpu, lambda *a: [as_f32(o) for o in NORMS[norm](*a)], x, r, w, b)
    assert all(f.tobytes() == g.tobytes() for f, g in zip(full, again))


def test_empty_rows():
    x = mx.zeros((0, 16))
    cpu, gpu = both(lambda v: mx.fast.rms_norm(v, None, 1e-5), x)
    assert cpu.shape == gpu.shape == (0, 16)


ROPES = {
    "halves": dict(dims=64, traditional=False, base=10000.0, scale=1.0, offset=3),
    "traditional_partial": dict(dims=40, traditional=True, base=500.0, scale=0.5, offset=0),
    "odd_dims": dict(dims=30, traditional=False, base=10000.0, scale=1.0, offset=7),
}


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("case", list(ROPES))
def test_rope_matches_the_cpu(dtype, case):
    rng = seeded_rng("rope", dtype, case)
    x = mx.array(rng.standard_normal((2, 3, 37, 64)).astype(np.float32)).astype(getattr(mx, dtype))
    cpu, gpu = both(lambda v: as_f32(mx.fast.rope(v, **ROPES[case])), x)
    close(cpu, gpu, dtype)


@pytest.mark.parametrize("offsets", ["scalar_array", "per_batch"])
def test_rope_offsets_freqs_and_transposes(offsets):
    rng = seeded_rng("rope offsets", offsets)
    x = mx.array(rng.standard_normal((3, 5, 4, 32)).astype(np.float32))
    off = (
        mx.array(9, dtype=mx.int32)
        if offsets == "scalar_array"
        else mx.array([0, 5, 1000], dtype=mx.int32)
    )
    freqs = mx.array(rng.uniform(1, 100, 16).astype(np.float32))
    cases = [
        lambda v: mx.fast.rope(v, 32, traditional=False, base=10000.0, scale=1.0, offset=off),
        lambda v: mx.fast.rope(
            v, 32, traditional=True, base=None, scale=2.0, offset=off, freqs=freqs
        ),
        # Not row-contiguous: the CPU kernel.
        lambda v: mx.fast.rope(
            mx.swapaxes(v, 1, 2), 32, traditional=False, base=1e4, scale=1.0, offset=off
        ),
    ]
    for f in cases:
        cpu, gpu = both(f, x)
        close(cpu, gpu, "float32")


def test_rope_gradient_is_the_inverse_rotation():
    rng = seeded_rng("rope vjp")
    x = mx.array(rng.standard_normal((1, 2, 6, 16)).astype(np.float32))
    cot = mx.array(rng.standard_normal((1, 2, 6, 16)).astype(np.float32))

    def grad(v, c):
        f = lambda t: mx.fast.rope(t, 16, traditional=False, base=1e4, scale=1.0, offset=2)  # noqa: E731
        return mx.vjp(f, [v], [c])[1][0]

    cpu, gpu = both(grad, x, cot)
    close(cpu, gpu, "float32")
