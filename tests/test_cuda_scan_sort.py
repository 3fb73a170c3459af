"""Scans, sorts and partitions on the GPU against the CPU backend (docs/cuda.md).

Scans combine in the CPU's sequential order, so sums, products, max and min match bit for bit
(logcumsumexp within a tolerance: the GPU's exp and log may round differently; complex products
use unit values, which multiply exactly). Sorts are stable with the CPU's order (NaNs last,
-0.0 equal to 0.0), so sort and argsort match exactly; a partition is checked to be one.
"""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import assert_same, needs_gpu
from helpers import ALL, FLOATS, seeded_rng
from test_cuda_reduce import both, on, values

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

SCANS = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")
SHAPES_AXES = [
    ((7,), None),
    ((), None),
    ((0, 4), 1),
    ((3, 5, 7), 0),
    ((3, 5, 7), 1),
    ((3, 5, 7), -1),
    ((2, 1000), 1),
    ((1000, 3), 0),
    ((257, 2), -1),
]


def scan_tolerance(op, name):
    if op == "logcumsumexp":
        return 1e-2 if name in ("float16", "bfloat16") else 1e-5
    return 0.0


@pytest.mark.parametrize("op", SCANS)
@pytest.mark.parametrize("name", ALL)
def test_scans_match_cpu(op, name):
    if op == "logcumsumexp" and name not in FLOATS:
        pytest.skip("integer and complex logcumsumexp run the CPU's kernel")
    rng = seeded_rng("cuda-scan", op, name)
    tol = scan_tolerance(op, name)
    for shape, axis in SHAPES_AXES:
        prod = op == "cumprod"
        x = values(shape, name, rng, True, lo=0.5 if prod else -3, hi=1.5 if prod else 3, unit=prod)
        for reverse in (False, True):
            for inclusive in (True, False):
                f = getattr(mx, op)
                cpu, gpu = both(lambda: f(x, axis=axis, reverse=reverse, inclusive=inclusive))
                assert_same(cpu, gpu, rtol=tol, atol=tol)
        if len(shape) == 3:
            assert_same(
                *both(lambda: getattr(mx, op)(mx.transpose(x, (1, 2, 0)), axis=axis)),
                rtol=tol,
                atol=tol,
            )


@pytest.mark.parametrize(
    "op,name",
    [
        ("cumsum", "int32"),
        ("cumprod", "int8"),
        ("cumsum", "uint64"),
        ("cummax", "float32"),
        ("cummin", "float64"),
        ("cummax", "bool"),
        ("cummin", "int16"),
        ("cumprod", "bool"),
    ],
)
def test_long_rows_scanned_in_chunks_match_cpu_exactly(op, name):
    rng = seeded_rng("cuda-scan-long", op, name)
    for shape, axis in [((100001,), 0), ((3, 50000), 1), ((20000, 2), 0), ((2, 4097), -1)]:
        x = values(shape, name, rng, special=True)
        for reverse in (False, True):
            for inclusive in (True, False):
                f = getattr(mx, op)
                assert_same(*both(lambda: f(x, axis=axis, reverse=reverse, inclusive=inclusive)))


def test_scans_give_the_same_bits_run_to_run():
    x = mx.array(seeded_rng("cuda-scan-repeat").normal(size=(64, 3000)).astype(np.float32))
    first = on(mx.gpu, lambda: mx.cumsum(x, axis=1))
    assert on(mx.gpu, lambda: mx.cumsum(x, axis=1)).tobytes() == first.tobytes()
    assert_same(on(mx.cpu, lambda: mx.cumsum(x, axis=1)), first)


SORT_SHAPES_AXES = [
    ((7,), -1),
    ((1,), 0),
    ((0, 3), 0),
    ((3, 5, 7), 0),
    ((3, 5, 7), 1),
    ((3, 5, 7), -1),
    ((4, 3000), -1),
    ((3000, 4), 0),
    ((2, 100000), -1),
]


@pytest.mark.parametrize("indices", [False, True])
@pytest.mark.parametrize("name", ALL)
def test_sort_and_argsort_match_cpu_exactly(indices, name):
    rng = seeded_rng("cuda-sort", indices, name)
    f = mx.argsort if indices else mx.sort
    for shape, axis in SORT_SHAPES_AXES:
        x = values(shape, name, rng, special=name != "complex64")
        assert_same(*both(lambda: f(x, axis=axis)))
        if len(shape) == 3:
            assert_same(*both(lambda: f(mx.transpose(x, (2, 0, 1)), axis=axis)))
            assert_same(*both(lambda: f(x[::2, ::-1], axis=axis)))


def test_sort_keeps_ties_in_order_and_nans_last():
    x = mx.array(np.array([3, np.nan, -0.0, 0.0, 1, -np.inf, np.nan, 0.0, 3, -0.0], np.float32))
    assert on(mx.gpu, lambda: mx.argsort(x)).tolist() == [5, 2, 3, 7, 9, 4, 0, 8, 1, 6]
    s = on(mx.gpu, lambda: mx.sort(x))
    assert np.signbit(s[1:5]).tolist() == [True, False, False, True]  # the elements themselves
    ties = mx.array(np.repeat(np.arange(5, dtype=np.int16), 2000)[::-1].copy())
    assert_same(*both(lambda: mx.argsort(ties)))


@pytest.mark.parametrize("name", ["float32", "int8", "uint64", "float16", "bool"])
def test_partition_is_a_partition_around_the_cpus_kth(name):
    rng = seeded_rng("cuda-partition", name)
    for shape, axis, kth in [
        ((50,), -1, 7),
        ((3, 40, 5), 1, 39),
        ((3, 40, 5), 0, 0),
        ((6, 5000), -1, 2500),
    ]:
        x = values(shape, name, rng)
        xn = np.moveaxis(on(mx.cpu, lambda: x), axis, -1)
        cpu, gpu = both(lambda: mx.partition(x, kth, axis=axis))
        cpu, gpu = np.moveaxis(cpu, axis, -1), np.moveaxis(gpu, axis, -1)
        assert_same(cpu[..., kth], gpu[..., kth])
        assert (gpu[..., :kth] <= gpu[..., kth : kth + 1]).all() and (
            gpu[..., kth + 1 :] >= gpu[..., kth : kth + 1]
        ).all()
        idx = np.moveaxis(on(mx.gpu, lambda: mx.argpartition(x, kth, axis=axis)), axis, -1)
        np.testing.assert_array_equal(np.take_along_axis(xn, idx.astype(np.int64), -1), gpu)
        assert (np.sort(idx, axis=-1) == np.arange(xn.shape[-1])).all()
