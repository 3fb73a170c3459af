"""sort, argsort, partition, argpartition and topk against NumPy: every dtype, any axis (negative,
None), stability with repeated keys, NaNs last, signed zeros kept, empty and non-contiguous
inputs, bad axes and out-of-range kth/k; differential checks against MLX where it is installed."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from _impl import IS_MLX, mx
from helpers import (
    ALL,
    FLOATS,
    INEXACT,
    NP,
    assert_array_equal_np,
    np_values,
    seeded_rng,
    to_mx,
    to_np,
)

REAL = tuple(d for d in ALL if d != "complex64")


def sample(name, shape, rng, repeats=True, specials=False):
    """Values that `name` holds exactly; few distinct ones when `repeats` (ties everywhere)."""
    size = int(np.prod(shape))
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    hi = 6 if repeats else 1000
    if name in ("uint8", "int8"):
        hi = min(hi, 100)
    lo = 0 if name.startswith("u") else -hi
    v = rng.integers(lo, hi, size).astype(np.float64)
    if name in INEXACT:
        v = v / 2 if repeats else rng.standard_normal(size) * 100
        if specials and size:
            pool = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf])
            pick = rng.random(size) < 0.2
            v[pick] = rng.choice(pool, pick.sum())
    if name == "complex64":
        im = rng.integers(-3, 3, size) / 2.0
        v = v + 1j * im
    return np_values(v.reshape(shape), name)


def stable_argsort(x, axis):
    return np.argsort(x, axis=axis, kind="stable")


def check_sort(x_np, name, X, axis):
    ref_axis = -1 if axis is None else axis
    ref = x_np.reshape(-1) if axis is None else x_np
    idx = stable_argsort(ref, ref_axis)
    got_idx = mx.argsort(X, axis=axis)
    assert_array_equal_np(
        got_idx, idx.astype(np.uint32), dtype="uint32", err_msg=f"argsort {name} axis={axis}"
    )
    got = np.ascontiguousarray(to_np(mx.sort(X, axis=axis)))
    want = np.ascontiguousarray(np.take_along_axis(ref, idx, ref_axis))
    assert got.shape == want.shape
    # Bit-for-bit: signed zeros and NaNs keep their input order.
    assert np.array_equal(got.view(np.uint8), want.astype(got.dtype).view(np.uint8)), (
        f"sort {name} axis={axis}"
    )


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("axis", [-1, 0, 1, -2, None])
def test_sort_argsort_all_dtypes(name, axis):
    rng = seeded_rng("sort", name, axis)
    x = sample(name, (7, 300), rng, specials=name in FLOATS)
    check_sort(x, name, to_mx(x, name), axis)


@pytest.mark.parametrize(
    "name", ["float32", "int32", "float64", "uint8", "int64", "float16", "bfloat16"]
)
@pytest.mark.parametrize("n", [1, 2, 95, 97, 1000, 70_000])
def test_sort_row_lengths(name, n):
    """Short rows take a comparison sort, long ones the radix sort; both stable."""
    rng = seeded_rng("rows", name, n)
    for repeats in (True, False):
        x = sample(name, (n,), rng, repeats=repeats, specials=name in FLOATS and repeats)
        check_sort(x, name, to_mx(x, name), -1)


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_nans_last_and_signed_zeros_kept(name):
    x = np_values([0.0, np.nan, -0.0, 1.0, -np.inf, np.nan, 0.0, -0.0, np.inf, -1.0], name)
    X = to_mx(x, name)
    got = to_np(mx.sort(X))
    want = np.sort(x.astype(np.float32), kind="stable")
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert_array_equal_np(
        mx.argsort(X), np.argsort(x, kind="stable").astype(np.uint32), dtype="uint32"
    )


@pytest.mark.parametrize("special", [-0.0, np.nan, -np.nan])
@pytest.mark.parametrize("at", [0, 7, 15, 16, 69_999])
def test_one_special_in_a_long_float32_row(special, at):
    # Long float32 rows take their keys a vector at a time: one lane that cannot be decoded
    # (-0.0 keeps its sign, NaNs sort last) must send the row to the indexed sort wherever it is.
    x = np.random.default_rng(at).standard_normal(70_000).astype(np.float32)
    x[at] = special
    x[at + 1 if at + 1 < x.size else 0] = 0.0
    got = to_np(mx.sort(mx.array(x)))
    want = np.sort(x, kind="stable")
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_negative_nan_sorts_last():
    x = np.array([1.0, -np.nan, -2.0, np.nan], dtype=np.float32)
    assert np.signbit(x[1])
    assert_array_equal_np(
        mx.argsort(mx.array(x)), np.array([2, 0, 1, 3], np.uint32), dtype="uint32"
    )


@pytest.mark.nuvec_only
def test_complex_nan_order_is_numpys():
    """NumPy's order [R + Rj, R + nanj, nan + Rj, nan + nanj] (MLX orders them otherwise)."""
    nan = np.nan
    x = np.array(
        [
            complex(nan, nan),
            complex(nan, 1),
            complex(2, nan),
            complex(1, 1),
            complex(1, nan),
            complex(nan, -1),
            complex(1, -1),
            complex(0, 5),
        ],
        dtype=np.complex64,
    )
    assert_array_equal_np(
        mx.argsort(mx.array(x)), np.argsort(x, kind="stable").astype(np.uint32), dtype="uint32"
    )


@pytest.mark.parametrize("name", ["float32", "int16", "complex64", "bfloat16"])
def test_non_contiguous_inputs(name):
    rng = seeded_rng("views", name)
    x = sample(name, (40, 30), rng)
    X = to_mx(x, name)
    check_sort(np.ascontiguousarray(x.T), name, X.T, -1)
    check_sort(np.ascontiguousarray(x.T), name, X.T, 0)
    check_sort(x[::3, 1::2], name, X[::3, 1::2], -1)
    check_sort(x[::-2], name, X[::-2], 0)


@pytest.mark.parametrize("op", ["sort", "argsort"])
def test_empty_and_scalar(op):
    f = getattr(mx, op)
    assert f(mx.zeros((3, 0)), axis=-1).shape == (3, 0)
    assert f(mx.zeros((0, 4)), axis=0).shape == (0, 4)
    assert f(mx.array(2.0), axis=None).shape == (1,)
    with pytest.raises(IndexError):
        f(mx.array(2.0))


@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6), data=st.data())
def test_sort_hypothesis_shapes_axes(shape, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    name = data.draw(st.sampled_from(["float32", "int8", "uint64", "float16"]))
    x = sample(name, shape, seeded_rng("hyp", shape, axis, name))
    check_sort(x, name, to_mx(x, name), axis)


# ----------------------------------------------------------------------------- partition, topk
def check_partition(x_np, kth, axis, name):
    X = to_mx(x_np, name)
    ref = x_np.reshape(-1) if axis is None else x_np
    ax = -1 if axis is None else axis
    srt = np.sort(ref.astype(NP[name]), axis=ax)
    n = ref.shape[ax]
    k = kth % n
    for got in (
        to_np(mx.partition(X, kth, axis=axis)),
        np.take_along_axis(ref, to_np(mx.argpartition(X, kth, axis=axis)).astype(np.int64), ax),
    ):
        got = np.moveaxis(got.astype(srt.dtype), ax, -1)
        s = np.moveaxis(srt, ax, -1)
        # The same multiset, the kth in place, nothing larger before it, nothing smaller after.
        assert np.array_equal(np.sort(got, axis=-1), s, equal_nan=True)
        assert np.array_equal(got[..., k], s[..., k], equal_nan=True)
        pivot = got[..., k : k + 1]
        if name != "complex64":
            below, above = got[..., :k], got[..., k + 1 :]
            assert not np.any(below > pivot), "an element before kth is larger"
            assert not np.any(
                (above < pivot) | (np.isnan(pivot) & ~np.isnan(above) if name in FLOATS else False)
            )
    idx = to_np(mx.argpartition(X, kth, axis=axis))
    assert np.array_equal(
        np.sort(np.moveaxis(idx, ax, -1), axis=-1),
        np.broadcast_to(np.arange(n), np.moveaxis(idx, ax, -1).shape),
    )


@pytest.mark.parametrize("name", ALL)
def test_partition_all_dtypes(name):
    rng = seeded_rng("partition", name)
    x = sample(name, (5, 41), rng, specials=name in FLOATS)
    for kth in (0, 7, 20, 40, -1, -41):
        check_partition(x, kth, -1, name)
    check_partition(x, 3, 0, name)
    check_partition(x, 100, None, name)


@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7), data=st.data())
def test_partition_hypothesis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    kth = data.draw(st.integers(-shape[axis], shape[axis] - 1))
    x = sample("float32", shape, seeded_rng("hpart", shape, axis, kth))
    check_partition(x, kth, axis, "float32")


@pytest.mark.parametrize("name", ["float32", "int32", "uint8", "float16", "complex64", "bool"])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_topk(name, axis):
    rng = seeded_rng("topk", name, axis)
    x = sample(name, (6, 9), rng, repeats=False)
    ref = x.reshape(-1) if axis is None else x
    ax = -1 if axis is None else axis
    for k in (0, 1, 3, ref.shape[ax]):
        got = mx.topk(to_mx(x, name), k, axis=axis)
        want = np.take(np.sort(ref, axis=ax), np.arange(ref.shape[ax] - k, ref.shape[ax]), axis=ax)
        assert_array_equal_np(mx.sort(got, axis=-1 if axis is None else axis), want, dtype=name)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call",
    [
        lambda x: mx.sort(x, axis=2),
        lambda x: mx.argsort(x, axis=-3),
        lambda x: mx.partition(x, 0, axis=2),
        lambda x: mx.argpartition(x, 0, axis=-3),
        lambda x: mx.topk(x, 1, axis=5),
    ],
)
def test_bad_axis_is_index_error(call):
    with pytest.raises(IndexError):
        call(mx.zeros((2, 3)))


@pytest.mark.parametrize(
    "op,arg", [("partition", 3), ("partition", -4), ("argpartition", 3), ("topk", 4), ("topk", -1)]
)
def test_kth_and_k_out_of_range(op, arg):
    with pytest.raises(ValueError) as info:
        getattr(mx, op)(mx.zeros((2, 3)), arg)
    if not IS_MLX:
        assert info.value.op_name == op
        assert isinstance(info.value, mx.OpError)


def test_partition_of_empty_axis_is_an_error():
    with pytest.raises(ValueError):
        mx.partition(mx.zeros((2, 0)), 0)
    assert mx.topk(mx.zeros((2, 0)), 0).shape == (2, 0)


@pytest.mark.nuvec_only
def test_axis_error_names_the_op():
    with pytest.raises(mx.AxisError) as info:
        mx.argsort(mx.zeros((2, 3)), axis=2)
    assert info.value.op_name == "argsort"


# ----------------------------------------------------------------------------- determinism, MLX
def outputs_per_thread_count(compute, counts=(1, 2, 3)):
    """compute() (a list of NumPy arrays) run under each thread count; the count restored."""
    before = mx.get_num_threads()
    try:
        outs = []
        for n in counts:
            mx.set_num_threads(n)
            outs.append(compute())
    finally:
        mx.set_num_threads(before)
    return outs


def assert_all_equal(outs):
    for o in outs[1:]:
        for a, b in zip(o, outs[0]):
            assert np.array_equal(a, b)


@pytest.mark.nuvec_only
def test_same_result_for_any_thread_count():
    x = mx.array(seeded_rng("threads").integers(0, 50, (3, 200_000)).astype(np.float32))
    assert_all_equal(
        outputs_per_thread_count(
            lambda: [
                np.array(mx.argsort(x)),
                np.array(mx.sort(x, axis=0)),
                np.array(mx.argpartition(x, 777)),
            ]
        )
    )


@pytest.mark.skipif(IS_MLX, reason="compares nuvec with MLX")
@pytest.mark.parametrize("name", ["float32", "int32", "float16", "bfloat16", "uint16", "complex64"])
def test_matches_mlx(name):
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("mlx", name)
    x = sample(name, (4, 500), rng, specials=name in FLOATS)
    mdt = getattr(mlx, name)
    src = x.astype(np.float32) if name == "bfloat16" else x
    M = mlx.array(src).astype(mdt)
    X = to_mx(x, name)
    for axis in (-1, 0, None):
        a = np.array(mlx.argsort(M, axis=axis))
        assert np.array_equal(np.array(mx.argsort(X, axis=axis)), a)
        ms = mlx.sort(M, axis=axis)
        ms = ms.astype(mlx.float32) if name == "bfloat16" else ms
        assert np.array_equal(to_np(mx.sort(X, axis=axis)), np.array(ms), equal_nan=True)


@pytest.mark.parametrize("name", ["float32", "float16", "int8", "int64", "float64"])
@pytest.mark.parametrize("kind", ["random", "ties", "sorted", "reversed"])
def test_partition_of_long_rows(name, kind):
    # Rows past the comparison sort's length take nuvec's radix select (the kth key found byte by
    # byte, then one pass around it): the partition property for every kth class, specials among
    # the floats, and rows of one or few values.
    rng = seeded_rng("partition-long", name, kind)
    n = 3000
    if kind == "random":
        x = sample(name, (2, n), rng, specials=name in FLOATS)
    elif kind == "ties":
        x = rng.integers(0, 3, (2, n)).astype(NP[name])
    else:  # ascending (int8: in runs of 120)
        x = np.broadcast_to(np.arange(n) % (120 if name == "int8" else n), (2, n)).astype(NP[name])
        x = (x if kind == "sorted" else x[:, ::-1]).copy()
    for kth in (0, 1, 99, n // 2, n - 2, -1):
        check_partition(x, kth, -1, name)
