"""x[index] = v for basic indices (integers, slices with positive steps, None, Ellipsis) runs one
slice_update, which writes into x's buffer when nothing else holds it. The values are NumPy's
and MLX's; the old array, any view of it and anything that read it keep their values."""

import numpy as np
import pytest

import nuvec as mx

RNG = np.random.default_rng(3)

INDICES = [
    (1,),
    (slice(1, 3),),
    (slice(None, None, 2),),
    (Ellipsis, slice(1, 2)),
    (1, slice(0, 4, 3)),
    (slice(None), None, 2),
    (-1, Ellipsis),
    (slice(5, 1),),  # empty window
    (Ellipsis,),
]


@pytest.mark.parametrize("index", INDICES, ids=str)
@pytest.mark.parametrize("value_shape", ["scalar", "window", "row"])
def test_matches_numpy(index, value_shape):
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    want = x.copy()
    region = want[index]
    v = {
        "scalar": np.float32(2.5),
        "window": RNG.standard_normal(region.shape).astype(np.float32),
    }.get(value_shape, RNG.standard_normal(region.shape[-1:]).astype(np.float32))
    want[index] = v
    a = mx.array(x)
    a[index] = mx.array(v)
    np.testing.assert_array_equal(np.array(a), want)


def test_value_is_cast_to_the_array_dtype():
    a = mx.zeros((3, 4), dtype=mx.int32)
    a[1, 1:3] = mx.array([1.7, -2.2])
    assert a.dtype == mx.int32
    np.testing.assert_array_equal(np.array(a), [[0, 0, 0, 0], [0, 1, -2, 0], [0, 0, 0, 0]])


def test_views_and_readers_keep_their_values():
    # As MLX: `b = a` names the same array object, which setitem updates; a view taken before,
    # and a result computed from a before, keep the old values (the buffer is shared, so the
    # write goes to a copy).
    a = mx.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    mx.eval(a)
    b = a
    view, read = a[0:2], a + 0
    mx.eval(view, read)
    before = np.array(a)
    a[0] = 100.0
    mx.eval(a)
    np.testing.assert_array_equal(np.array(view), before[0:2])
    np.testing.assert_array_equal(np.array(read), before)
    assert float(a[0, 0]) == 100.0 and float(b[0, 0]) == 100.0


def test_an_unevaluated_reader_keeps_the_old_values():
    a = mx.array(np.arange(6, dtype=np.float32))
    mx.eval(a)
    later = a * 2  # reads a, evaluated after the write
    a[1:3] = -1.0
    np.testing.assert_array_equal(np.array(later), np.arange(6) * 2.0)
    np.testing.assert_array_equal(np.array(a), [0, -1, -1, 3, 4, 5])


def test_repeated_writes_in_a_loop_accumulate():
    # A KV cache's pattern: one position per step into a buffer nothing else holds.
    buf = mx.zeros((2, 8, 4))
    mx.eval(buf)
    want = np.zeros((2, 8, 4), np.float32)
    for t in range(8):
        row = RNG.standard_normal((2, 1, 4)).astype(np.float32)
        buf[:, t : t + 1, :] = mx.array(row)
        want[:, t : t + 1, :] = row
        mx.eval(buf)
    np.testing.assert_array_equal(np.array(buf), want)


def test_vjp_and_jvp():
    x = RNG.standard_normal((4, 5))
    u = RNG.standard_normal((2, 5))

    def f(x, u):
        y = x * 1.0
        y[1:4:2] = u * 3.0
        return mx.sum(y * mx.array(np.arange(20.0).reshape(4, 5)))

    gx, gu = mx.grad(f, argnums=(0, 1))(mx.array(x), mx.array(u))
    w = np.arange(20.0).reshape(4, 5)
    want_x = w.copy()
    want_x[1:4:2] = 0
    np.testing.assert_allclose(np.array(gx), want_x)
    np.testing.assert_allclose(np.array(gu), 3 * w[1:4:2])
    tx, tu = RNG.standard_normal((4, 5)), RNG.standard_normal((2, 5))
    _, (jt,) = mx.jvp(f, [mx.array(x), mx.array(u)], [mx.array(tx), mx.array(tu)])
    np.testing.assert_allclose(
        float(jt), (want_x * tx).sum() + (3 * w[1:4:2] * tu).sum(), rtol=1e-5
    )


def test_vmap_over_either_operand():
    xs = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    u = RNG.standard_normal((5,)).astype(np.float32)

    def f(x, u):
        y = x + 0
        y[2] = u
        return y

    got = mx.vmap(f, in_axes=(0, None))(mx.array(xs), mx.array(u))
    want = xs.copy()
    want[:, 2] = u
    np.testing.assert_array_equal(np.array(got), want)
    us = RNG.standard_normal((3, 5)).astype(np.float32)
    got = mx.vmap(f, in_axes=(None, 0))(mx.array(xs[0]), mx.array(us))
    want = np.repeat(xs[:1], 3, axis=0)
    want[:, 2] = us
    np.testing.assert_array_equal(np.array(got), want)


def test_bad_value_shape_raises():
    a = mx.zeros((3, 4))
    with pytest.raises(ValueError):
        a[1:3] = mx.ones((3, 4))


def test_same_as_mlx():
    mlx = pytest.importorskip("mlx.core")
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    a, m = mx.array(x), mlx.array(x)
    for index, v in [
        ((slice(1, 3), slice(None, None, 2)), 7.0),
        ((Ellipsis, 0), 1.5),
        ((None, 2), -3.0),
    ]:
        a[index] = v
        m[index] = v
    np.testing.assert_array_equal(np.array(a), np.array(m))
