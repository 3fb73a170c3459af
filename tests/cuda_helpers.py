"""What the CUDA test modules share: the skip without a GPU, and running one function on each device.

The GPU tests run on a machine with a CUDA device (the lent H200, docs/cuda.md); elsewhere they skip
with the reason. Each compares the GPU's result with the CPU backend's for the same inputs.
"""

import numpy as np
import pytest

from _impl import IS_MLX, mx

HAS_GPU = not IS_MLX and mx.cuda.is_available()
needs_gpu = pytest.mark.skipif(
    not HAS_GPU,
    reason="no CUDA device here: the GPU tests run on a machine with one (docs/cuda.md)",
)


def to_numpy(a):
    """A NumPy array of a's values (bfloat16 as float32, which holds each exactly)."""
    return np.array(a.astype(mx.float32, stream=mx.cpu) if a.dtype == mx.bfloat16 else a)


def on(device, fn, *args):
    """fn(*args) with `device`'s default stream, evaluated, as NumPy arrays (a tree of them)."""
    with mx.stream(device):
        out = fn(*args)
    mx.eval(out)
    if isinstance(out, (list, tuple)):
        return [to_numpy(o) for o in out]
    return to_numpy(out)


def both(fn, *args):
    """(CPU result, GPU result) of fn(*args)."""
    return on(mx.cpu, fn, *args), on(mx.gpu, fn, *args)


def assert_same(cpu, gpu, rtol=0.0, atol=0.0):
    """Bitwise (or within rtol/atol for floating point) equality, with NaNs equal."""
    cpu, gpu = np.asarray(cpu), np.asarray(gpu)
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape, (
        cpu.dtype,
        gpu.dtype,
        cpu.shape,
        gpu.shape,
    )
    if rtol == 0 and atol == 0:
        assert cpu.tobytes() == gpu.tobytes() or np.array_equal(
            cpu, gpu, equal_nan=cpu.dtype.kind in "fc"
        )
    else:
        np.testing.assert_allclose(
            gpu.astype(np.float64) if gpu.dtype.kind == "f" else gpu,
            cpu,
            rtol=rtol,
            atol=atol,
            equal_nan=True,
        )
