"""nn pooling layers (Max/AvgPool 1d/2d/3d, channels last) against float64 NumPy references,
mlx.nn and PyTorch, with gradients against finite differences."""

import numpy as np
import pytest

from _impl import mx
from nn_layer_helpers import (
    assert_close,
    assert_repr_as_mlx,
    check_grad,
    layers,
    mlx_layers,
    raises_layer_error,
    rand,
)

pool = layers("pooling")


def ref_pool(x, kind, kernel, stride, padding):
    """Each output is the max or mean of its window of x padded with -inf or 0 (counted)."""
    n = x.ndim - 2
    as_list = lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * n  # noqa: E731
    kernel = as_list(kernel)
    stride = kernel if stride is None else as_list(stride)
    padding = as_list(padding)
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(
        x.astype(np.float64), [(0, 0), *((p, p) for p in padding), (0, 0)], constant_values=fill
    )
    out_shape = [max(0, (s - k) // st + 1) for s, k, st in zip(xp.shape[1:-1], kernel, stride)]
    out = np.empty((x.shape[0], *out_shape, x.shape[-1]))
    for pos in np.ndindex(*out_shape):
        window = xp[
            (slice(None), *(slice(i * st, i * st + k) for i, st, k in zip(pos, stride, kernel)))
        ]
        flat = window.reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None), *pos)] = flat.max(axis=1) if kind == "max" else flat.mean(axis=1)
    return out


# (dims, kernel_size, stride, padding, input shape)
GEOMETRIES = [
    (1, 2, None, 0, (2, 8, 3)),
    (1, 3, 2, 1, (2, 9, 3)),
    (1, (3,), (1,), (0,), (1, 7, 2)),
    (2, 2, None, 0, (2, 6, 6, 3)),
    (2, 2, None, 0, (1, 7, 5, 2)),  # sizes not multiples of the kernel
    (2, 3, 2, 1, (2, 7, 6, 3)),
    (2, (2, 3), (1, 2), (1, 0), (1, 5, 7, 2)),
    (2, 3, 1, 1, (1, 4, 4, 2)),
    (3, 2, None, 0, (1, 4, 4, 6, 2)),
    (3, (2, 3, 2), (1, 2, 2), (0, 1, 1), (1, 3, 5, 4, 2)),
]
CASES = [(kind, *g) for kind in ("max", "avg") for g in GEOMETRIES]
IDS = [f"{c[0]}{c[1]}d-k{c[2]}-s{c[3]}-p{c[4]}-{c[5]}" for c in CASES]


def make(mod, kind, dims, kernel, stride, padding):
    cls = getattr(mod, f"{'Max' if kind == 'max' else 'Avg'}Pool{dims}d")
    return cls(kernel, stride, padding) if stride is not None else cls(kernel, padding=padding)


@pytest.mark.parametrize("kind,dims,kernel,stride,padding,shape", CASES, ids=IDS)
def test_against_numpy(kind, dims, kernel, stride, padding, shape):
    x = rand(shape)
    out = make(pool, kind, dims, kernel, stride, padding)(mx.array(x))
    want = ref_pool(x, kind, kernel, stride, padding)
    assert out.shape == want.shape and out.dtype == mx.float32
    assert_close(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind,dims,kernel,stride,padding,shape", CASES, ids=IDS)
def test_against_mlx(kind, dims, kernel, stride, padding, shape):
    theirs = make(mlx_layers("pooling"), kind, dims, kernel, stride, padding)
    import mlx.core

    x = rand(shape, seed=1)
    want = np.asarray(theirs(mlx.core.array(x)))
    assert_close(make(pool, kind, dims, kernel, stride, padding)(mx.array(x)), want, 1e-6, 1e-6)


@pytest.mark.parametrize("kind,dims,kernel,stride,padding,shape", CASES, ids=IDS)
def test_grad_against_finite_differences(kind, dims, kernel, stride, padding, shape):
    layer = make(pool, kind, dims, kernel, stride, padding)
    check_grad(layer, lambda a: ref_pool(a, kind, kernel, stride, padding), rand(shape, seed=2))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_dtypes_kept(dtype):
    x = mx.array(rand((1, 4, 4, 2)) * 10).astype(getattr(mx, dtype))
    want = ref_pool(np.asarray(x.astype(mx.float32)), "max", 2, None, 0)
    out = pool.MaxPool2d(2)(x)
    assert out.dtype == x.dtype
    assert_close(out.astype(mx.float32), want, 0, 0)


def test_kernel_larger_than_input_gives_empty_output():
    assert pool.MaxPool2d(5)(mx.ones((1, 4, 4, 2))).shape == (1, 0, 0, 2)
    assert pool.AvgPool1d(6, padding=1)(mx.ones((2, 3, 2))).shape == (2, 0, 2)


# ---- PyTorch (channels first there) ----

TORCH_CASES = [
    (1, 3, 2, 1, (2, 9, 3)),
    (2, 2, None, 0, (2, 6, 6, 3)),
    (2, 3, 2, 1, (2, 7, 6, 3)),
    (2, (2, 3), (1, 2), (1, 1), (1, 5, 7, 2)),
    (3, (2, 3, 2), (1, 2, 2), (0, 1, 1), (1, 3, 5, 4, 2)),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("dims,kernel,stride,padding,shape", TORCH_CASES)
def test_against_torch(kind, dims, kernel, stride, padding, shape):
    torch = pytest.importorskip("torch")
    cls = getattr(torch.nn, f"{'Max' if kind == 'max' else 'Avg'}Pool{dims}d")
    theirs = cls(kernel, stride=stride, padding=padding)
    x = rand(shape, seed=3)
    tx = torch.tensor(np.moveaxis(x, -1, 1), requires_grad=True)
    ty = theirs(tx)
    r = rand(ty.shape, seed=4)
    (ty * torch.tensor(r)).sum().backward()
    layer = make(pool, kind, dims, kernel, stride, padding)
    assert_close(layer(mx.array(x)), np.moveaxis(ty.detach().numpy(), 1, -1), 1e-6, 1e-6)
    rm = mx.array(np.moveaxis(r, 1, -1))
    g = mx.grad(lambda a: mx.sum(layer(a) * rm))(mx.array(x))
    assert_close(g, np.moveaxis(tx.grad.numpy(), 1, -1), 1e-6, 1e-6)


# ---- errors ----


@pytest.mark.parametrize(
    "make_layer,shape",
    [
        (lambda: pool.MaxPool1d(2), (4, 2)),
        (lambda: pool.MaxPool2d(2), (4, 4, 2)),
        (lambda: pool.AvgPool2d(2), (1, 1, 4, 4, 2)),
        (lambda: pool.AvgPool3d(2), (1, 4, 4, 2)),
    ],
)
def test_wrong_rank(make_layer, shape):
    layer = make_layer()
    with raises_layer_error(type(layer).__name__):
        layer(mx.zeros(shape))


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda: pool.MaxPool2d(2, stride=0),
        lambda: pool.MaxPool2d(0),
        lambda: pool.MaxPool2d((2, 2, 2)),
        lambda: pool.AvgPool2d(2, padding=-1),
        lambda: pool.MaxPool1d(2.0),
        lambda: pool.AvgPool3d((2, 2)),
        lambda: pool.MaxPool1d(2, stride=(1, 1)),
    ],
)
def test_bad_arguments(make_layer):
    with pytest.raises(ValueError):
        make_layer()


@pytest.mark.parametrize(
    "name,args",
    [
        ("MaxPool1d", (2,)),
        ("AvgPool2d", (3, 2, 1)),
        ("MaxPool3d", ((1, 2, 3), (1, 1, 2), (0, 1, 1))),
    ],
)
def test_repr_as_mlx(name, args):
    assert_repr_as_mlx("pooling", name, args, {})


def ref_max_pool_grad_with_ties(x, kernel, stride, r):
    """Each window's cotangent split equally among the elements equal to its maximum."""
    k, s = kernel, stride
    g = np.zeros(x.shape)
    out = r.shape[1:3]
    for i, j in np.ndindex(*out):
        win = x[:, i * s : i * s + k, j * s : j * s + k]
        hit = win == win.max(axis=(1, 2), keepdims=True)
        g[:, i * s : i * s + k, j * s : j * s + k] += (
            hit / hit.sum(axis=(1, 2), keepdims=True) * r[:, i : i + 1, j : j + 1]
        )
    return g


@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 1), (2, 1)])
def test_max_grad_splits_ties_as_mlx(kernel, stride):
    """Ties are common (max pooling after relu): the gradient is shared among the tied maxima."""
    x = np.random.default_rng(0).integers(0, 2, (2, 6, 6, 3)).astype(np.float32)
    layer = pool.MaxPool2d(kernel, stride)
    r = rand(layer(mx.array(x)).shape, seed=6)
    g = mx.grad(lambda a: mx.sum(layer(a) * mx.array(r)))(mx.array(x))
    assert_close(
        g, ref_max_pool_grad_with_ties(x, kernel, stride, r.astype(np.float64)), 1e-5, 1e-6
    )
    theirs = mlx_layers("pooling").MaxPool2d(kernel, stride)
    import mlx.core

    want = mlx.core.grad(lambda a: mlx.core.sum(theirs(a) * mlx.core.array(r)))(mlx.core.array(x))
    assert_close(g, np.asarray(want), 1e-6, 1e-6)
