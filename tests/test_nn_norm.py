"""nn normalization layers against float64 NumPy references, mlx.nn and PyTorch."""

import importlib

import numpy as np
import pytest

from _impl import mx
from nn_layer_helpers import (
    PKG,
    assert_close,
    assert_repr_as_mlx,
    check_grad,
    copy_params,
    layers,
    mlx_array,
    mlx_layers,
    raises_layer_error,
    rand,
)

norm = layers("normalization")
EPS = 1e-5


def ref_standardize(x, axes, eps=EPS):
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


def ref_layer_norm(x, w=None, b=None, eps=EPS):
    y = ref_standardize(x, -1, eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def ref_rms_norm(x, w, eps=EPS):
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * w


def ref_group_norm(x, groups, torch_order, w=None, b=None, eps=EPS):
    """Each group gathered by its channel list, normalized over (spatial, its channels)."""
    c = x.shape[-1]
    gid = np.arange(c) // (c // groups) if torch_order else np.arange(c) % groups
    y = np.empty_like(x)
    axes = tuple(range(1, x.ndim))
    for g in range(groups):
        y[..., gid == g] = ref_standardize(x[..., gid == g], axes, eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def ref_instance_norm(x, w=None, b=None, eps=EPS):
    y = ref_standardize(x, tuple(range(1, x.ndim - 1)), eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def ref_batch_stats(x):
    axes = tuple(range(x.ndim - 1))
    return x.mean(axis=axes), x.var(axis=axes), x.var(axis=axes, ddof=1)


def set_random_affine(layer, seed=3):
    """Non-trivial weight and bias, so a mix-up of the two would show."""
    for i, k in enumerate(("weight", "bias")):
        if k in layer:
            layer[k] = mx.array(rand(layer[k].shape, seed=seed + i))


def np_params(layer):
    return {k: np.asarray(v, dtype=np.float64) for k, v in layer.parameters().items()}


# (name, constructor args, input shape, float64 reference of (x, params))
CASES = [
    ("LayerNorm", (8,), {}, (3, 5, 8), lambda x, p: ref_layer_norm(x, p["weight"], p["bias"])),
    ("LayerNorm", (8,), {"bias": False}, (4, 8), lambda x, p: ref_layer_norm(x, p["weight"])),
    (
        "LayerNorm",
        (8,),
        {"affine": False, "eps": 1e-3},
        (2, 8),
        lambda x, p: ref_layer_norm(x, eps=1e-3),
    ),
    ("RMSNorm", (6,), {}, (2, 3, 6), lambda x, p: ref_rms_norm(x, p["weight"])),
    ("RMSNorm", (6,), {"eps": 1e-2}, (5, 6), lambda x, p: ref_rms_norm(x, p["weight"], 1e-2)),
    (
        "GroupNorm",
        (2, 6),
        {},
        (2, 3, 4, 6),
        lambda x, p: ref_group_norm(x, 2, False, p["weight"], p["bias"]),
    ),
    (
        "GroupNorm",
        (3, 6),
        {"pytorch_compatible": True},
        (2, 5, 6),
        lambda x, p: ref_group_norm(x, 3, True, p["weight"], p["bias"]),
    ),
    ("GroupNorm", (2, 4), {"affine": False}, (3, 7, 4), lambda x, p: ref_group_norm(x, 2, False)),
    ("InstanceNorm", (5,), {}, (2, 4, 3, 5), lambda x, p: ref_instance_norm(x)),
    (
        "InstanceNorm",
        (5,),
        {"affine": True},
        (3, 6, 5),
        lambda x, p: ref_instance_norm(x, p["weight"], p["bias"]),
    ),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def build(name, args, kwargs):
    layer = getattr(norm, name)(*args, **kwargs)
    set_random_affine(layer)
    return layer


@pytest.mark.parametrize("name,args,kwargs,shape,ref", CASES, ids=IDS)
def test_against_numpy(name, args, kwargs, shape, ref):
    layer = build(name, args, kwargs)
    x = rand(shape)
    want = ref(x.astype(np.float64), np_params(layer))
    out = layer(mx.array(x))
    assert out.shape == shape and out.dtype == mx.float32
    assert_close(out, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,args,kwargs,shape,ref", CASES, ids=IDS)
def test_against_mlx(name, args, kwargs, shape, ref):
    theirs = getattr(mlx_layers("normalization"), name)(*args, **kwargs)
    layer = build(name, args, kwargs)
    copy_params(layer, theirs)
    assert sorted(theirs.parameters()) == sorted(layer.parameters())
    x = rand(shape, seed=1)
    assert_close(layer(mx.array(x)), np.asarray(theirs(mlx_array_of(x))), rtol=1e-5, atol=1e-5)


def mlx_array_of(x):
    import mlx.core

    return mlx.core.array(x)


@pytest.mark.parametrize("name,args,kwargs,shape,ref", CASES, ids=IDS)
def test_grad_against_finite_differences(name, args, kwargs, shape, ref):
    layer = build(name, args, kwargs)
    params = np_params(layer)
    check_grad(layer, lambda x: ref(x, params), rand(shape, seed=2))


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("LayerNorm", (8,), {}),
        ("RMSNorm", (8,), {}),
        ("GroupNorm", (2, 8), {}),
        ("InstanceNorm", (8,), {}),
        ("BatchNorm", (8,), {}),
    ],
)
def test_initial_parameters_as_mlx(name, args, kwargs):
    layer = getattr(norm, name)(*args, **kwargs)
    theirs = getattr(mlx_layers("normalization"), name)(*args, **kwargs)
    mine, want = layer.parameters(), theirs.parameters()
    assert sorted(mine) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(np.asarray(mine[k]), np.asarray(want[k]))
        assert mine[k].dtype == mx.float32


def test_low_precision_keeps_dtype():
    x = rand((4, 16))
    for dt in (mx.float16, mx.bfloat16):
        for layer in (norm.LayerNorm(16, affine=False), norm.InstanceNorm(16)):
            xs = mx.array(x).reshape(2, 2, 16).astype(dt)
            out = layer(xs)
            assert out.dtype == dt
            ref = (ref_layer_norm if isinstance(layer, norm.LayerNorm) else ref_instance_norm)(
                np.asarray(xs.astype(mx.float32), dtype=np.float64)
            )
            assert_close(out.astype(mx.float32), ref, rtol=2e-2, atol=2e-2)


# ---- BatchNorm: training statistics, running statistics, eval mode ----


@pytest.mark.parametrize("shape", [(6, 4), (3, 5, 4), (2, 3, 3, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_then_eval(shape, affine):
    bn = norm.BatchNorm(4, momentum=0.2, affine=affine)
    set_random_affine(bn)
    p = np_params(bn)
    w, b = p.get("weight", 1.0), p.get("bias", 0.0)
    rm, rv = np.zeros(4), np.ones(4)
    for step in range(3):
        x = rand(shape, seed=10 + step).astype(np.float64) * (step + 1) + step
        mean, var, unbiased = ref_batch_stats(x)
        out = bn(mx.array(x.astype(np.float32)))
        assert_close(out, (x - mean) / np.sqrt(var + EPS) * w + b, rtol=1e-4, atol=1e-4)
        rm, rv = 0.8 * rm + 0.2 * mean, 0.8 * rv + 0.2 * unbiased
        assert_close(bn.running_mean, rm, rtol=1e-5, atol=1e-5)
        assert_close(bn.running_var, rv, rtol=1e-5, atol=1e-5)
    bn.eval()
    x = rand(shape, seed=20).astype(np.float64)
    assert_close(
        bn(mx.array(x.astype(np.float32))), (x - rm) / np.sqrt(rv + EPS) * w + b, 1e-4, 1e-4
    )


def test_batch_norm_without_running_stats_uses_batch_stats_in_eval():
    bn = norm.BatchNorm(3, track_running_stats=False, affine=False)
    assert sorted(bn.parameters()) == []
    bn.eval()
    x = rand((5, 3)).astype(np.float64)
    assert_close(bn(mx.array(x.astype(np.float32))), ref_standardize(x, 0), 1e-4, 1e-5)


def test_batch_norm_running_stats_are_frozen_parameters():
    bn = norm.BatchNorm(4)
    assert sorted(bn.parameters()) == ["bias", "running_mean", "running_var", "weight"]
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]
    bn.unfreeze()
    assert sorted(bn.trainable_parameters()) == ["bias", "weight"]


def test_batch_norm_against_mlx_over_steps():
    theirs = mlx_layers("normalization").BatchNorm(4, momentum=0.3)
    bn = norm.BatchNorm(4, momentum=0.3)
    set_random_affine(bn)
    copy_params(bn, theirs)
    for step in range(3):
        x = rand((3, 5, 4), seed=30 + step) * 2 + step
        assert_close(bn(mx.array(x)), np.asarray(theirs(mlx_array_of(x))), 1e-5, 1e-5)
    for k in ("running_mean", "running_var"):
        assert_close(bn[k], np.asarray(theirs[k]), 1e-5, 1e-6)
    bn.eval()
    theirs.eval()
    x = rand((3, 5, 4), seed=40)
    assert_close(bn(mx.array(x)), np.asarray(theirs(mlx_array_of(x))), 1e-5, 1e-5)


@pytest.mark.parametrize("shape", [(6, 3), (4, 5, 3), (2, 3, 4, 3)])
def test_batch_norm_grad_against_finite_differences(shape):
    bn = norm.BatchNorm(3, track_running_stats=False)
    set_random_affine(bn)
    p = np_params(bn)

    def ref(x):
        mean, var, _ = ref_batch_stats(x)
        return (x - mean) / np.sqrt(var + EPS) * p["weight"] + p["bias"]

    check_grad(bn, ref, rand(shape, seed=5))


def test_layer_norm_weight_grad():
    ln = norm.LayerNorm(5)
    x = rand((3, 5))
    r = rand((3, 5), seed=9)
    g = mx.grad(lambda w: mx.sum(ln.update({"weight": w})(mx.array(x)) * mx.array(r)))(ln.weight)
    assert_close(g, (ref_standardize(x.astype(np.float64), -1) * r).sum(axis=0), 1e-4, 1e-5)


# ---- PyTorch with copied weights ----


def test_against_torch():
    torch = pytest.importorskip("torch")
    t = lambda a: torch.tensor(np.asarray(a))  # noqa: E731
    x = rand((2, 5, 6, 8), seed=11)
    tx = t(x).permute(0, 3, 1, 2)  # NCHW

    ln = build("LayerNorm", (8,), {})
    tln = torch.nn.LayerNorm(8)
    gn = build("GroupNorm", (4, 8), {"pytorch_compatible": True})
    tgn = torch.nn.GroupNorm(4, 8)
    inn = build("InstanceNorm", (8,), {"affine": True})
    tin = torch.nn.InstanceNorm2d(8, affine=True)
    with torch.no_grad():
        for mine, theirs in ((ln, tln), (gn, tgn), (inn, tin)):
            theirs.weight.copy_(t(mine.weight))
            theirs.bias.copy_(t(mine.bias))
        assert_close(ln(mx.array(x)), tln(t(x)).numpy(), 1e-5, 1e-5)
        for mine, theirs in ((gn, tgn), (inn, tin)):
            assert_close(mine(mx.array(x)), theirs(tx).permute(0, 2, 3, 1).numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 4, 3, 3)])
def test_batch_norm_against_torch(shape):
    """Shapes are PyTorch's channels-first; nuvec gets the channels-last transpose."""
    torch = pytest.importorskip("torch")
    tbn = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d}[len(shape)]
    tbn = tbn(4, momentum=0.25)
    bn = norm.BatchNorm(4, momentum=0.25)
    set_random_affine(bn)
    with torch.no_grad():
        tbn.weight.copy_(torch.tensor(np.asarray(bn.weight)))
        tbn.bias.copy_(torch.tensor(np.asarray(bn.bias)))
    last = lambda a: np.moveaxis(a, 1, -1)  # noqa: E731
    for step in range(4):
        x = rand(shape, seed=50 + step) * (1 + step) - step
        with torch.no_grad():
            want = last(tbn(torch.tensor(x)).numpy())
        assert_close(bn(mx.array(last(x))), want, 1e-4, 1e-5)
    assert_close(bn.running_mean, tbn.running_mean.numpy(), 1e-5, 1e-6)
    assert_close(bn.running_var, tbn.running_var.numpy(), 1e-5, 1e-6)
    bn.eval()
    tbn.eval()
    x = rand(shape, seed=60)
    with torch.no_grad():
        assert_close(bn(mx.array(last(x))), last(tbn(torch.tensor(x)).numpy()), 1e-4, 1e-5)


# ---- errors ----


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda: norm.LayerNorm(8), (2, 7)),
        (lambda: norm.RMSNorm(8), (2, 7)),
        (lambda: norm.GroupNorm(2, 8), (2, 3, 6)),
        (lambda: norm.InstanceNorm(8, affine=True), (2, 3, 6)),
        (lambda: norm.BatchNorm(8), (4, 6)),
    ],
)
def test_wrong_channel_count_raises(make, shape):
    layer = make()
    with raises_layer_error(type(layer).__name__):
        layer(mx.zeros(shape))


@pytest.mark.parametrize(
    "make,shape",
    [
        (lambda: norm.InstanceNorm(4), (3, 4)),
        (lambda: norm.GroupNorm(2, 4), (4,)),
        (lambda: norm.BatchNorm(4), (4,)),
        (lambda: norm.BatchNorm(4), (1, 2, 2, 2, 4)),
    ],
)
def test_wrong_rank(make, shape):
    layer = make()
    with raises_layer_error(type(layer).__name__):
        layer(mx.zeros(shape))


def test_batch_norm_training_needs_two_values_per_channel():
    with pytest.raises(ValueError):
        norm.BatchNorm(4)(mx.zeros((1, 4)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: norm.LayerNorm(4, eps=0.0),
        lambda: norm.RMSNorm(4, eps=-1.0),
        lambda: norm.GroupNorm(3, 4),
        lambda: norm.GroupNorm(0, 4),
        lambda: norm.GroupNorm(2, 0),
        lambda: norm.InstanceNorm(4, eps=0),
        lambda: norm.BatchNorm(4, eps=0),
    ],
)
def test_bad_constructor_arguments(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("name", ["LayerNorm", "RMSNorm", "GroupNorm", "InstanceNorm", "BatchNorm"])
@pytest.mark.parametrize("affine", [True, False])
def test_float16_output_dtype_as_mlx(name, affine):
    """float32 parameters promote a float16 input, as in MLX; no parameters keep float16."""
    pytest.importorskip("mlx.core")
    import mlx.core

    theirs_mod = mlx_layers("normalization")
    args = (2, 4) if name == "GroupNorm" else (4,)
    kwargs = {} if name == "RMSNorm" else {"affine": affine}
    x = np.ones((1, 2, 4), dtype=np.float16)
    mine = getattr(norm, name)(*args, **kwargs)(mx.array(x))
    theirs = getattr(theirs_mod, name)(*args, **kwargs)(mlx.core.array(x))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("LayerNorm", (8,), {"eps": 1e-3}),
        ("RMSNorm", (8,), {}),
        ("GroupNorm", (2, 8), {"pytorch_compatible": True}),
        ("InstanceNorm", (8,), {"affine": True}),
        ("BatchNorm", (8,), {"momentum": 0.2, "track_running_stats": False}),
    ],
)
def test_repr_as_mlx(name, args, kwargs):
    assert_repr_as_mlx("normalization", name, args, kwargs)


def test_training_step_with_batch_norm_and_dropout_as_mlx():
    """nn.value_and_grad over a model with BatchNorm (running statistics updated inside the
    step) and Dropout (a draw inside the step) gives MLX's loss, statistics and gradients."""
    mlx_layers("normalization")
    import mlx.core
    import mlx.nn
    import mlx.utils

    nn = importlib.import_module(f"{PKG}.nn")
    flat = importlib.import_module(f"{PKG}.utils").tree_flatten

    def build(nnlib):
        return nnlib.Sequential(nnlib.Linear(4, 6), nnlib.BatchNorm(6), nnlib.Dropout(0.2))

    mine, theirs = build(nn), build(mlx.nn)
    theirs.update(mlx.utils.tree_unflatten([(k, mlx_array(v)) for k, v in flat(mine.parameters())]))
    x = rand((8, 4))
    results = []
    for lib, nnlib, model in ((mx, nn, mine), (mlx.core, mlx.nn, theirs)):
        lib.random.seed(3)
        step = nnlib.value_and_grad(model, lambda m, a: (m(a) ** 2).mean())
        for _ in range(3):
            loss, grads = step(model, lib.array(x))
        results.append((loss, flat(grads) + flat(model.parameters())))
    (loss, mine_trees), (want, their_trees) = results
    assert_close(loss, np.asarray(want), 1e-5, 1e-6)
    assert [k for k, _ in mine_trees] == [k for k, _ in their_trees]
    assert "layers.1.running_var" in dict(mine_trees)
    for (_, a), (_, b) in zip(mine_trees, their_trees):
        assert_close(a, np.asarray(b), 1e-4, 1e-5)
