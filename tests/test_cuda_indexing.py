"""Gather, scatter and concatenate on the GPU against the CPU backend (docs/cuda.md)."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import assert_same, both, needs_gpu

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

DTYPES = ["float32", "float16", "bfloat16", "int64", "int8", "uint32", "bool_", "complex64"]


def values(dt, shape, seed=0):
    v = np.random.default_rng(seed).standard_normal(shape) * 5
    if dt == "complex64":
        v = v + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    return mx.array(v).astype(getattr(mx, dt), stream=mx.cpu)


@pytest.mark.parametrize("dt", DTYPES)
def test_gathers(dt):
    x = values(dt, (7, 9, 5))
    i = mx.array([0, -1, 3, 3, 6, 2])
    j = mx.array([[1], [-2], [4]])
    cases = [
        lambda a: a[i],
        lambda a: a[:, i],
        lambda a: a[i[:3], j],  # two index arrays broadcast together
        lambda a: a[..., mx.array([4, 0, 0])],
        lambda a: mx.take(a, mx.array([[5, 1], [0, 62]]), axis=None),
        lambda a: mx.take_along_axis(
            a, mx.zeros((7, 2, 5), mx.int32) + mx.array([[1], [8]]), axis=1
        ),
        lambda a: a.T[i[:2]],  # a strided source
        lambda a: a[mx.array(3)],
        lambda a: a[mx.array([], mx.int32)],
    ]
    for fn in cases:
        assert_same(*both(fn, x))


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint64"])
def test_index_dtypes(dt):
    x = values("float32", (11, 3))
    idx = mx.array([10, 0, 5, 5]).astype(getattr(mx, dt), stream=mx.cpu)
    assert_same(*both(lambda a: a[idx], x))


def test_an_index_out_of_range_raises_on_the_gpu():
    x = mx.arange(10, stream=mx.gpu)
    for bad in (mx.array([3, 10]), mx.array([-11])):
        with pytest.raises(IndexError, match="out of bounds"):
            mx.eval(mx.take(x, bad, stream=mx.gpu))
        with pytest.raises(IndexError, match="out of bounds"):
            mx.eval(x.at[bad].add(1.0))
    assert x[3].item() == 3  # the device is fine after the error


@pytest.mark.parametrize("dt", DTYPES)
def test_scatters_combine_repeated_indices_in_order(dt):
    x = values(dt, (6, 4))
    idx = mx.array([1, 3, 1, -1, 1])
    upd = values(dt, (5, 4), seed=3)
    cases = [
        lambda a, u: a.at[idx].add(u),
        lambda a, u: a.at[idx].multiply(u),
        lambda a, u: a.at[idx].maximum(u),
        lambda a, u: a.at[idx].minimum(u),
        lambda a, u: mx.put_along_axis(
            a, mx.array([[0], [3], [1], [1], [2], [0]]), u[:1].T[:1] + a[:, :1], 1
        ),
        lambda a, u: a.at[idx[:3], mx.array([0, 2, 0])].add(u[:3, 0]),
    ]
    for fn in cases:
        if dt == "bool_" and fn is cases[4]:
            continue
        assert_same(*both(fn, x, upd))


def test_scatter_set_keeps_the_last_write_and_broadcasts_updates():
    x = mx.zeros((5, 3))
    assert_same(*both(lambda a: a.at[mx.array([2, 2, 0])].add(mx.array([1.0, 2.0, 3.0])), x))
    y = mx.zeros((6,))

    def f(a):
        a[mx.array([1, 4, 1])] = mx.array([7.0, 8.0, 9.0])
        return a

    assert_same(*both(f, y))


def test_concatenate_mixed_layouts():
    a = values("float32", (4, 6))
    b = values("float32", (6, 4), seed=2).T
    c = values("int32", (4, 6))[:, ::-2]
    assert_same(*both(lambda p, q: mx.concatenate([p, q], axis=0), a, b))
    assert_same(
        *both(lambda p, q, r: mx.concatenate([p, r.astype(mx.float32), q], axis=1), a, b, c)
    )


def test_an_embedding_lookup_and_its_gradient():
    w = values("float32", (50, 8))
    tok = mx.array([[3, 7, 3], [49, 0, 3]])

    def loss(t):
        return mx.sum(mx.tanh(t[tok]) * 2)

    assert_same(*both(lambda t: mx.grad(loss)(t), w), rtol=1e-6, atol=2e-6)
