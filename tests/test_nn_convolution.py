"""nn convolution layers (Conv1d/2d/3d, ConvTranspose1d/2d/3d): against a float64 NumPy reference
and mlx.nn on copied weights, parameter names, shapes and init as mlx.nn's, reprs, and input
errors naming the layer."""

import math

import numpy as np
import pytest

import conv_reference as ref
from _impl import IS_MLX, mx

if IS_MLX:
    import mlx.nn as nn
else:
    import nuvec.nn as nn

RNG = np.random.default_rng(8)

# (layer, constructor arguments, input shape, reference: (x, w) -> float64 output without bias)
LAYERS = [
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1}, (2, 9, 4)),
    ("Conv1d", (4, 6, 3), {"dilation": 2, "groups": 2, "bias": False}, (2, 9, 4)),
    ("Conv2d", (3, 5, (3, 2)), {"stride": (2, 1), "padding": (1, 0)}, (2, 7, 6, 3)),
    ("Conv2d", (6, 6, 3), {"padding": 1, "groups": 6}, (2, 5, 5, 6)),
    ("Conv3d", (2, 3, 2), {"padding": 1, "stride": 2}, (1, 4, 5, 3, 2)),
    ("ConvTranspose1d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 5, 4)),
    ("ConvTranspose2d", (3, 4, (3, 2)), {"stride": 2, "dilation": 2}, (2, 4, 3, 3)),
    ("ConvTranspose3d", (2, 3, 2), {"stride": (1, 2, 1), "bias": False}, (1, 3, 3, 2, 2)),
]


def _reference(name, x, w, kw):
    if name.startswith("ConvTranspose"):
        keys = ("stride", "padding", "dilation", "output_padding")
        return ref.conv_transpose(x, w, **{k: kw[k] for k in keys if k in kw})
    general = {"stride": kw.get("stride", 1), "padding": kw.get("padding", 0)}
    general.update(kernel_dilation=kw.get("dilation", 1), groups=kw.get("groups", 1))
    return ref.conv_general(x, w, **general)


def _with_random_weights(layer):
    params = {}
    for key in ("weight", "bias"):
        if key in layer:
            params[key] = RNG.standard_normal(layer[key].shape).astype(np.float32)
    layer.update({k: mx.array(v) for k, v in params.items()})
    return params


@pytest.mark.parametrize("name,args,kw,xs", LAYERS)
def test_layer_matches_reference(name, args, kw, xs):
    layer = getattr(nn, name)(*args, **kw)
    params = _with_random_weights(layer)
    x = RNG.standard_normal(xs).astype(np.float32)
    want = _reference(name, x, params["weight"], kw) + params.get("bias", 0.0)
    got = np.asarray(layer(mx.array(x)), np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,args,kw,xs", LAYERS)
def test_layer_matches_mlx(name, args, kw, xs):
    mlx_nn = pytest.importorskip("mlx.nn")
    mlx = pytest.importorskip("mlx.core")
    ours, theirs = getattr(nn, name)(*args, **kw), getattr(mlx_nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    shapes = {k: tuple(v.shape) for k, v in ours.parameters().items()}
    assert shapes == {k: tuple(v.shape) for k, v in theirs.parameters().items()}
    params = _with_random_weights(ours)
    theirs.update({k: mlx.array(v) for k, v in params.items()})
    x = RNG.standard_normal(xs).astype(np.float32)
    np.testing.assert_allclose(
        np.asarray(ours(mx.array(x))), np.asarray(theirs(mlx.array(x))), rtol=1e-5, atol=1e-5
    )

    def loss(m, lib, a):
        return lib.sum(m(a) ** 2)

    g_ours = nn.value_and_grad(ours, lambda a: loss(ours, mx, a))(mx.array(x))[1]
    g_theirs = mlx_nn.value_and_grad(theirs, lambda a: loss(theirs, mlx, a))(mlx.array(x))[1]
    for k in g_ours:
        np.testing.assert_allclose(
            np.asarray(g_ours[k]), np.asarray(g_theirs[k]), rtol=1e-4, atol=1e-3
        )


@pytest.mark.parametrize("name,args,kw,xs", LAYERS)
def test_init_is_mlx_uniform(name, args, kw, xs):
    layer = getattr(nn, name)(*args, **kw)
    cin, cout, k = args
    groups = kw.get("groups", 1)
    dims = len(xs) - 2
    kernel = (k,) * dims if isinstance(k, int) else tuple(k)
    w = np.asarray(layer.weight)
    assert w.shape == (cout, *kernel, cin // groups)
    scale = math.sqrt(1 / (cin // groups * math.prod(kernel)))
    assert np.abs(w).max() <= scale and np.abs(w).max() > scale / 2
    assert ("bias" in layer) == kw.get("bias", True)
    if "bias" in layer:
        assert not np.asarray(layer.bias).any()


@pytest.mark.skipif(IS_MLX, reason="compares nuvec with MLX")
def test_init_matches_mlx_under_the_same_seed():
    mlx_nn = pytest.importorskip("mlx.nn")
    mlx = pytest.importorskip("mlx.core")
    mx.random.seed(3)
    mlx.random.seed(3)
    ours, theirs = nn.Conv2d(3, 4, 3), mlx_nn.Conv2d(3, 4, 3)
    np.testing.assert_array_equal(np.asarray(ours.weight), np.asarray(theirs.weight))


@pytest.mark.parametrize("name,args,kw,xs", LAYERS)
def test_wrong_input_channels_name_the_layer(name, args, kw, xs):
    layer = getattr(nn, name)(*args, **kw)
    bad = mx.zeros(xs[:-1] + (xs[-1] + 1,))
    with pytest.raises(ValueError, match=name if not IS_MLX else ""):
        layer(bad)


@pytest.mark.skipif(IS_MLX, reason="nuvec's error type and message")
def test_errors_are_op_errors():
    with pytest.raises(mx.OpError, match="Conv2d.*channels"):
        nn.Conv2d(4, 8, 3)(mx.zeros((1, 5, 5, 3)))
    with pytest.raises(mx.OpError, match="Conv1d.*NLC"):
        nn.Conv1d(4, 8, 3)(mx.zeros((5, 4)))
    with pytest.raises(mx.OpError, match="divisible"):
        nn.Conv2d(5, 8, 3, groups=2)


def test_layers_exported_from_nn_and_layers():
    from importlib import import_module

    layers = import_module(nn.__name__ + ".layers")
    for name in (
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
    ):
        assert getattr(nn, name) is getattr(layers, name)
