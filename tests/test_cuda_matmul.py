"""Matrix products on the GPU against the CPU's (docs/cuda.md, "Matrix products").

Up to ROW_INDEPENDENT_ROWS rows nuvec's row-wise kernel runs (each row the bits of its one-row
product); above, cuBLASLt's fixed algorithm or, without it (NUVEC_CUBLASLT=off), the tiled kernels.
The GPU sums in another order than the CPU, so values compare within a bound scaled by
|a| @ |b|; determinism and row independence compare bits. Skipped without a CUDA device.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import both, needs_gpu, on
from helpers import MX, np_values, seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

DTYPES = ["float32", "float16", "bfloat16", "float64"]
# The error of a product's element relative to sum |a_k b_k| (accumulation in float32, or float64),
# plus one rounding of the output relative to its value.
SUM_TOL = {"float32": 2e-6, "float16": 1e-5, "bfloat16": 1e-5, "float64": 1e-13}
OUT_TOL = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7, "float64": 2.0**-52}


def data(rng, shape, dtype):
    return np_values(rng.uniform(-1, 1, shape), dtype)


def as_f32(x):
    """Half-type results as float32 (exact), so they come back to NumPy."""
    return x.astype(mx.float32) if x.dtype in (mx.float16, mx.bfloat16) else x


def check_close(fn, a, b, dtype):
    """fn(A, B) on both devices, within the bound of the sum's rounding."""
    A, B = mx.array(a, dtype=MX[dtype]), mx.array(b, dtype=MX[dtype])
    cpu, gpu = both(lambda x, y: as_f32(fn(x, y)), A, B)
    assert cpu.shape == gpu.shape
    bound = np.abs(fn_np(fn, np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))))
    err = np.abs(gpu.astype(np.float64) - cpu.astype(np.float64))
    limit = SUM_TOL[dtype] * bound + OUT_TOL[dtype] * np.abs(cpu.astype(np.float64))
    assert np.all(err <= limit), f"max excess {np.max(err - limit)}"


def fn_np(fn, a, b):
    """fn on NumPy float64 values, on the CPU (the same views as the product's)."""
    return on(mx.cpu, fn, mx.array(a), mx.array(b))


# (a's shape, b's shape): vectors, 1 x K and M x 1 products, odd sizes, large K, rows above
# ROW_INDEPENDENT_ROWS, batches (broadcast, folded into rows, and not), empty operands.
SHAPES = [
    ((5,), (5, 7)),
    ((6, 9), (9,)),
    ((1, 333), (333, 129)),
    ((70, 41), (41, 1)),
    ((37, 129), (129, 61)),
    ((1, 4100), (4100, 64)),
    ((6, 1000), (1000, 4096)),
    ((3, 10007), (10007, 5)),
    ((300, 70), (70, 90)),
    ((513, 257), (257, 130)),
    ((2, 3, 17, 40), (40, 12)),
    ((4, 1, 5, 8), (1, 3, 8, 6)),
    ((7, 11), (5, 11, 9)),
    ((2, 300, 33), (2, 33, 20)),
    ((0, 5), (5, 3)),
    ((4, 0), (0, 3)),
    ((4, 5), (5, 0)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matches_the_cpu(dtype, shapes):
    rng = seeded_rng("shapes", dtype, shapes)
    check_close(mx.matmul, data(rng, shapes[0], dtype), data(rng, shapes[1], dtype), dtype)


LAYOUTS = {
    "a_transposed": lambda a, b: mx.swapaxes(a, -1, -2) @ b,
    "b_transposed": lambda a, b: a @ mx.swapaxes(b, -1, -2),
    "both_transposed": lambda a, b: mx.swapaxes(a, -1, -2) @ mx.swapaxes(b, -1, -2),
    "strided": lambda a, b: a[..., ::2] @ b[..., ::2, :],
    "reversed_rows": lambda a, b: a[::-1] @ b,
}


# Stored shapes of a and b for `rows` x k @ k x n through each layout.
def stored_shapes(layout, rows, k, n):
    return {
        "a_transposed": ((k, rows), (k, n)),
        "b_transposed": ((rows, k), (n, k)),
        "both_transposed": ((k, rows), (n, k)),
        "strided": ((rows, 2 * k), (2 * k, n)),
        "reversed_rows": ((rows, k), (k, n)),
    }[layout]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("rows", [1, 45, 400])
def test_layouts(dtype, layout, rows):
    """Transposed, strided and negatively strided operands are read in place."""
    rng = seeded_rng("layout", dtype, layout, rows)
    shape_a, shape_b = stored_shapes(layout, rows, 72, 50)
    check_close(LAYOUTS[layout], data(rng, shape_a, dtype), data(rng, shape_b, dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows", [3, 300])
def test_addmm(dtype, rows):
    """alpha * (a @ b) + beta * c: the element-wise steps round alike on both devices, so the
    results differ by the product's difference, grown by at most a few roundings of the parts."""
    rng = seeded_rng("addmm", dtype, rows)
    a, b, c = data(rng, (rows, 24), dtype), data(rng, (24, 18), dtype), data(rng, (18,), dtype)
    args = [mx.array(v, dtype=MX[dtype]) for v in (a, b, c)]
    product = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    for alpha, beta in [(1.0, 1.0), (0.5, 2.0), (-1.5, 0.0)]:
        cpu, gpu = both(lambda x, y, z: as_f32(mx.addmm(z, x, y, alpha=alpha, beta=beta)), *args)
        bound = abs(alpha) * product + abs(beta) * np.abs(c.astype(np.float64))
        limit = (SUM_TOL[dtype] + 4 * OUT_TOL[dtype]) * bound
        assert np.all(np.abs(gpu.astype(np.float64) - cpu) <= limit)


def gpu_bits(fn, *args):
    return on(mx.gpu, lambda *xs: as_f32(fn(*xs)), *args).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["plain", "b_transposed", "a_transposed", "batched"])
def test_row_independence(dtype, layout):
    """Each row of a product of m <= ROW_INDEPENDENT_ROWS rows (taken from a 1000-row matrix) has
    the bits of its one-row product, whatever m, the layout, or batch axes folded into rows."""
    rows = mx.ROW_INDEPENDENT_ROWS
    rng = seeded_rng("rows", dtype, layout)
    k, n = 777, 40  # n a multiple of 8: up to 8 rows of a row-major b take the columns kernel
    big = data(rng, (1000, k), dtype)
    a = (
        mx.array(big.T.copy(), dtype=MX[dtype]).T
        if layout == "a_transposed"
        else mx.array(big, dtype=MX[dtype])
    )
    w = mx.array(data(rng, (n, k) if layout == "b_transposed" else (k, n), dtype), dtype=MX[dtype])
    b = w.T if layout == "b_transposed" else w
    with mx.stream(mx.gpu):
        one_row = [as_f32(a[i : i + 1] @ b) for i in range(rows)]
    mx.eval(one_row)
    one_row = [np.array(r).tobytes() for r in one_row]
    for m in [1, 2, 7, 8, 9, 31, 100, 255, rows]:
        if layout == "batched" and m % 2 == 0:
            out = on(mx.gpu, lambda x: as_f32(mx.reshape(x, (2, m // 2, k)) @ b), a[:m]).reshape(
                m, n
            )
        else:
            out = on(mx.gpu, lambda x: as_f32(x @ b), a[:m])
        for i in range(m):
            assert out[i].tobytes() == one_row[i], f"row {i} of a {m}-row product differs"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shapes",
    [((1, 4096), (4096, 4096)), ((64, 300), (300, 200)), ((700, 300), (300, 260))],
    ids=str,
)
def test_same_bits_run_to_run(dtype, shapes):
    rng = seeded_rng("runs", dtype, shapes)
    a, b = (mx.array(data(rng, s, dtype), dtype=MX[dtype]) for s in shapes)
    first = gpu_bits(mx.matmul, a, b)
    for _ in range(3):
        assert gpu_bits(mx.matmul, a, b) == first


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("rows", [4, 300])
def test_gradients_match_the_cpu(dtype, rows):
    """vjp of matmul (products with transposed operands) on the GPU against the CPU."""
    rng = seeded_rng("vjp", dtype, rows)
    a, b, cot = (data(rng, s, dtype) for s in [(rows, 48), (48, 36), (rows, 36)])

    def grads(x, y, t):
        _, (ga, gb) = mx.vjp(mx.matmul, [x, y], [t])
        return [as_f32(ga), as_f32(gb)]

    args = [mx.array(v, dtype=MX[dtype]) for v in (a, b, cot)]
    (ga_cpu, gb_cpu), (ga_gpu, gb_gpu) = both(grads, *args)
    for cpu, gpu, bound in [
        (ga_cpu, ga_gpu, np.abs(cot.astype(np.float64)) @ np.abs(b.T.astype(np.float64))),
        (gb_cpu, gb_gpu, np.abs(a.T.astype(np.float64)) @ np.abs(cot.astype(np.float64))),
    ]:
        limit = SUM_TOL[dtype] * bound + OUT_TOL[dtype] * np.abs(cpu)
        assert np.all(np.abs(gpu.astype(np.float64) - cpu) <= limit)


def test_complex64_runs_the_cpu_kernel():
    rng = seeded_rng("complex")
    a = (rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))).astype(np.complex64)
    b = (rng.standard_normal((7, 3)) + 1j * rng.standard_normal((7, 3))).astype(np.complex64)
    cpu, gpu = both(mx.matmul, mx.array(a), mx.array(b))
    assert cpu.tobytes() == gpu.tobytes()


TILED_SCRIPT = """
import numpy as np, nuvec as mx
rng = np.random.default_rng(0)
worst = 0.0
for dtype in (mx.float32, mx.float16, mx.bfloat16, mx.float64):
    for (m, k, n), tb in [((300, 100, 70), False), ((513, 77, 129), True), ((260, 1, 5), False)]:
        a = rng.uniform(-1, 1, (m, k)); b = rng.uniform(-1, 1, (n, k) if tb else (k, n))
        A, B = mx.array(a).astype(dtype), mx.array(b).astype(dtype)
        B = B.T if tb else B
        out = []
        for dev in (mx.cpu, mx.gpu):
            with mx.stream(dev):
                out.append(np.array((A @ B).astype(mx.float64)))
        bound = np.abs(np.array(A.astype(mx.float64))) @ np.abs(np.array(B.astype(mx.float64)))
        tol = {mx.float64: 1e-14, mx.float32: 2e-6}.get(dtype, 2e-6)
        rnd = {mx.float16: 2.0**-10, mx.bfloat16: 2.0**-7}.get(dtype, 0.0)
        excess = np.abs(out[1] - out[0]) - tol * bound - rnd * np.abs(out[0])
        worst = max(worst, float(np.max(excess, initial=-1.0)))
print("WORST", worst)
"""


def test_tiled_kernels_without_cublaslt():
    """NUVEC_CUBLASLT=off: products above ROW_INDEPENDENT_ROWS rows run nuvec's tiled kernels
    (tensor cores for the half types)."""
    env = dict(os.environ, NUVEC_CUBLASLT="off")
    out = subprocess.run(
        [sys.executable, "-c", TILED_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    worst = float(out.stdout.split("WORST")[1])
    assert worst <= 0.0, worst
