"""nn Upsample and upsample_nearest/linear/cubic against float64 NumPy references (one
interpolation matrix per axis), mlx.nn and PyTorch, with gradients against finite differences."""

import math

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

up = layers("upsample")


def source_coords(n, scale, align_corners):
    """Input coordinates of the int(scale * n) outputs: corners aligned, or the output grid
    (spacing 1 / scale) centered on the input's."""
    m = int(scale * n)
    i = np.arange(m, dtype=np.float64)
    if align_corners:
        return i * (n - 1) / max(m - 1, 1)
    return (i - (m - 1) / 2) / scale + (n - 1) / 2


def keys(d, a):
    d = np.abs(d)
    near = (a + 2) * d**3 - (a + 3) * d**2 + 1
    far = a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def matrix(n, scale, mode, align_corners=False, antialias=False):
    """The (outputs, inputs) interpolation matrix of one axis."""
    m = int(scale * n)
    w = np.zeros((m, n))
    if mode == "nearest":
        i = np.arange(m)
        src = np.round((i + 0.5) * n / m - 0.5) if m > n else np.floor(i * n / m)
        w[i, src.astype(int)] = 1
        return w
    src = source_coords(n, scale, align_corners)
    if antialias:
        widen = max(1.0, 1 / scale)
        radius = 1.0 if mode == "linear" else 2.0
        for o, s in enumerate(src):
            for j in range(n):  # every input within the widened support, renormalized
                d = abs(s - j) / widen
                w[o, j] = max(0.0, 1 - d) if mode == "linear" else keys(d, -0.5)
                w[o, j] *= d < radius
            w[o] /= w[o].sum() or 1
        return w
    if mode == "linear":
        s = np.clip(src, 0, n - 1)
        lo = np.floor(s).astype(int)
        np.add.at(w, (np.arange(m), lo), 1 - (s - lo))
        np.add.at(w, (np.arange(m), np.ceil(s).astype(int)), s - lo)
        return w
    base = np.floor(src).astype(int)
    for k in (-1, 0, 1, 2):  # taps past an edge read the edge sample
        np.add.at(w, (np.arange(m), np.clip(base + k, 0, n - 1)), keys(src - (base + k), -0.75))
    return w


def ref_upsample(x, scales, mode, align_corners=False, antialias=False):
    y = x.astype(np.float64)
    for axis, s in enumerate(scales, start=1):
        w = matrix(y.shape[axis], s, mode, align_corners, antialias)
        y = np.moveaxis(np.tensordot(w, np.moveaxis(y, axis, 0), axes=1), 0, axis)
    return y


SCALES = [2, 3, 1.5, 0.5, (2, 0.75), (1.25, 3)]
CASES = (
    [("nearest", False, False, s) for s in SCALES]
    + [(m, ac, False, s) for m in ("linear", "cubic") for ac in (False, True) for s in SCALES]
    + [(m, False, True, s) for m in ("linear", "cubic") for s in (0.5, (0.25, 0.5), 2, (1.5, 0.4))]
)
IDS = [f"{m}-ac{int(ac)}-aa{int(aa)}-{s}" for m, ac, aa, s in CASES]


def scales_for(scale, dims):
    return tuple(float(v) for v in scale) if isinstance(scale, tuple) else (float(scale),) * dims


@pytest.mark.parametrize("mode,ac,aa,scale", CASES, ids=IDS)
def test_against_numpy(mode, ac, aa, scale):
    x = rand((2, 6, 8, 3))
    out = up.Upsample(scale, mode, ac, aa)(mx.array(x))
    want = ref_upsample(x, scales_for(scale, 2), mode, ac, aa)
    assert out.shape == want.shape
    assert out.dtype == mx.float32
    assert_close(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,ac,aa,scale", CASES, ids=IDS)
def test_against_mlx(mode, ac, aa, scale):
    theirs = mlx_layers("upsample").Upsample(scale, mode, ac, aa)
    import mlx.core

    x = rand((2, 5, 7, 3), seed=1)
    want = np.asarray(theirs(mlx.core.array(x)))
    assert_close(up.Upsample(scale, mode, ac, aa)(mx.array(x)), want, rtol=1e-6, atol=2e-6)


@pytest.mark.parametrize(
    "fn,args,shape",
    [
        ("upsample_nearest", ((2.0,),), (1, 5, 2)),
        ("upsample_nearest", ((1.5, 2.0, 0.5),), (1, 3, 2, 4, 2)),
        ("upsample_linear", ((2.0,), True), (2, 4, 3)),
        ("upsample_linear", ((1.5, 2.0, 3.0), False), (1, 3, 2, 2, 2)),
        ("upsample_cubic", ((2.5,), False), (1, 4, 2)),
        ("upsample_cubic", ((2.0, 1.0, 2.0), True), (1, 3, 3, 2, 1)),
        ("upsample_linear", ((0.5,), False, True), (1, 8, 2)),
    ],
)
def test_functions_1d_3d(fn, args, shape):
    x = rand(shape, seed=2)
    mode = fn.split("_")[1]
    want = ref_upsample(x, args[0], mode, *args[1:])
    assert_close(getattr(up, fn)(mx.array(x), *args), want, rtol=1e-5, atol=1e-5)
    theirs = getattr(mlx_layers("upsample"), fn)
    import mlx.core

    assert_close(
        getattr(up, fn)(mx.array(x), *args),
        np.asarray(theirs(mlx.core.array(x), *args)),
        1e-6,
        2e-6,
    )


@pytest.mark.parametrize("mode,ac,aa,scale", CASES[::3], ids=IDS[::3])
def test_grad_against_finite_differences(mode, ac, aa, scale):
    layer = up.Upsample(scale, mode, ac, aa)
    check_grad(
        layer,
        lambda a: ref_upsample(a, scales_for(scale, 2), mode, ac, aa),
        rand((1, 4, 5, 2), seed=3),
    )


@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_dtypes_as_mlx(dtype):
    x = mx.array(rand((1, 3, 3, 2)) * 4).astype(getattr(mx, dtype))
    assert up.Upsample(2)(x).dtype == x.dtype
    assert up.Upsample(1.5)(x).dtype == x.dtype
    for mode in ("linear", "cubic"):
        assert up.Upsample(2, mode)(x).dtype == mx.float32  # float32 weights promote, as MLX


def test_integer_nearest_repeats():
    x = mx.arange(1, 5).reshape(1, 2, 2, 1)
    out = up.Upsample(scale_factor=2, mode="nearest")(x)
    np.testing.assert_array_equal(
        np.asarray(out)[0, :, :, 0], np.repeat(np.repeat([[1, 2], [3, 4]], 2, 0), 2, 1)
    )


# ---- PyTorch (channels first there; integer or exact scales, where both grids agree) ----

TORCH_CASES = [
    ("nearest", None, False, 2, (1, 4, 5, 2)),
    ("nearest", None, False, 3, (2, 3, 3, 1)),
    ("nearest", None, False, 2, (1, 3, 2)),
    ("linear", False, False, 2, (1, 4, 5, 2)),
    ("linear", True, False, 2, (1, 4, 5, 2)),
    ("linear", False, False, 3, (2, 5, 2)),
    ("linear", True, False, 2, (1, 3, 2, 4, 2)),
    ("cubic", False, False, 2, (1, 4, 5, 2)),
    ("cubic", True, False, 3, (1, 4, 3, 2)),
    ("linear", False, True, 0.5, (1, 8, 8, 2)),
    ("cubic", False, True, 0.5, (1, 8, 12, 2)),
    ("linear", False, True, 0.25, (2, 8, 8, 1)),
]


@pytest.mark.parametrize("mode,ac,aa,scale,shape", TORCH_CASES)
def test_against_torch(mode, ac, aa, scale, shape):
    torch = pytest.importorskip("torch")
    prefix = {1: "", 2: "bi", 3: "tri"}[len(shape) - 2]
    tmode = mode if mode == "nearest" else prefix + mode
    x = rand(shape, seed=4)
    tx = torch.tensor(np.moveaxis(x, -1, 1), requires_grad=True)
    kwargs = {} if mode == "nearest" else {"align_corners": ac, "antialias": aa}
    ty = torch.nn.functional.interpolate(tx, scale_factor=scale, mode=tmode, **kwargs)
    r = rand(ty.shape, seed=5)
    (ty * torch.tensor(r)).sum().backward()
    layer = up.Upsample(scale, mode, bool(ac), aa)
    assert_close(layer(mx.array(x)), np.moveaxis(ty.detach().numpy(), 1, -1), 1e-5, 1e-5)
    rm = mx.array(np.moveaxis(r, 1, -1))
    g = mx.grad(lambda a: mx.sum(layer(a) * rm))(mx.array(x))
    assert_close(g, np.moveaxis(tx.grad.numpy(), 1, -1), 1e-5, 1e-5)


# ---- errors ----


@pytest.mark.parametrize(
    "make",
    [
        lambda: up.Upsample(2, mode="bilinear"),
        lambda: up.Upsample(2, mode="nearest", antialias=True),
        lambda: up.Upsample(2, mode="linear", align_corners=True, antialias=True),
    ],
)
def test_bad_constructor_arguments(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize(
    "layer,shape", [(up.Upsample(2), (2, 3)), (up.Upsample((2, 2)), (1, 4, 2))]
)
def test_wrong_rank(layer, shape):
    with raises_layer_error("Upsample"):
        layer(mx.zeros(shape))


@pytest.mark.parametrize(
    "call",
    [
        lambda: up.upsample_nearest(mx.zeros((1, 4, 4, 2)), (2.0,)),
        lambda: up.upsample_linear(mx.zeros((1, 4, 2)), (2.0, 2.0)),
        lambda: up.upsample_cubic(mx.zeros((1, 4, 2)), (2.0,), True, True),
    ],
)
def test_bad_calls(call):
    with pytest.raises(ValueError):
        call()


def test_scale_stored_as_floats():
    assert up.Upsample(2).scale_factor == 2.0 and isinstance(up.Upsample(2).scale_factor, float)
    assert up.Upsample([2, 3]).scale_factor == (2.0, 3.0)
    assert math.isclose(up.Upsample(1.5, "cubic").scale_factor, 1.5)


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((2,), {}),
        ((1.5,), {"mode": "cubic", "align_corners": True}),
        (((2, 0.5),), {"mode": "linear", "antialias": True}),
    ],
)
def test_repr_as_mlx(args, kwargs):
    assert_repr_as_mlx("upsample", "Upsample", args, kwargs)
