"""nn activations (nn/layers/activations.py): every function against an independent NumPy
float64 formula, against mlx.nn on the same inputs (float32, float16, bfloat16: same dtype
out, values to rounding), and its gradient against finite differences (float64)."""

import inspect
import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import MX, assert_array_equal_np, round_to_bf16, seeded_rng
from nn_check import check_grad

if IS_MLX:
    import mlx.nn as nn
    from mlx.nn.layers import activations
else:
    import nuvec.nn as nn
    from nuvec.nn.layers import activations

_erf = np.vectorize(math.erf)


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _elu(x, alpha):
    return np.where(x > 0, x, alpha * np.expm1(x))


def _softplus(x):
    return np.logaddexp(x, 0)


@dataclass
class Row:
    name: str
    ref: object  # NumPy float64 formula of x
    kwargs: dict = field(default_factory=dict)  # NumPy arrays become framework arrays
    out_dtype: str | None = None  # None: the input's


ALPHA = np.array([0.1, -0.3, 0.7, 0.25, 1.5, 0.0, 0.05, 2.0])  # prelu's per-channel slopes
ROWS = [
    Row("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    Row("relu", lambda x: np.maximum(x, 0)),
    Row("relu2", lambda x: np.maximum(x, 0) ** 2),
    Row("relu6", lambda x: np.clip(x, 0, 6)),
    Row("leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x)),
    Row("leaky_relu", lambda x: np.where(x > 0, x, 0.2 * x), {"negative_slope": 0.2}),
    Row("log_softmax", lambda x: np.log(_softmax(x))),
    Row("log_softmax", lambda x: np.log(_softmax(x.T)).T, {"axis": 0}),
    Row("elu", lambda x: _elu(x, 1.0)),
    Row("elu", lambda x: _elu(x, 0.5), {"alpha": 0.5}),
    Row("softmax", _softmax),
    Row("softmax", lambda x: _softmax(x.T).T, {"axis": 0}),
    Row("softplus", lambda x: np.log1p(np.exp(x))),
    Row("softsign", lambda x: x / (1 + np.abs(x))),
    Row("softshrink", lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0)),
    Row("softshrink", lambda x: np.sign(x) * np.maximum(np.abs(x) - 1.0, 0), {"lambd": 1.0}),
    Row("celu", lambda x: np.maximum(x, 0) + np.minimum(0, np.expm1(x))),
    Row("celu", lambda x: np.maximum(x, 0) + np.minimum(0, 2 * np.expm1(x / 2)), {"alpha": 2.0}),
    Row("silu", lambda x: x / (1 + np.exp(-x))),
    Row("log_sigmoid", lambda x: -np.log1p(np.exp(-x))),
    Row("gelu", lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    Row(
        "gelu_approx",
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    Row("gelu_fast_approx", lambda x: x / (1 + np.exp(-1.702 * x))),
    Row("glu", lambda x: x[:, :4] / (1 + np.exp(-x[:, 4:]))),
    Row("glu", lambda x: x[:3] / (1 + np.exp(-x[3:])), {"axis": 0}),
    Row("step", lambda x: (x >= 0).astype(np.int32), out_dtype="int32"),
    Row("step", lambda x: (x >= 1).astype(np.int32), {"threshold": 1.0}, out_dtype="int32"),
    Row("selu", lambda x: 1.0507 * _elu(x, 1.67326)),
    Row("prelu", lambda x: np.where(x > 0, x, ALPHA * x), {"alpha": ALPHA}),
    Row("mish", lambda x: x * np.tanh(_softplus(x))),
    Row("hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6),
    Row("hard_tanh", lambda x: np.clip(x, -1, 1)),
    Row("hard_tanh", lambda x: np.clip(x, -0.5, 3), {"min_val": -0.5, "max_val": 3.0}),
    Row("hard_shrink", lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    Row("hard_shrink", lambda x: np.where(np.abs(x) > 1.0, x, 0), {"lambd": 1.0}),
    Row("softmin", lambda x: _softmax(-x)),
    Row("softmin", lambda x: _softmax(-x.T).T, {"axis": 0}),
    Row("tanh", np.tanh),
]
PARAMS = [
    pytest.param(r, id=f"{r.name}-{'-'.join(map(str, r.kwargs.values())) or 'default'}")
    for r in ROWS
]
KINKS = (0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 6.0)  # where some activation is not smooth


def _inputs(*seed, shape=(6, 8), scale=7.0):
    """Values in (-scale, scale), kept 0.01 away from every kink (finite differences)."""
    x = seeded_rng("activations", *seed).uniform(-scale, scale, shape)
    for k in KINKS:
        x[np.abs(x - k) < 0.01] += 0.02
    return x


def _call(module, lib, row, x):
    kwargs = {
        k: lib.array(v, dtype=x.dtype) if isinstance(v, np.ndarray) else v
        for k, v in row.kwargs.items()
    }
    return getattr(module, row.name)(x, **kwargs)


def _as_dtype(x, dtype):
    """x rounded to dtype's values (float64 copies)."""
    if dtype == "bfloat16":
        return round_to_bf16(x).astype(np.float64)
    return x.astype(dtype).astype(np.float64)


HALF_TOL = {"float32": (2e-6, 1e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2)}


def test_every_mlx_name_is_here_with_its_signature():
    mlx_act = pytest.importorskip("mlx.nn.layers.activations")
    names = [
        n
        for n in dir(mlx_act)
        if not n.startswith("_")
        and getattr(getattr(mlx_act, n), "__module__", None) == mlx_act.__name__
    ]
    assert len(names) > 50
    for n in names:
        ours, theirs = getattr(activations, n), getattr(mlx_act, n)
        if inspect.isclass(theirs):
            continue  # the classes: test_classes_*
        p_ours = [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()]
        p_theirs = [
            (p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()
        ]
        assert p_ours == p_theirs, n


def test_rows_cover_every_function():
    funcs = {
        n
        for n in dir(activations)
        if n[0].islower()
        and not n.startswith("_")
        and inspect.isfunction(getattr(activations, n))
        and getattr(activations, n).__module__ == activations.__name__
    }
    assert funcs == {r.name for r in ROWS}


@pytest.mark.parametrize("row", PARAMS)
def test_float32_against_numpy(row):
    x = _inputs(row.name).astype(np.float32)
    got = _call(activations, mx, row, mx.array(x))
    expected = row.ref(x.astype(np.float64))
    assert_array_equal_np(
        got, expected, rtol=2e-6, atol=2e-6, dtype=row.out_dtype or "float32", err_msg=row.name
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("row", PARAMS)
def test_half_keeps_dtype_against_numpy(row, dtype):
    x = _as_dtype(_inputs(row.name, dtype, scale=4.0), dtype)
    got = _call(activations, mx, row, mx.array(x, dtype=MX[dtype]))
    rtol, atol = HALF_TOL[dtype]
    # A few roundings to the half type on the way: allow a few of its ulps.
    assert_array_equal_np(
        got,
        row.ref(x),
        rtol=4 * rtol,
        atol=4 * atol,
        dtype=row.out_dtype or dtype,
        err_msg=row.name,
    )


@pytest.fixture
def mlx_act():
    """mlx.nn's activations with MLX's compile off: on the CPU it builds each kernel with a
    C++ compiler (seconds per function and dtype); plain graphs give the same formulas."""
    mlx_act = pytest.importorskip("mlx.nn.layers.activations")
    import mlx.core as mlx_core

    mlx_core.disable_compile()
    yield mlx_act
    mlx_core.enable_compile()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("row", PARAMS)
def test_against_mlx(row, dtype, mlx_act):
    import mlx.core as mlx_core

    x = _as_dtype(_inputs(row.name, "mlx", dtype), dtype).astype(np.float32)
    got = _call(activations, mx, row, mx.array(x, dtype=MX[dtype]))
    theirs = _call(mlx_act, mlx_core, row, mlx_core.array(x, dtype=getattr(mlx_core, dtype)))
    assert str(got.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    expected = np.array(theirs.astype(mlx_core.float32))
    rtol, atol = HALF_TOL[dtype]
    assert_array_equal_np(
        got,
        expected.astype(np.float64),
        rtol=rtol,
        atol=atol,
        dtype=row.out_dtype or dtype,
        err_msg=row.name,
    )


@pytest.mark.parametrize("row", PARAMS)
def test_grad_against_finite_differences(row):
    x = _inputs(row.name, "grad", shape=(6, 8))

    def fn(a):
        return _call(activations, mx, row, a)

    check_grad(fn, row.ref, [x], argnums=0, seed=(row.name,))


def test_prelu_grad_of_alpha():
    x = _inputs("prelu-alpha", shape=(5, 8))

    def ref(a, alpha):
        return np.where(a > 0, a, alpha * a)

    check_grad(activations.prelu, ref, [x, ALPHA], argnums=(0, 1), seed=("prelu",))


def test_glu_odd_axis_raises():
    with pytest.raises(ValueError):
        activations.glu(mx.zeros((2, 5)))


# ------------------------------------------------------------------------------ the classes
# (class, its constructor's keyword arguments, the function and keyword arguments it applies)
CLASSES = [
    ("Sigmoid", {}, "sigmoid", {}),
    ("Mish", {}, "mish", {}),
    ("ReLU", {}, "relu", {}),
    ("ReLU2", {}, "relu2", {}),
    ("ReLU6", {}, "relu6", {}),
    ("Softmax", {}, "softmax", {}),
    ("Softplus", {}, "softplus", {}),
    ("Softsign", {}, "softsign", {}),
    ("SiLU", {}, "silu", {}),
    ("LogSoftmax", {}, "log_softmax", {}),
    ("LogSigmoid", {}, "log_sigmoid", {}),
    ("Tanh", {}, "tanh", {}),
    ("Hardswish", {}, "hardswish", {}),
    ("SELU", {}, "selu", {}),
    ("HardTanh", {}, "hard_tanh", {}),
    ("Softmin", {}, "softmin", {}),
    ("GLU", {}, "glu", {}),
    ("GLU", {"axis": 0}, "glu", {"axis": 0}),
    ("LeakyReLU", {}, "leaky_relu", {}),
    ("LeakyReLU", {"negative_slope": 0.3}, "leaky_relu", {"negative_slope": 0.3}),
    ("ELU", {"alpha": 0.7}, "elu", {"alpha": 0.7}),
    ("CELU", {"alpha": 1.5}, "celu", {"alpha": 1.5}),
    ("Softshrink", {"lambd": 0.8}, "softshrink", {"lambd": 0.8}),
    ("HardShrink", {"lambd": 0.8}, "hard_shrink", {"lambd": 0.8}),
    ("Step", {"threshold": -0.5}, "step", {"threshold": -0.5}),
    ("PReLU", {}, "prelu", {"alpha": np.array([0.25])}),
    ("PReLU", {"num_parameters": 8, "init": -0.1}, "prelu", {"alpha": np.full(8, -0.1)}),
    ("GELU", {}, "gelu", {}),
    ("GELU", {"approx": "none"}, "gelu", {}),
    ("GELU", {"approx": "precise"}, "gelu_approx", {}),
    ("GELU", {"approx": "tanh"}, "gelu_approx", {}),
    ("GELU", {"approx": "fast"}, "gelu_fast_approx", {}),
]
CLASS_PARAMS = [
    pytest.param(*c, id=f"{c[0]}-{'-'.join(map(str, c[1].values())) or 'default'}") for c in CLASSES
]


def test_classes_cover_mlx_with_their_signatures():
    mlx_act = pytest.importorskip("mlx.nn.layers.activations")
    import mlx.nn

    theirs = {
        n
        for n in dir(mlx_act)
        if inspect.isclass(getattr(mlx_act, n))
        and issubclass(getattr(mlx_act, n), mlx.nn.Module)
        and n != "Module"
    }
    assert theirs == {c[0] for c in CLASSES}
    for n in theirs:
        ours = getattr(activations, n)
        assert issubclass(ours, nn.Module), n
        p_ours = [(p.name, p.default) for p in inspect.signature(ours).parameters.values()]
        p_theirs = [
            (p.name, p.default) for p in inspect.signature(getattr(mlx_act, n)).parameters.values()
        ]
        assert p_ours == p_theirs, n


@pytest.mark.parametrize(("cls", "ctor", "fn", "kwargs"), CLASS_PARAMS)
def test_class_applies_its_function(cls, ctor, fn, kwargs):
    x = mx.array(_inputs(cls, "class").astype(np.float32))
    layer = getattr(activations, cls)(**ctor)
    row = Row(fn, None, kwargs)
    np.testing.assert_array_equal(np.array(layer(x)), np.array(_call(activations, mx, row, x)))
    # Only PReLU has a parameter; the options are plain attributes, outside the tree.
    expected = {"weight": kwargs["alpha"]} if cls == "PReLU" else {}
    got = {k: np.array(v) for k, v in layer.parameters().items()}
    assert got.keys() == expected.keys()
    for k in expected:
        np.testing.assert_array_equal(got[k], expected[k].astype(np.float32))


@pytest.mark.parametrize(("cls", "ctor", "fn", "kwargs"), CLASS_PARAMS)
def test_class_against_mlx(cls, ctor, fn, kwargs, mlx_act):
    import mlx.core as mlx_core
    from mlx.utils import tree_flatten as mlx_flatten

    from nuvec.utils import tree_flatten

    x = _inputs(cls, "class-mlx").astype(np.float32)
    ours, theirs = getattr(activations, cls)(**ctor), getattr(mlx_act, cls)(**ctor)
    np.testing.assert_allclose(
        np.array(ours(mx.array(x))), np.array(theirs(mlx_core.array(x))), rtol=2e-6, atol=2e-6
    )
    assert [k for k, _ in tree_flatten(ours.parameters())] == [
        k for k, _ in mlx_flatten(theirs.parameters())
    ]


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="approx"):
        activations.GELU(approx="erf")


def test_prelu_weight_is_trained():
    layer = activations.PReLU(num_parameters=4, init=0.5)
    x = _inputs("prelu-train", shape=(3, 4)).astype(np.float32)

    def loss(model, a):
        return model(a).sum()

    value, grads = nn.value_and_grad(layer, loss)(layer, mx.array(x))
    # d/dw sum(max(0, x) + w min(0, x)) = column sums of min(0, x)
    np.testing.assert_allclose(np.array(grads["weight"]), np.minimum(x, 0).sum(0), rtol=1e-6)
    assert abs(value.item() - (np.maximum(x, 0) + 0.5 * np.minimum(x, 0)).sum()) < 1e-4


@pytest.mark.nuvec_only
def test_gelu_error_names_the_callers_line():
    with pytest.raises(mx.OpError) as info:
        activations.GELU(approx="exact")
    assert info.value.op_name == "GELU" and info.value.filename == __file__
