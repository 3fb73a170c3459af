"""take, take_along_axis, put_along_axis, slice and slice_update with array-valued starts, and
nonzero, against NumPy; scatter updates of complex arrays.
"""

import numpy as np
import pytest

from _impl import mx
from helpers import MX, assert_array_equal_np, np_values, seeded_rng, to_mx
from test_indexing import data_for, laid_out, values_for


# ----------------------------------------------------------------------------- take & co
@pytest.mark.parametrize("dt", ["bool", "int8", "float32", "bfloat16", "complex64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize(
    "axis,indices",
    [
        (None, [5, -1, 0, 5]),
        (None, [[0, 11], [-12, 3]]),
        (0, [2, -3, 1]),
        (1, [[3, 0], [-1, -1]]),
        (-1, [0]),
        (-2, []),
    ],
)
def test_take(dt, layout, axis, indices):
    a = data_for((3, 4), dt)
    x = laid_out(a, dt, layout)
    idx = np.array(indices, dtype=np.int64)
    got = mx.take(x, mx.array(idx, dtype=mx.int32), axis=axis)
    assert_array_equal_np(got, np.take(a, idx, axis=axis), dtype=dt)


@pytest.mark.parametrize(
    "index", [7, 0, pytest.param(-1, marks=pytest.mark.nuvec_only)]
)  # MLX fails on -1
def test_take_with_a_python_int(index):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_array_equal_np(mx.take(mx.array(a), index), np.take(a, index))


@pytest.mark.parametrize("dt", ["int16", "float32", "bfloat16"])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("kind", ["argsort", "partial", "broadcast"])
def test_take_along_axis(dt, axis, kind):
    rng = seeded_rng("tal", dt, axis, kind)
    a = np_values(rng.integers(-50, 50, (3, 4, 5)), dt)
    ax = axis
    if axis is None:
        idx = (
            rng.permutation(a.size)[:7].reshape(7) if kind != "argsort" else rng.permutation(a.size)
        )
    elif kind == "argsort":
        idx = np.argsort(a, axis=axis)
    elif kind == "partial":
        idx = np.take(np.argsort(a, axis=axis), np.arange(2), axis=axis)
    else:
        shape = [1, 1, 1]
        shape[ax] = 3
        idx = rng.integers(-a.shape[ax], a.shape[ax], shape)
    got = mx.take_along_axis(to_mx(a, dt), mx.array(idx), axis=axis)
    assert_array_equal_np(got, np.take_along_axis(a, idx, axis=axis), dtype=dt)


@pytest.mark.parametrize("dt", ["int8", "float32", "complex64"])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("values", ["scalar", "full", "broadcast"])
def test_put_along_axis(dt, axis, values):
    rng = seeded_rng("pal", dt, axis, values)
    a = data_for((3, 4, 5), dt)
    if axis is None:
        idx = rng.permutation(a.size)[:6]
    else:
        perm = np.argsort(rng.random(a.shape), axis=axis)
        idx = np.take(perm, np.arange(2), axis=axis)  # distinct along the axis
        idx = np.where(idx % 2 == 0, idx - a.shape[axis], idx)  # some negative
    if values == "scalar":
        v_np, v = np_values(-3, dt), mx.array(np_values(-3, dt), dtype=MX[dt])
    elif values == "full":
        v_np = values_for(np.arange(idx.size).reshape(idx.shape), dt, salt=5)
        v = to_mx(v_np, dt)
    else:
        v_np = values_for(np.arange(idx.shape[-1]), dt, salt=5)
        v = to_mx(v_np, dt)
    expected = a.copy()
    np.put_along_axis(expected, idx, v_np, axis=axis)
    x = to_mx(a, dt)
    got = mx.put_along_axis(x, mx.array(idx), v, axis=axis)
    assert_array_equal_np(got, expected, dtype=dt)
    assert_array_equal_np(x, a, dtype=dt)


@pytest.mark.parametrize("shape, axis", [((1, 40), 1), ((1, 1, 40), -1), ((1, 40, 1), 1)])
@pytest.mark.parametrize("op", ["take", "put_scalar", "put_full"])
def test_along_axis_of_one_row(shape, axis, op):
    # A batch of one (a decode step's logits) along its long axis: the same results.
    rng = seeded_rng("one-row", shape, op)
    a = rng.standard_normal(shape).astype(np.float32)
    idx = np.take(np.argsort(a, axis=axis), np.arange(25), axis=axis)
    idx = np.where(idx % 3 == 0, idx - shape[axis], idx)  # some negative
    x, i = mx.array(a), mx.array(idx.astype(np.int32))
    if op == "take":
        got, want = mx.take_along_axis(x, i, axis=axis), np.take_along_axis(a, idx, axis=axis)
    else:
        v = (
            np.float32(-2.5)
            if op == "put_scalar"
            else rng.standard_normal(idx.shape).astype(np.float32)
        )
        want = a.copy()
        np.put_along_axis(want, idx, v, axis=axis)
        got = mx.put_along_axis(x, i, mx.array(v), axis=axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.array(got), want)


# ----------------------------------------------------------------------------- dynamic slices
# MLX's slice_size gives the size of every dimension of the result; the axes not in `axes`
# start at 0.
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize(
    "start,axes,size",
    [
        ([1, 2], (0, 2), (2, 4, 3)),
        ([0], (1,), (3, 2, 5)),
        ([2, 0, 1], (0, 1, 2), (1, 4, 4)),
        ([3, 1], (2, 0), (2, 1, 2)),
        ([1], (1,), (2, 3, 1)),
        ([0], (0,), (0, 4, 5)),
    ],
)
@pytest.mark.parametrize("start_dtype", ["int32", "int64", "uint32"])
def test_slice_with_array_start(layout, start, axes, size, start_dtype):
    a = data_for((3, 4, 5), "float32")
    x = laid_out(a, "float32", layout)
    got = mx.slice(x, mx.array(start, dtype=MX[start_dtype]), axes, size)
    first = [0, 0, 0]
    for s, ax in zip(start, axes):
        first[ax] = s
    assert_array_equal_np(got, a[tuple(slice(f, f + n) for f, n in zip(first, size))])


def test_slice_with_a_scalar_start():
    # MLX's documented example: a 0-d start for one axis.
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    assert_array_equal_np(mx.slice(mx.array(a), mx.array(1), (0,), (1, 2)), a[1:2, 0:2])
    assert_array_equal_np(mx.slice(mx.array(a), mx.array(1), (1,), (2, 1)), a[:, 1:2])


def test_slice_with_a_computed_start():
    a = np.arange(20, dtype=np.int32).reshape(4, 5)
    x = mx.array(a)
    start = mx.array([5, 4]) - mx.array([3, 2])  # [2, 2], known only when evaluated
    assert_array_equal_np(mx.slice(x, start, (0, 1), (2, 3)), a[2:4, 2:5])


def test_slice_update_with_a_scalar_start():
    a = np.zeros((3, 3), np.float32)
    got = mx.slice_update(mx.array(a), mx.ones((2, 3)), mx.array(1), (0,))
    a[1:3] = 1
    assert_array_equal_np(got, a)


@pytest.mark.parametrize("dt", ["bool", "int16", "float32", "complex64"])
@pytest.mark.parametrize(
    "start,axes,ushape",
    [
        ([1, 2], (0, 1), (2, 2, 5)),
        ([0], (2,), (3, 4, 5)),
        ([2, 3], (1, 2), (1, 2, 2)),
        ([1], (0,), (2, 1, 5)),
        ([0, 0, 0], (0, 1, 2), (3, 4, 5)),
    ],
)
def test_slice_update_with_array_start(dt, start, axes, ushape):
    a = data_for((3, 4, 5), dt)
    upd = values_for(np.arange(int(np.prod(ushape))).reshape(ushape), dt, salt=3)
    x = to_mx(a, dt)
    got = mx.slice_update(x, to_mx(upd, dt), mx.array(start), axes)
    full_start = [0, 0, 0]
    for s, ax in zip(start, axes):
        full_start[ax] = s
    expected = a.copy()
    expected[tuple(slice(s, s + n) for s, n in zip(full_start, ushape))] = upd
    assert_array_equal_np(got, expected, dtype=dt)
    assert_array_equal_np(x, a, dtype=dt)


@pytest.mark.nuvec_only  # MLX 0.32.4 writes past the axis (a start of 5 below reached row 1)
def test_slice_update_array_start_from_the_end_and_out_of_bounds():
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    x = mx.array(a)
    got = mx.slice_update(x, mx.ones((2, 2)), mx.array(-2), (1,))  # counts from the end
    want = a.copy()
    want[:, 4:6] = 1
    assert_array_equal_np(got, want)
    for start in (5, 7, -1, -7):  # windows that do not fit the axis
        with pytest.raises(IndexError, match="does not fit axis 1 of size 6"):
            mx.eval(mx.slice_update(x, mx.ones((2, 2)), mx.array(start), (1,)))
    assert_array_equal_np(x, a)


def test_slice_update_array_start_transforms():
    rng = seeded_rng("dynamic slice_update")
    x, u = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    w = np.arange(20.0).reshape(4, 5)
    at = mx.array([1, 2])

    def f(x, u):
        return mx.sum(mx.slice_update(x * 1.0, u * 3.0, at, (0, 1)) * mx.array(w))

    gx, gu = mx.grad(f, argnums=(0, 1))(mx.array(x), mx.array(u))
    want_x = w.copy()
    want_x[1:3, 2:5] = 0
    np.testing.assert_allclose(np.array(gx), want_x)
    np.testing.assert_allclose(np.array(gu), 3 * w[1:3, 2:5])
    tx, tu = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    _, (jt,) = mx.jvp(f, [mx.array(x), mx.array(u)], [mx.array(tx), mx.array(tu)])
    want = (want_x * tx).sum() + (3 * w[1:3, 2:5] * tu).sum()
    np.testing.assert_allclose(float(jt), want, rtol=1e-5)
    # vmap with one start for every example
    xs, us = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 2, 3))
    g = lambda x, u: mx.slice_update(x, u, at, (0, 1))  # noqa: E731
    want = xs.copy()
    want[:, 1:3, 2:5] = us
    np.testing.assert_allclose(np.array(mx.vmap(g)(mx.array(xs), mx.array(us))), want)


# MLX 0.32.4 writes the window into the first example alone where the update is shared or the
# batch axis is not the first.
@pytest.mark.nuvec_only
def test_slice_update_array_start_vmap_shared_update_and_later_axis():
    rng = seeded_rng("dynamic slice_update, later axis")
    xs, u = rng.standard_normal((3, 4, 5)), rng.standard_normal((2, 3))
    g = lambda x, u: mx.slice_update(x, u, mx.array([1, 2]), (0, 1))  # noqa: E731
    want = xs.copy()
    want[:, 1:3, 2:5] = u
    got = mx.vmap(g, in_axes=(0, None))(mx.array(xs), mx.array(u))
    np.testing.assert_allclose(np.array(got), want)
    got = mx.vmap(g, in_axes=(2, None), out_axes=2)(mx.array(np.moveaxis(xs, 0, 2)), mx.array(u))
    np.testing.assert_allclose(np.moveaxis(np.array(got), 2, 0), want)


# ----------------------------------------------------------------------------- nonzero
@pytest.mark.nuvec_only  # MLX has no nonzero
@pytest.mark.parametrize("dt", ["bool", "int8", "float32", "complex64"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (0, 3), (1, 1)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "lazy", "all-false"])
def test_nonzero(dt, shape, layout):
    rng = seeded_rng("nonzero", dt, shape, layout)
    a = np_values(rng.integers(-1, 2, shape) * (rng.random(shape) < 0.6), dt)
    if dt == "complex64":
        a = (a + 1j * (rng.random(shape) < 0.2)).astype(np.complex64)
    if layout == "all-false":
        a = np.zeros(shape, dtype=a.dtype)
    if layout == "lazy":
        x = mx.multiply(to_mx(a, dt), to_mx(np.ones(shape, a.dtype), dt))
    else:
        x = laid_out(a, dt, layout)
    got = mx.nonzero(x)
    expected = np.nonzero(a)
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_array_equal_np(g, e.astype(np.int64), dtype="int64")


@pytest.mark.nuvec_only
def test_nonzero_indices_round_trip():
    a = np.array([[0, 3, 0], [4, 0, 5]], dtype=np.int32)
    x = mx.array(a)
    idx = mx.nonzero(x)
    assert_array_equal_np(x[idx], a[np.nonzero(a)])


@pytest.mark.nuvec_only  # MLX's complex maximum/minimum updates are not checked here
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_at_orders_complex_numbers_lexicographically(op):
    # Ties in the real part are broken by the imaginary part, as maximum and sort order them.
    a = np.array([1 + 1j, 2 - 1j, 0 + 0j, 3 + 3j], np.complex64)
    idx = np.array([0, 0, 1, 2, 3, 1])
    v = np.array([1 + 2j, 0 + 9j, 2 + 1j, -1 + 0j, 3 - 3j, 2 - 5j], np.complex64)
    expected = a.copy()
    getattr(np, op).at(expected, idx, v)
    got = getattr(mx.array(a).at[mx.array(idx)], op)(mx.array(v))
    assert_array_equal_np(got, expected, dtype="complex64")


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "int16"])
def test_take_of_a_flat_array_wraps_checks_and_names_the_index(dtype):
    """take from a 1-d array (int32 and int64 indices take a path that wraps and clamps each index
    before its read and checks after): NumPy's values for negative indices, and an index out of
    bounds, positive or negative, named in the error."""
    rng = np.random.default_rng(9)
    src = rng.standard_normal(1000).astype(np.float32)
    lo = 0 if dtype.startswith("u") else -1000
    idx = rng.integers(lo, 1000, 70000).astype(dtype)
    got = mx.take(mx.array(src), mx.array(idx))
    assert_array_equal_np(got, src[idx])
    bad = [(1000, "index 1000 "), (-1001, "index -1001 ")] if lo else [(1000, "index 1000 ")]
    for value, text in bad:
        wrong = idx.copy()
        wrong[50000] = value
        with pytest.raises(mx.EvalIndexError, match=text):
            mx.eval(mx.take(mx.array(src), mx.array(wrong)))
