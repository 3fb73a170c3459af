"""nn.losses: every loss (one row per configuration) against an independent NumPy float64
formula under each reduction, against mlx.nn.losses on the same inputs, and its gradient
against finite differences (float64); MLX's errors for bad reductions and shapes."""

import inspect
from dataclasses import dataclass, field

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import assert_array_equal_np, seeded_rng
from nn_check import check_grad

if IS_MLX:
    from mlx.nn import losses
else:
    from nuvec.nn import losses


def _log_softmax(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def _pick(x, t, axis=-1):
    """x's entries at class indices t along axis (t has x's shape without axis)."""
    return np.take_along_axis(x, np.expand_dims(t, axis), axis).squeeze(axis)


def _ce_index(x, t, axis=-1, ls=0.0):
    logp = _log_softmax(x, axis)
    return (1 - ls) * -_pick(logp, t, axis) + ls * -logp.mean(axis)


def _ce_probs(x, t, ls=0.0):
    # Shifted by the maximum, as MLX documents: targets not summing to one see the shift.
    s = x - x.max(-1, keepdims=True)
    lse = np.log(np.exp(s).sum(-1))
    return lse - (1 - ls) * (s * t).sum(-1) - ls * s.mean(-1)


def _norm_p(x, p):
    return (np.abs(x) ** p).sum(-1) + 1e-6


@dataclass
class Row:
    name: str
    make: object  # rng -> positional arguments (NumPy arrays)
    ref: object  # positional arguments -> the unreduced loss in float64
    kwargs: dict = field(default_factory=dict)
    grad: tuple = (0,)  # which arguments to differentiate
    id: str = ""


def _normal(*shape):
    return lambda rng: rng.normal(size=shape)


def _probs(rng, shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _signs(rng, shape):
    return rng.choice([-1.0, 1.0], shape)


ROWS = [
    Row("cross_entropy", lambda r: (r.normal(size=(5, 7)) * 3, r.integers(0, 7, 5)), _ce_index),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(7, 5)), r.integers(0, 7, 5)),
        lambda x, t: _ce_index(x, t, axis=0),
        {"axis": 0},
        id="axis0",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(2, 6, 3)), r.integers(0, 6, (2, 3))),
        lambda x, t: _ce_index(x, t, axis=1),
        {"axis": 1},
        id="3d-axis1",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(5, 7)), r.integers(0, 7, 5), r.uniform(0.5, 2, 5)),
        lambda x, t, w: _ce_index(x, t) * w,
        grad=(0, 2),
        id="weights",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(5, 7)), r.integers(0, 7, 5)),
        lambda x, t: _ce_index(x, t, ls=0.1),
        {"label_smoothing": 0.1},
        id="smooth",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(7, 5)), r.integers(0, 7, 5)),
        lambda x, t: _ce_index(x, t, axis=0, ls=0.3),
        {"axis": 0, "label_smoothing": 0.3},
        id="smooth-axis0",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(5, 7)), _probs(r, (5, 7))),
        _ce_probs,
        grad=(0, 1),
        id="probs",
    ),
    Row(
        "cross_entropy",
        lambda r: (r.normal(size=(5, 7)), _probs(r, (5, 7))),
        lambda x, t: _ce_probs(x, t, 0.2),
        {"label_smoothing": 0.2},
        id="probs-smooth",
    ),
    Row(
        "binary_cross_entropy",
        lambda r: (r.normal(size=(4, 6)) * 2, r.integers(0, 2, (4, 6))),
        lambda x, t: np.logaddexp(0, x) - x * t,
    ),
    Row(
        "binary_cross_entropy",
        lambda r: (r.uniform(0.05, 0.95, (4, 6)), r.integers(0, 2, (4, 6)).astype(float)),
        lambda p, t: -(t * np.log(p) + (1 - t) * np.log(1 - p)),
        {"with_logits": False},
        id="probs",
    ),
    Row(
        "binary_cross_entropy",
        lambda r: (r.normal(size=8), r.integers(0, 2, 8).astype(float), r.uniform(0, 2, 8)),
        lambda x, t, w: (np.logaddexp(0, x) - x * t) * w,
        grad=(0, 1, 2),
        id="weights",
    ),
    Row(
        "l1_loss",
        lambda r: (r.normal(size=(3, 5)), r.normal(size=(3, 5))),
        lambda p, t: np.abs(p - t),
        grad=(0, 1),
    ),
    Row(
        "mse_loss",
        lambda r: (r.normal(size=(3, 5)), r.normal(size=(3, 5))),
        lambda p, t: (p - t) ** 2,
        grad=(0, 1),
    ),
    Row(
        "nll_loss",
        lambda r: (_log_softmax(r.normal(size=(4, 6))), r.integers(0, 6, 4)),
        lambda x, t: -_pick(x, t),
    ),
    Row(
        "nll_loss",
        lambda r: (_log_softmax(r.normal(size=(6, 4)), 0), r.integers(0, 6, 4)),
        lambda x, t: -_pick(x, t, 0),
        {"axis": 0},
        id="axis0",
    ),
    Row(
        "gaussian_nll_loss",
        lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4)), r.uniform(0.2, 2, (3, 4))),
        lambda m, t, v: 0.5 * (np.log(v) + (t - m) ** 2 / v),
        grad=(0, 1, 2),
    ),
    Row(
        "gaussian_nll_loss",
        lambda r: (r.normal(size=6), r.normal(size=6), np.r_[r.uniform(0.2, 2, 5), 1e-9]),
        lambda m, t, v: (
            0.5 * (np.log(np.maximum(v, 0.01)) + (t - m) ** 2 / np.maximum(v, 0.01))
            + 0.5 * np.log(2 * np.pi)
        ),
        {"full": True, "eps": 0.01},
        grad=(0, 1),
        id="full-eps",
    ),
    Row(
        "kl_div_loss",
        lambda r: (_log_softmax(r.normal(size=(3, 5))), _log_softmax(r.normal(size=(3, 5)))),
        lambda x, t: (np.exp(t) * (t - x)).sum(-1),
        grad=(0, 1),
    ),
    Row(
        "kl_div_loss",
        lambda r: (_log_softmax(r.normal(size=(5, 3)), 0), _log_softmax(r.normal(size=(5, 3)), 0)),
        lambda x, t: (np.exp(t) * (t - x)).sum(0),
        {"axis": 0},
        grad=(0, 1),
        id="axis0",
    ),
    Row(
        "smooth_l1_loss",
        lambda r: (r.normal(size=(4, 5)) * 2, r.normal(size=(4, 5))),
        lambda p, t: np.where(np.abs(p - t) < 1, 0.5 * (p - t) ** 2, np.abs(p - t) - 0.5),
        grad=(0, 1),
    ),
    Row(
        "smooth_l1_loss",
        lambda r: (r.normal(size=(4, 5)) * 2, r.normal(size=(4, 5))),
        lambda p, t: np.where(np.abs(p - t) < 0.3, 0.5 * (p - t) ** 2 / 0.3, np.abs(p - t) - 0.15),
        {"beta": 0.3},
        id="beta",
    ),
    Row(
        "triplet_loss",
        lambda r: tuple(r.normal(size=(6, 4)) for _ in range(3)),
        lambda a, p, n: np.maximum(np.sqrt(_norm_p(a - p, 2)) - np.sqrt(_norm_p(a - n, 2)) + 1, 0),
        grad=(0, 1, 2),
    ),
    Row(
        "triplet_loss",
        lambda r: tuple(r.normal(size=(6, 4)) for _ in range(3)),
        lambda a, p, n: np.maximum(_norm_p(a - p, 1) - _norm_p(a - n, 1) + 0.5, 0),
        {"p": 1, "margin": 0.5},
        grad=(0, 1, 2),
        id="p1",
    ),
    Row(
        "hinge_loss",
        lambda r: (r.normal(size=(3, 5)), _signs(r, (3, 5))),
        lambda x, t: np.maximum(1 - x * t, 0),
    ),
    Row(
        "huber_loss",
        lambda r: (r.normal(size=(4, 5)) * 2, r.normal(size=(4, 5))),
        lambda x, t: np.where(np.abs(x - t) <= 1, 0.5 * (x - t) ** 2, np.abs(x - t) - 0.5),
        grad=(0, 1),
    ),
    Row(
        "huber_loss",
        lambda r: (r.normal(size=(4, 5)) * 2, r.normal(size=(4, 5))),
        lambda x, t: np.where(
            np.abs(x - t) <= 0.5, 0.5 * (x - t) ** 2, 0.5 * (np.abs(x - t) - 0.25)
        ),
        {"delta": 0.5},
        id="delta",
    ),
    Row(
        "log_cosh_loss",
        lambda r: (r.normal(size=(3, 5)) * 4, r.normal(size=(3, 5))),
        lambda x, t: np.log(np.cosh(x - t)),
        grad=(0, 1),
    ),
    Row(
        "cosine_similarity_loss",
        lambda r: (r.normal(size=(4, 6)), r.normal(size=(4, 6))),
        lambda a, b: (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)),
        grad=(0, 1),
    ),
    Row(
        "cosine_similarity_loss",
        lambda r: (r.normal(size=(4, 6)), r.normal(size=(4, 6))),
        lambda a, b: (a * b).sum(0) / (np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0)),
        {"axis": 0},
        grad=(0, 1),
        id="axis0",
    ),
    Row(
        "margin_ranking_loss",
        lambda r: (r.normal(size=7), r.normal(size=7), _signs(r, 7)),
        lambda a, b, y: np.maximum(0, -y * (a - b)),
        grad=(0, 1),
    ),
    Row(
        "margin_ranking_loss",
        lambda r: (r.normal(size=7), r.normal(size=7), _signs(r, 7)),
        lambda a, b, y: np.maximum(0, -y * (a - b) + 0.5),
        {"margin": 0.5},
        grad=(0, 1),
        id="margin",
    ),
]
PARAMS = [pytest.param(r, id=f"{r.name}-{r.id or 'default'}") for r in ROWS]
REDUCE = {"none": lambda a: a, "mean": np.mean, "sum": np.sum}


def _args(row, *seed):
    return row.make(seeded_rng("losses", row.name, row.id, *seed))


def _to(lib, a, dtype):
    """A NumPy argument as lib's array: floats in ``dtype``, integers as int32."""
    a = np.asarray(a)
    return lib.array(a, dtype=dtype) if a.dtype.kind == "f" else lib.array(a.astype(np.int32))


def _default_reduction(fn):
    return inspect.signature(fn).parameters["reduction"].default


def test_every_mlx_loss_is_here_with_its_signature():
    mlx_losses = pytest.importorskip("mlx.nn.losses")
    names = [
        n
        for n in dir(mlx_losses)
        if not n.startswith("_")
        and getattr(getattr(mlx_losses, n), "__module__", None) == mlx_losses.__name__
    ]
    assert len(names) >= 14
    assert {r.name for r in ROWS} == set(names)
    for n in names:
        ours = inspect.signature(getattr(losses, n)).parameters.values()
        theirs = inspect.signature(getattr(mlx_losses, n)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in ours] == [
            (p.name, p.kind, p.default) for p in theirs
        ], n
    assert losses.Reduction == mlx_losses.Reduction


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("row", PARAMS)
def test_float32_against_numpy(row, reduction):
    args = _args(row)
    args32 = [a.astype(np.float32) if np.asarray(a).dtype.kind == "f" else a for a in args]
    fn = getattr(losses, row.name)
    got = fn(*(_to(mx, a, mx.float32) for a in args), **row.kwargs, reduction=reduction)
    expected = REDUCE[reduction](
        row.ref(
            *(np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a for a in args32)
        )
    )
    assert_array_equal_np(got, expected, rtol=1e-5, atol=2e-6, dtype="float32", err_msg=row.name)


@pytest.mark.parametrize("row", PARAMS)
def test_default_reduction_is_mlx(row):
    args = [_to(mx, a, mx.float32) for a in _args(row)]
    fn = getattr(losses, row.name)
    default = _default_reduction(fn)
    assert default in ("none", "mean")
    np.testing.assert_array_equal(
        np.array(fn(*args, **row.kwargs)), np.array(fn(*args, **row.kwargs, reduction=default))
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("row", PARAMS)
def test_against_mlx(row, reduction, dtype):
    mlx_losses = pytest.importorskip("mlx.nn.losses")
    import mlx.core as mlx_core

    args = _args(row, "mlx")
    got = getattr(losses, row.name)(
        *(_to(mx, a, getattr(mx, dtype)) for a in args), **row.kwargs, reduction=reduction
    )
    theirs = getattr(mlx_losses, row.name)(
        *(_to(mlx_core, a, getattr(mlx_core, dtype)) for a in args),
        **row.kwargs,
        reduction=reduction,
    )
    assert str(got.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == dtype
    # Half types: MLX reduces in the half type on the CPU where nuvec accumulates in float32.
    tol = {"float32": 1e-5, "float16": 1e-2, "bfloat16": 6e-2}[dtype]
    assert_array_equal_np(
        got,
        np.array(theirs.astype(mlx_core.float32)).astype(np.float64),
        rtol=tol,
        atol=tol,
        dtype=dtype,
        err_msg=row.name,
    )


@pytest.mark.parametrize("row", PARAMS)
def test_grad_against_finite_differences(row):
    args = list(_args(row, "grad"))
    fn = getattr(losses, row.name)
    check_grad(
        lambda *a: fn(*a, **row.kwargs, reduction="none"),
        row.ref,
        args,
        row.grad,
        rtol=1e-5,
        atol=1e-6,
        seed=(row.name, row.id),
    )


def test_cross_entropy_large_logits_keep_precision():
    # Logits near 1000: subtracting the target's logit after a logsumexp would lose ~1e-4.
    logits = np.array([[1000.0, 999.0, 995.0], [-2000.0, -2003.0, -1999.5]], np.float32)
    targets = np.array([1, 2])
    got = losses.cross_entropy(mx.array(logits), mx.array(targets))
    assert_array_equal_np(
        got, _ce_index(logits.astype(np.float64), targets), rtol=1e-6, dtype="float32"
    )


def test_cross_entropy_unnormalised_probabilities_against_mlx():
    mlx_losses = pytest.importorskip("mlx.nn.losses")
    import mlx.core as mlx_core

    rng = seeded_rng("unnormalised")
    logits = rng.normal(size=(4, 5)).astype(np.float32) * 3
    targets = rng.uniform(0, 2, (4, 5)).astype(np.float32)
    for ls in (0.0, 0.25):
        got = losses.cross_entropy(mx.array(logits), mx.array(targets), label_smoothing=ls)
        theirs = mlx_losses.cross_entropy(
            mlx_core.array(logits), mlx_core.array(targets), label_smoothing=ls
        )
        assert_array_equal_np(got, np.array(theirs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("row", PARAMS)
def test_bad_reduction_raises_value_error(row):
    args = [_to(mx, a, mx.float32) for a in _args(row)]
    with pytest.raises(ValueError, match="reduction"):
        getattr(losses, row.name)(*args, **row.kwargs, reduction="avg")


SHAPE_ERRORS = [
    ("cross_entropy", lambda: (mx.zeros((4, 3)), mx.zeros((3,), mx.int32)), {}),
    ("cross_entropy", lambda: (mx.zeros((4, 3)), mx.zeros((4, 2))), {}),
    (
        "cross_entropy",
        lambda: (mx.zeros((4, 3)), mx.zeros((4,), mx.int32)),
        {"weights": mx.ones((3,))},
    ),
    (
        "cross_entropy",
        lambda: (mx.zeros((4, 3)), mx.zeros((4,), mx.int32)),
        {"label_smoothing": 1.0},
    ),
    (
        "cross_entropy",
        lambda: (mx.zeros((4, 3)), mx.zeros((4,), mx.int32)),
        {"label_smoothing": -0.1},
    ),
    ("binary_cross_entropy", lambda: (mx.zeros((4,)), mx.zeros((5,))), {}),
    ("binary_cross_entropy", lambda: (mx.zeros((4,)), mx.zeros((4,))), {"weights": mx.ones(2)}),
    ("l1_loss", lambda: (mx.zeros((2, 3)), mx.zeros((3, 2))), {}),
    ("mse_loss", lambda: (mx.zeros((2, 3)), mx.zeros((3,))), {}),
    ("smooth_l1_loss", lambda: (mx.zeros((2, 3)), mx.zeros((2, 1))), {}),
    ("gaussian_nll_loss", lambda: (mx.zeros(3), mx.zeros(4), mx.ones(3)), {}),
    ("gaussian_nll_loss", lambda: (mx.zeros(3), mx.zeros(3), mx.ones(4)), {}),
    ("margin_ranking_loss", lambda: (mx.zeros(3), mx.zeros(3), mx.ones(2)), {}),
]


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    SHAPE_ERRORS,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SHAPE_ERRORS)],
)
def test_mismatched_arguments_raise_value_error(name, args, kwargs):
    with pytest.raises(ValueError):
        getattr(losses, name)(*args(), **kwargs)


@pytest.mark.nuvec_only
def test_errors_name_the_loss_and_the_callers_line():
    with pytest.raises(mx.OpError) as info:
        losses.mse_loss(mx.zeros(2), mx.zeros(3))
    assert info.value.op_name == "mse_loss" and info.value.filename == __file__
    with pytest.raises(mx.OpError) as info:
        losses.cross_entropy(mx.zeros((2, 3)), mx.zeros(2, mx.int32), reduction="max")
    assert info.value.op_name == "cross_entropy" and info.value.filename == __file__
