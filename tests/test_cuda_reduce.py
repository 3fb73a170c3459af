"""Reductions, arg-reductions, softmax and logsumexp on the GPU against the CPU backend (docs/cuda.md).

Exact ops (integer sums and products, which wrap the same way in any order; max, min, all, any;
argmax, argmin) must match bit for bit; float sums and products within a tolerance, since the GPU
adds in another (fixed) order. Shapes reach each of the kernel's layouts: rows, columns,
interleaved axes, reductions cut into chunks, and sizes around the block of 256 threads.
"""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import assert_same, needs_gpu
from helpers import ALL, MX, NP, seeded_rng, to_np

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

HALF = ("float16", "bfloat16")


def on(device, fn, *args):
    with mx.stream(device):
        out = fn(*args)
    mx.eval(out)
    return [to_np(o) for o in out] if isinstance(out, (list, tuple)) else to_np(out)


def both(fn, *args):
    return on(mx.cpu, fn, *args), on(mx.gpu, fn, *args)


def values(shape, name, rng, special=False, lo=-3.0, hi=3.0, unit=False):
    """Random values of dtype `name` (small integers, so ties occur), optionally with NaN and inf;
    `unit`: complex values of modulus 1 (their products stay exact)."""
    size = int(np.prod(shape))
    if name == "bool":
        v = rng.random(size) < 0.5
    elif name == "complex64" and unit:
        v = rng.choice(np.array([1, -1, 1j, -1j], np.complex64), size)
    elif name == "complex64":
        v = (rng.integers(-3, 4, size) + 1j * rng.integers(-3, 4, size)).astype(np.complex64)
    elif np.issubdtype(NP[name], np.integer):
        v = rng.integers(0 if name.startswith("u") else -9, 10, size)
    else:
        v = rng.uniform(lo, hi, size)
        if special and size:
            idx = rng.choice(size, max(1, size // 10), replace=False)
            v[idx] = rng.choice([np.nan, np.inf, -np.inf, -0.0], idx.size)
    return mx.array(np.asarray(v).astype(NP[name]).reshape(shape), dtype=MX[name])


def tolerance(name, op):
    if op == "sum" and name == "float32":
        return 2e-5
    if op == "prod" and name == "float32":
        return 1e-4
    if op in ("sum", "prod") and name == "float64":
        return 1e-12
    if op in ("sum", "prod") and name in HALF:
        return 1e-2
    return 0.0


SHAPES_AXES = [
    ((7,), None),
    ((0,), None),
    ((3, 0, 4), 1),
    ((3, 0, 4), (0, 2)),
    ((), None),
    ((255,), 0),
    ((257,), -1),
    ((3, 5, 7), -1),
    ((3, 5, 7), 0),
    ((3, 5, 7), 1),
    ((3, 5, 7), (0, 2)),
    ((3, 5, 7), (0, 1)),
    ((2, 300, 4), (1, 2)),
    ((1000, 33), 0),
    ((33, 1000), 1),
    ((4, 1, 6), (1,)),
]


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "all", "any"])
@pytest.mark.parametrize("name", ALL)
def test_reduce_matches_cpu(op, name):
    rng = seeded_rng("cuda-reduce", op, name)
    for shape, axis in SHAPES_AXES:
        if op in ("max", "min") and 0 in shape:
            continue  # an error on every device
        special = name not in HALF or op not in ("sum", "prod")
        prod = op == "prod"
        x = values(
            shape, name, rng, special, lo=0.9 if prod else -3.0, hi=1.1 if prod else 3.0, unit=prod
        )
        for keepdims in (False, True):
            cpu, gpu = both(lambda: getattr(mx, op)(x, axis=axis, keepdims=keepdims))
            tol = tolerance(name, op)
            assert_same(cpu, gpu, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["int32", "float32", "float16", "int64", "complex64"])
def test_reduce_strided_and_broadcast_inputs(name):
    rng = seeded_rng("cuda-reduce-strided", name)
    x = values((40, 30, 6), name, rng)
    views = {
        "transposed": mx.transpose(x, (2, 0, 1)),
        "sliced": x[::3, 2:, ::-1],
        "broadcast": mx.broadcast_to(x[:, :1, :], (40, 30, 6)),
    }
    for v in views.values():
        for axis in (None, 0, 1, 2, (0, 2), (1, 2)):
            for op in ("sum", "max", "any"):
                cpu, gpu = both(lambda: getattr(mx, op)(v, axis=axis))
                tol = tolerance(name, op)
                assert_same(cpu, gpu, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "shape,axis", [((10**6,), None), ((1000, 1000), 0), ((1000, 1000), 1), ((3, 400000), 1)]
)
def test_float32_sums_are_accurate_and_the_same_bits_run_to_run(shape, axis):
    x = mx.array(seeded_rng("cuda-big-sum", shape).uniform(0, 1, shape).astype(np.float32))
    ref = np.sum(np.array(x).astype(np.float64), axis=axis)
    gpu = on(mx.gpu, lambda: mx.sum(x, axis=axis))
    np.testing.assert_allclose(gpu, ref, rtol=1e-6)
    for _ in range(2):
        assert on(mx.gpu, lambda: mx.sum(x, axis=axis)).tobytes() == gpu.tobytes()


def test_mean_var_std_and_integer_wrap():
    rng = seeded_rng("cuda-stats")
    x = mx.array(rng.normal(size=(64, 513)).astype(np.float32))
    for f in (mx.mean, mx.var, mx.std):
        cpu, gpu = both(lambda: f(x, axis=1))
        assert_same(cpu, gpu, rtol=1e-5, atol=1e-6)
    big = mx.array(np.full(1000, 2**62, dtype=np.int64))
    assert_same(*both(lambda: mx.sum(big)))
    assert_same(*both(lambda: mx.prod(mx.array(np.arange(1, 40, dtype=np.int32)))))


@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("name", ALL)
def test_arg_reduce_matches_cpu(is_max, name):
    rng = seeded_rng("cuda-arg", is_max, name)
    f = mx.argmax if is_max else mx.argmin
    for shape, axis in [
        ((7,), None),
        ((), None),
        ((3, 5, 7), 0),
        ((3, 5, 7), 1),
        ((3, 5, 7), -1),
        ((2, 1000), 1),
        ((1000, 3), 0),
        ((300, 257), 1),
        ((100000, 3), 0),
        ((3, 100000), 1),
    ]:
        x = values(shape, name, rng, special=name != "complex64")
        for keepdims in (False, True):
            assert_same(*both(lambda: f(x, axis=axis, keepdims=keepdims)))
        if len(shape) == 3:
            assert_same(*both(lambda: f(mx.transpose(x, (2, 1, 0)), axis=axis)))


def test_arg_reduce_picks_the_first_tie_and_the_first_nan():
    x = mx.array(
        np.array([[1, 5, 5, 2, 5], [np.nan, 1, np.nan, 9, 0], [0, -0.0, 0, -1, -1]], np.float32)
    )
    for f in (mx.argmax, mx.argmin):
        cpu, gpu = both(lambda: f(x, axis=1))
        assert_same(cpu, gpu)
    assert on(mx.gpu, lambda: mx.argmax(x, axis=1)).tolist() == [1, 0, 0]
    for n, at in [(5000, [1234, 4000]), (10**6, [700001, 900000])]:  # one block; chunks joined
        row = np.zeros(n, np.float32)
        row[at] = 7
        assert on(mx.gpu, lambda: mx.argmax(mx.array(row))).item() == at[0]
        row[at[1]] = np.nan
        assert on(mx.gpu, lambda: mx.argmin(mx.array(row))).item() == at[1]


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("fn", ["softmax", "logsumexp"])
def test_softmax_and_logsumexp_match_cpu(fn, name):
    rng = seeded_rng("cuda-softmax", fn, name)
    tol = 1e-5 if name in ("float32", "float64") else 1e-2
    for shape, axis in [
        ((7,), -1),
        ((5, 1), -1),
        ((33, 255), -1),
        ((4, 3, 5), (1, 2)),
        ((2, 5000), -1),
        ((6, 4), 0),
        ((3, 0), -1),
    ]:
        if fn == "logsumexp" and 0 in shape:
            continue
        x = values(shape, name, rng, lo=-20, hi=20)
        cpu, gpu = both(lambda: getattr(mx, fn)(x, axis=axis))
        assert_same(cpu, gpu, rtol=tol, atol=tol * 1e-2)
    rows = mx.array(
        np.array([[1, np.nan, 2], [-np.inf] * 3, [np.inf, 1, 2], [1, 2, -np.inf]], np.float32)
    )
    cpu, gpu = both(lambda: getattr(mx, fn)(rows, axis=-1))
    assert_same(cpu, gpu, rtol=1e-6)
    strided = mx.transpose(values((40, 30), name, rng), (1, 0))
    assert_same(*both(lambda: getattr(mx, fn)(strided, axis=-1)), rtol=tol, atol=tol * 1e-2)


def test_reductions_give_the_same_bits_run_to_run():
    x = mx.array(seeded_rng("cuda-repeat").normal(size=(300, 70, 9)).astype(np.float32))
    fns = [
        lambda: mx.sum(x, axis=(0, 2)),
        lambda: mx.prod(x, axis=1),
        lambda: mx.softmax(x, axis=-1),
        lambda: mx.logsumexp(x, axis=(1, 2)),
        lambda: mx.sum(x),
    ]
    for f in fns:
        first = on(mx.gpu, f)
        assert on(mx.gpu, f).tobytes() == first.tobytes()
