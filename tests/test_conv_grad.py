"""Derivatives of the convolutions: gradients with respect to input and weight against finite
differences of the float64 NumPy reference (the convolution is linear in each argument, so a
central difference along a random direction is exact up to rounding), against PyTorch's autograd
and mlx.core where they import; jvp and vmap against their definitions."""

import numpy as np
import pytest

import conv_reference as ref
from _impl import IS_MLX, mx

RNG = np.random.default_rng(5)

# (input shape, weight shape, conv_general keyword arguments)
CASES = [
    ((2, 9, 3), (4, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 9, 4), (6, 2, 2), {"groups": 2, "kernel_dilation": 2, "padding": ([3], [0])}),
    ((1, 8, 3), (2, 3, 3), {"input_dilation": 2, "padding": -1, "flip": True}),
    ((2, 6, 7, 4), (5, 3, 3, 4), {"padding": 1}),
    (
        (2, 7, 7, 4),
        (6, 3, 2, 2),
        {"stride": (2, 3), "padding": ([1, 0], [2, 1]), "groups": 2, "flip": True},
    ),
    (
        (2, 6, 5, 3),
        (4, 2, 3, 3),
        {"kernel_dilation": (2, 1), "input_dilation": (1, 2), "stride": 2},
    ),
    ((2, 7, 7, 6), (6, 3, 3, 1), {"groups": 6, "padding": 1, "stride": 2}),
    ((1, 4, 5, 4, 2), (3, 2, 2, 3, 2), {"padding": 1, "stride": (1, 2, 1)}),
    # 1x1 kernels: keeping every position (a plain product), and shifted by the padding
    ((2, 5, 4, 6), (3, 1, 1, 6), {}),
    ((2, 7, 4), (5, 1, 4), {"kernel_dilation": 3}),
    ((2, 7, 3), (4, 1, 3), {"padding": ([1], [-1])}),
    # depthwise, whose weight gradient has its own path
    (
        (2, 8, 7, 4),
        (4, 3, 2, 1),
        {"groups": 4, "padding": ([2, -1], [0, 1]), "kernel_dilation": (1, 2), "flip": True},
    ),
    ((3, 9, 5), (5, 2, 1), {"groups": 5, "stride": 3, "padding": 2}),
]


def mlx_quirk(xs, kw):
    """Where MLX itself fails: grouped 3-D convolutions are refused, and under input dilation with
    cropping its output size departs from its own formula."""
    return (len(xs) == 5 and kw.get("groups", 1) > 1) or (
        kw.get("input_dilation", 1) != 1 and kw.get("padding") == -1
    )


def rand(*shape):
    return RNG.standard_normal(shape)


def grads(x, w, r, kw, dtype=mx.float64):
    loss = lambda a, b: mx.sum(mx.conv_general(a, b, **kw) * mx.array(r, dtype=dtype))  # noqa: E731
    gx, gw = mx.grad(loss, argnums=(0, 1))(mx.array(x, dtype=dtype), mx.array(w, dtype=dtype))
    return np.asarray(gx.astype(mx.float32), np.float64), np.asarray(
        gw.astype(mx.float32), np.float64
    )


@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_gradients_match_finite_differences(xs, ws, kw):
    if IS_MLX and mlx_quirk(xs, kw):
        pytest.skip("MLX departs here")
    x, w = rand(*xs), rand(*ws)
    r = rand(*ref.conv_general(x, w, **kw).shape)
    gx, gw = grads(x, w, r, kw, mx.float32)

    def f(a, b):
        return float(np.sum(ref.conv_general(a, b, **kw) * r))

    eps = 1e-3
    for _ in range(3):
        vx, vw = rand(*xs), rand(*ws)
        dx = (f(x + eps * vx, w) - f(x - eps * vx, w)) / (2 * eps)
        dw = (f(x, w + eps * vw) - f(x, w - eps * vw)) / (2 * eps)
        np.testing.assert_allclose(np.sum(gx * vx), dx, rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(np.sum(gw * vw), dw, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_gradients_match_mlx(xs, ws, kw):
    mlx = pytest.importorskip("mlx.core")
    if len(xs) == 5 and kw.get("groups", 1) > 1:
        pytest.skip("MLX has no grouped 3-D convolutions")
    if kw.get("input_dilation", 1) != 1 and kw.get("padding") == -1:
        pytest.skip(
            "MLX's output size differs from its own formula under input dilation and cropping"
        )
    x, w = rand(*xs).astype(np.float32), rand(*ws).astype(np.float32)
    r = rand(*ref.conv_general(x, w, **kw).shape).astype(np.float32)
    loss = lambda a, b: mlx.sum(mlx.conv_general(a, b, **kw) * mlx.array(r))  # noqa: E731
    want = mlx.grad(loss, argnums=(0, 1))(mlx.array(x), mlx.array(w))
    for got, expect in zip(grads(x, w, r, kw, mx.float32), want):
        np.testing.assert_allclose(got, np.asarray(expect), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_gradients_match_torch(dims):
    torch = pytest.importorskip("torch")
    if IS_MLX and dims == 3:
        pytest.skip("MLX has no grouped 3-D convolutions")
    xs = (2,) + (6, 5, 4)[:dims] + (4,)
    ws = (6,) + (3, 2, 2)[:dims] + (2,)
    kw = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    x, w = rand(*xs), rand(*ws)
    loss = lambda a, b: mx.sum(getattr(mx, f"conv{dims}d")(a, b, **kw))  # noqa: E731
    gx, gw = mx.grad(loss, argnums=(0, 1))(mx.array(x, mx.float32), mx.array(w, mx.float32))
    tx = torch.tensor(np.moveaxis(x, -1, 1), requires_grad=True)
    tw = torch.tensor(np.moveaxis(w, -1, 1), requires_grad=True)
    getattr(torch.nn.functional, f"conv{dims}d")(tx, tw, **kw).sum().backward()
    np.testing.assert_allclose(
        np.asarray(gx), np.moveaxis(tx.grad.numpy(), 1, -1), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        np.asarray(gw), np.moveaxis(tw.grad.numpy(), 1, -1), rtol=1e-4, atol=1e-4
    )


def test_transposed_convolution_gradient_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    x, w = rand(2, 5, 6, 4).astype(np.float32), rand(6, 3, 3, 2).astype(np.float32)
    kw = {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}

    def run(m):
        loss = lambda a, b: m.sum(m.conv_transpose2d(a, b, **kw) ** 2)  # noqa: E731
        return m.grad(loss, argnums=(0, 1))(m.array(x), m.array(w))

    for got, want in zip(run(mx), run(mlx)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(IS_MLX, reason="MLX has no jvp for convolutions")
@pytest.mark.parametrize("xs,ws,kw", CASES[:6])
def test_jvp_is_the_sum_of_the_convolved_tangents(xs, ws, kw):
    x, w, tx, tw = (mx.array(rand(*s), mx.float32) for s in (xs, ws, xs, ws))
    _, (t,) = mx.jvp(lambda a, b: mx.conv_general(a, b, **kw), [x, w], [tx, tw])
    want = ref.conv_general(np.asarray(tx), np.asarray(w), **kw) + ref.conv_general(
        np.asarray(x), np.asarray(tw), **kw
    )
    np.testing.assert_allclose(np.asarray(t), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs,ws,kw", CASES)
@pytest.mark.parametrize("batched", ["input", "weight", "both"])
def test_vmap_is_the_stack_of_examples(xs, ws, kw, batched):
    if IS_MLX and (
        mlx_quirk(xs, kw) or (batched != "input" and (kw.get("groups", 1) > 1 or len(xs) == 5))
    ):
        pytest.skip("MLX's vmap over the weight gives wrong values with groups and in 3-D")
    b = 3
    xb, wb = rand(b, *xs).astype(np.float32), rand(b, *ws).astype(np.float32)
    in_axes = {"input": (0, None), "weight": (None, 0), "both": (0, 0)}[batched]
    x = xb if in_axes[0] == 0 else xb[0]
    w = wb if in_axes[1] == 0 else wb[0]
    got = mx.vmap(lambda a, c: mx.conv_general(a, c, **kw), in_axes=in_axes)(
        mx.array(x), mx.array(w)
    )
    want = np.stack(
        [
            ref.conv_general(x[i] if in_axes[0] == 0 else x, w[i] if in_axes[1] == 0 else w, **kw)
            for i in range(b)
        ]
    )
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_vmap_batch_axis_not_in_front():
    x, w = (
        rand(4, 2, 6, 3).astype(np.float32),
        rand(5, 3, 3).astype(np.float32),
    )  # batch on axis 1 of x
    got = mx.vmap(lambda a: mx.conv1d(a, mx.array(w)), in_axes=1)(mx.array(x))
    want = np.stack([ref.conv_general(x[:, i], w) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_gradient_of_gradient():
    x, w = rand(1, 6, 2), rand(3, 3, 2)
    # d/dw sum(grad_x(sum(conv * r)) ** 2): the input gradient is itself a convolution.
    r = mx.array(rand(1, 4, 3))

    def inner(b):
        gx = mx.grad(lambda a: mx.sum(mx.conv1d(a, b) * r))(mx.array(x))
        return mx.sum(gx * gx)

    g = np.asarray(mx.grad(inner)(mx.array(w)), np.float64)
    eps, v = 1e-3, rand(3, 3, 2)
    d = (float(inner(mx.array(w + eps * v))) - float(inner(mx.array(w - eps * v)))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * v), d, rtol=1e-3, atol=1e-2)
