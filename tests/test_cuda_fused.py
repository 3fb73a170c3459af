"""Element-wise fusion on the GPU (docs/cuda.md, "Fused chains"): float32 chains evaluated in one
kernel give the bits of the same ops evaluated one at a time, intermediates held from Python are
stored, scalar and broadcast operands, other dtypes and small arrays take the op-by-op path; and the
CPU agrees within rounding. Skipped without a CUDA device."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import needs_gpu, on, to_numpy
from helpers import seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

N = 1 << 20  # above the size below which chains are not fused


def chains():
    return {
        "exp_sin": [mx.sin, mx.exp, lambda a: a * 2, lambda a: a + 1],
        "gelu_erf": [lambda a: a * 0.7071067811865476, mx.erf, lambda a: a + 1, lambda a: a * 0.5],
        "mixed": [
            mx.tanh,
            lambda a: mx.maximum(a, 0.1),
            mx.sqrt,
            lambda a: a / 3,
            mx.log1p,
            mx.negative,
        ],
    }


def one_at_a_time(x, steps):
    with mx.stream(mx.gpu):
        for f in steps:
            x = f(x)
            mx.eval(x)
    return to_numpy(x)


def together(x, steps):
    def f(x):
        for s in steps:
            x = s(x)
        return x

    return on(mx.gpu, f, x)


@pytest.mark.parametrize("name", list(chains()))
def test_fused_chain_has_the_unfused_bits(name):
    x = mx.array(seeded_rng("cuda_fused", name).standard_normal(N).astype(np.float32))
    steps = chains()[name]
    fused = together(x, steps)
    assert fused.tobytes() == one_at_a_time(x, steps).tobytes()
    cpu = on(mx.cpu, lambda x: _cpu_chain(x, steps), x)
    np.testing.assert_allclose(fused, cpu, rtol=2e-6, atol=1e-6)


def _cpu_chain(x, steps):
    for s in steps:
        x = s(x)
    return x


def test_intermediates_held_from_python_are_stored():
    x = mx.array(seeded_rng("cuda_fused_held").standard_normal(N).astype(np.float32))
    with mx.stream(mx.gpu):
        a = mx.sin(x)
        b = mx.exp(a) * 3
        c = b - a
        mx.eval(c)
    np.testing.assert_array_equal(to_numpy(a), one_at_a_time(x, [mx.sin]))
    np.testing.assert_array_equal(to_numpy(b), one_at_a_time(x, [mx.sin, mx.exp, lambda t: t * 3]))
    ref = on(mx.cpu, lambda x: (mx.exp(mx.sin(x)) * 3) - mx.sin(x), x)
    np.testing.assert_allclose(to_numpy(c), ref, rtol=2e-6, atol=1e-6)


def test_two_inputs_scalars_and_broadcast_operands():
    rng = seeded_rng("cuda_fused_operands")
    x = mx.array(rng.standard_normal((1024, 1024)).astype(np.float32))
    y = mx.array(rng.standard_normal((1024, 1024)).astype(np.float32))
    row = mx.array(rng.standard_normal((1, 1024)).astype(np.float32))  # broadcast: op by op
    s = mx.array(np.float32(1.5))

    def f(x, y, row, s):
        return mx.exp(x * s - y) / (1 + mx.abs(y)) + row

    gpu = on(mx.gpu, f, x, y, row, s)
    cpu = on(mx.cpu, f, x, y, row, s)
    np.testing.assert_allclose(gpu, cpu, rtol=2e-6, atol=1e-6)
    with mx.stream(mx.gpu):
        parts = [x * s]
        for g in (lambda t: t - y, mx.exp, lambda t: t / (1 + mx.abs(y)), lambda t: t + row):
            mx.eval(parts[-1])
            parts.append(g(parts[-1]))
        mx.eval(parts[-1])
    assert to_numpy(parts[-1]).tobytes() == gpu.tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_other_dtypes_and_small_arrays_run_op_by_op(dtype):
    rng = seeded_rng("cuda_fused_dtypes", dtype)
    for n in (N, 1000):
        x = mx.array(rng.integers(-50, 50, n).astype(np.float32)).astype(getattr(mx, dtype))
        f = lambda x: mx.abs(x * 3 - 7) + x
        np.testing.assert_array_equal(on(mx.gpu, f, x), on(mx.cpu, f, x))
