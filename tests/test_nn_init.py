"""nn.init: every initializer's shape, dtype and statistics over large draws (against the
fan-in / fan-out rules computed here in NumPy), its bits against mlx.nn.init under the same
seed (all draw through the random state as MLX does; orthogonal agrees to rounding), errors."""

import inspect
import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import MX, to_np

if IS_MLX:
    from mlx.nn import init
else:
    from nuvec.nn import init


def _fans(shape):
    """(fan_in, fan_out) of an [out, kernel..., in] weight."""
    receptive = int(np.prod(shape[1:-1]))
    return shape[-1] * receptive, shape[0] * receptive


@dataclass
class Row:
    name: str
    builder: dict  # keyword arguments of the builder
    shape: tuple
    call: dict = field(default_factory=dict)  # keyword arguments of the initializer
    normal: tuple | None = None  # (mean, std) of a normal draw
    uniform: tuple | None = None  # (low, high) of a uniform draw
    id: str = ""


def _he_std(shape, mode="fan_in", gain=1.0):
    return gain / math.sqrt(_fans(shape)[0 if mode == "fan_in" else 1])


def _he_limit(shape, mode="fan_in", gain=1.0):
    return gain * math.sqrt(3 / _fans(shape)[0 if mode == "fan_in" else 1])


def _glorot(shape, k):
    return math.sqrt(k / sum(_fans(shape)))


CONV = (64, 3, 3, 32)  # fan_in 288, fan_out 576
ROWS = [
    Row("normal", {}, (400, 500), normal=(0.0, 1.0)),
    Row("normal", {"mean": 0.5, "std": 2.0}, (400, 500), normal=(0.5, 2.0), id="shifted"),
    Row("uniform", {}, (400, 500), uniform=(0.0, 1.0)),
    Row("uniform", {"low": -2.0, "high": 3.0}, (400, 500), uniform=(-2.0, 3.0), id="range"),
    Row("glorot_normal", {}, (300, 700), normal=(0.0, _glorot((300, 700), 2))),
    Row("glorot_normal", {}, CONV, {"gain": 2.0}, normal=(0.0, 2 * _glorot(CONV, 2)), id="conv"),
    Row(
        "glorot_uniform", {}, (300, 700), uniform=(-_glorot((300, 700), 6), _glorot((300, 700), 6))
    ),
    Row(
        "glorot_uniform",
        {},
        CONV,
        {"gain": 0.5},
        uniform=(-0.5 * _glorot(CONV, 6), 0.5 * _glorot(CONV, 6)),
        id="conv",
    ),
    Row("he_normal", {}, (300, 700), normal=(0.0, _he_std((300, 700)))),
    Row(
        "he_normal",
        {},
        CONV,
        {"mode": "fan_out", "gain": 3.0},
        normal=(0.0, _he_std(CONV, "fan_out", 3.0)),
        id="conv-fan_out",
    ),
    Row("he_uniform", {}, (300, 700), uniform=(-_he_limit((300, 700)), _he_limit((300, 700)))),
    Row(
        "he_uniform",
        {},
        CONV,
        {"mode": "fan_out", "gain": 2.0},
        uniform=(-_he_limit(CONV, "fan_out", 2.0), _he_limit(CONV, "fan_out", 2.0)),
        id="conv-fan_out",
    ),
    Row("sparse", {"sparsity": 0.25, "mean": 1.0, "std": 0.5}, (300, 400)),
    Row("orthogonal", {}, (120, 80)),
    Row("orthogonal", {"gain": 2.0}, (50, 150), id="wide"),
    Row("constant", {"value": 0.5}, (30, 40)),
    Row("identity", {}, (50, 50)),
]
PARAMS = [pytest.param(r, id=f"{r.name}-{r.id or 'default'}") for r in ROWS]


def _draw(module, lib, row, dtype=None, seed=0):
    lib.random.seed(seed)
    kwargs = dict(row.builder, **({} if dtype is None else {"dtype": dtype}))
    return getattr(module, row.name)(**kwargs)(lib.zeros(row.shape), **row.call)


def _public(module):
    return sorted(
        n
        for n in dir(module)
        if not n.startswith("_")
        and inspect.isfunction(getattr(module, n))
        and getattr(module, n).__module__ == module.__name__
    )


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_every_mlx_initializer_is_here_with_its_signatures():
    mlx_init = pytest.importorskip("mlx.nn.init")
    import mlx.core as mlx_core

    names = _public(mlx_init)
    assert len(names) >= 10 and {r.name for r in ROWS} == set(names)
    assert _public(init) == names
    for row in ROWS:
        ours, theirs = getattr(init, row.name), getattr(mlx_init, row.name)
        assert _params(ours) == [
            (n, k, d if d is not mlx_core.float32 else mx.float32) for n, k, d in _params(theirs)
        ], row.name
        assert _params(ours(**row.builder)) == _params(theirs(**row.builder)), row.name


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("row", PARAMS)
def test_shape_and_dtype(row, dtype):
    out = _draw(init, mx, row, MX[dtype])
    assert tuple(out.shape) == row.shape and out.dtype == MX[dtype]
    assert np.isfinite(to_np(out)).all()


@pytest.mark.parametrize("row", [p for p in PARAMS if p.values[0].normal])
def test_normal_statistics(row):
    x = to_np(_draw(init, mx, row, seed=1)).astype(np.float64).ravel()
    mean, std = row.normal
    n = x.size
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(n)
    assert abs(x.std() / std - 1) < 5 * math.sqrt(0.5 / n)
    assert abs(np.mean(np.abs(x - mean) < std) - 0.6827) < 0.01  # the shape, not only moments


@pytest.mark.parametrize("row", [p for p in PARAMS if p.values[0].uniform])
def test_uniform_statistics(row):
    x = to_np(_draw(init, mx, row, seed=2)).astype(np.float64).ravel()
    low, high = row.uniform
    width, n = high - low, x.size
    assert x.min() >= low and x.max() < high
    assert x.min() < low + 0.01 * width and x.max() > high - 0.01 * width
    assert abs(x.mean() - (low + high) / 2) < 5 * width / math.sqrt(12 * n)
    assert abs(x.var() / (width**2 / 12) - 1) < 0.02
    hist = np.histogram(x, bins=10, range=(low, high))[0] / n
    assert np.abs(hist - 0.1).max() < 0.01


@pytest.mark.parametrize("row", PARAMS)
def test_bits_match_mlx_under_the_same_seed(row):
    mlx_init = pytest.importorskip("mlx.nn.init")
    import mlx.core as mlx_core

    for dtype in ("float32", "bfloat16"):
        ours = to_np(_draw(init, mx, row, MX[dtype], seed=7))
        theirs = np.array(
            _draw(mlx_init, mlx_core, row, getattr(mlx_core, dtype), seed=7).astype(
                mlx_core.float32
            )
        )
        if row.name == "orthogonal":  # QR by another LAPACK path: equal to rounding
            atol = 2e-5 if dtype == "float32" else 2e-2
            np.testing.assert_allclose(ours, theirs, atol=atol, err_msg=row.name)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{row.name} {dtype}")


def test_constant_and_identity_values():
    np.testing.assert_array_equal(
        to_np(init.constant(-1.5)(mx.zeros((3, 4)))), np.full((3, 4), -1.5)
    )
    out = init.identity(mx.float16)(mx.zeros((5, 5)))
    assert out.dtype == mx.float16
    np.testing.assert_array_equal(to_np(out), np.eye(5))


def test_sparse_zeroes_the_same_count_in_every_row():
    rows, cols, sparsity = 40, 30, 0.3
    mx.random.seed(3)
    x = to_np(init.sparse(sparsity, mean=5.0, std=0.1)(mx.zeros((rows, cols))))
    zeros = (x == 0).sum(axis=1)
    assert (zeros == math.ceil(sparsity * cols)).all()
    kept = x[x != 0]
    assert abs(kept.mean() - 5.0) < 0.02 and abs(kept.std() - 0.1) < 0.01
    assert len({tuple(np.flatnonzero(r == 0)) for r in x}) > rows // 2  # picked per row


@pytest.mark.parametrize(("shape", "gain"), [((30, 20), 1.0), ((20, 30), 2.0), ((25, 25), 0.5)])
def test_orthogonal_is_orthogonal(shape, gain):
    mx.random.seed(4)
    q = to_np(init.orthogonal(gain)(mx.zeros(shape))).astype(np.float64) / gain
    small = min(shape)
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(small), atol=2e-6)


ERRORS = [
    (lambda: init.identity()(mx.zeros((2, 3))), "square"),
    (lambda: init.identity()(mx.zeros((4,))), "square"),
    (lambda: init.glorot_normal()(mx.zeros((5,))), "2"),
    (lambda: init.glorot_uniform()(mx.zeros(())), "2"),
    (lambda: init.he_normal()(mx.zeros((3,))), "2"),
    (lambda: init.he_uniform()(mx.zeros((3, 3)), mode="fan_avg"), "fan_in"),
    (lambda: init.he_normal()(mx.zeros((3, 3)), mode="in"), "fan_in"),
    (lambda: init.sparse(0.5)(mx.zeros((2, 3, 4))), "2"),
    (lambda: init.orthogonal()(mx.zeros((2, 3, 4))), "2"),
]


@pytest.mark.parametrize(("call", "words"), ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_bad_arrays_raise_value_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@pytest.mark.nuvec_only
def test_errors_name_the_initializer_and_the_callers_line():
    with pytest.raises(mx.OpError) as info:
        init.he_uniform()(mx.zeros((4,)))
    assert info.value.op_name == "he_uniform" and info.value.filename == __file__
