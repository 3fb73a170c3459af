"""Differential tests: `nuvec.compile` and `mlx.core.compile` on the same snippets and the same call
sequences (inputs from NumPy). Equal result dtypes and shapes, close values, and the same number
of traces after every call (the Python function runs as often under both): the retrace rules for
shapes, dtypes, trees, constants, keyword arguments and shapeless traces. Then a few training steps
with state captured, mlx.nn/mlx.optimizers against nuvec.nn/nuvec.optimizers from the same weights.

Skipped when either framework is missing, and entirely when NUVEC_TEST_IMPL=mlx."""

import functools
import math

import numpy as np
import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("differential tests need nuvec; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")
import mlx.nn as mlx_nn  # noqa: E402
import mlx.optimizers as mlx_optim  # noqa: E402

import nuvec.nn as nv_nn  # noqa: E402
import nuvec.optimizers as nv_optim  # noqa: E402
from compile_helpers import counted  # noqa: E402

FRAMEWORKS = {"mlx": (mlx, mlx_nn, mlx_optim), "nuvec": (nv, nv_nn, nv_optim)}


class Arr:
    """A NumPy array standing for a framework array of `dtype` (a name) in a call sequence."""

    def __init__(self, shape, dtype="float32", seed=0, transpose=False, high=None):
        rng = np.random.default_rng(seed)
        a = rng.integers(0, high, shape) if high else rng.standard_normal(shape)
        a = a * (10 if "int" in dtype and not high else 1)
        self.values, self.dtype, self.transpose = a, dtype, transpose

    def to(self, m):
        a = m.array(self.values.astype(np.float32)).astype(getattr(m, self.dtype))
        return a.T if self.transpose else a


def convert(m, tree):
    if isinstance(tree, Arr):
        return tree.to(m)
    if isinstance(tree, (list, tuple)):
        return type(tree)(convert(m, t) for t in tree)
    if isinstance(tree, dict):
        return {k: convert(m, v) for k, v in tree.items()}
    return tree


def to_numpy(m, tree):
    """Outputs as (dtype name, NumPy value) leaves, in the same tree."""
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_numpy(m, t) for t in tree)
    if isinstance(tree, dict):
        return {k: to_numpy(m, v) for k, v in tree.items()}
    if isinstance(tree, m.array):
        name = str(tree.dtype).rsplit(".", 1)[-1]
        return name, np.array(tree.astype(m.float32) if name == "bfloat16" else tree)
    return tree


def run(framework, make_fn, calls, **compile_kwargs):
    """The outputs and the trace count after each call of `calls` ([(args, kwargs), ...])."""
    m = FRAMEWORKS[framework][0]
    f = counted(make_fn(m))
    cf = m.compile(f, **compile_kwargs)
    outs, counts = [], []
    for args, kwargs in calls:
        outs.append(to_numpy(m, cf(*convert(m, args), **convert(m, kwargs))))
        counts.append(f.calls)
    return outs, counts


def assert_trees_close(got, want, rtol, atol):
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            assert_trees_close(got[k], want[k], rtol, atol)
    elif isinstance(want, (list, tuple)) and not (len(want) == 2 and isinstance(want[0], str)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_trees_close(g, w, rtol, atol)
    elif isinstance(want, tuple):  # an array leaf: (dtype name, values)
        assert got[0] == want[0]
        assert got[1].shape == want[1].shape
        np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert got == want


def check_same_as_mlx(make_fn, calls, rtol=2e-5, atol=1e-6, **compile_kwargs):
    want_outs, want_counts = run("mlx", make_fn, calls, **compile_kwargs)
    got_outs, got_counts = run("nuvec", make_fn, calls, **compile_kwargs)
    if compile_kwargs.get("shapeless"):
        # MLX 0.32 sometimes traces a shapeless function again on its second call (the first
        # compiled function of a process): count a trace per new (ranks, dtypes, constants)
        seen = set()
        for i, (args, _) in enumerate(calls):
            seen.add(tuple((a.values.ndim, a.dtype) if isinstance(a, Arr) else a for a in args))
            assert got_counts[i] == len(seen)
        assert want_counts[-1] >= got_counts[-1]
    else:
        assert got_counts == want_counts
    for got, want in zip(got_outs, want_outs):
        assert_trees_close(got, want, rtol, atol)


def one(*args, **kwargs):
    return args, kwargs


def each(*shape_sets, dtype="float32"):
    """One call per shape set (a shape, or a list of shapes for several arguments)."""
    sets = [s if isinstance(s, list) else [s] for s in shape_sets]
    return [
        one(*(Arr(s, dtype, seed=i + j) for j, s in enumerate(ss))) for i, ss in enumerate(sets)
    ]


def softmax(m):
    def fn(x):
        e = m.exp(x - m.max(x, axis=-1, keepdims=True))
        return e / m.sum(e, axis=-1, keepdims=True)

    return fn


def layer_norm(m):
    def fn(x, w, b):
        mu = m.mean(x, axis=-1, keepdims=True)
        return (x - mu) * m.rsqrt(m.var(x, axis=-1, keepdims=True) + 1e-5) * w + b

    return fn


def cross_entropy(m):
    def fn(logits, labels):
        mx_ = m.max(logits, axis=-1, keepdims=True)
        lse = m.log(m.sum(m.exp(logits - mx_), axis=-1)) + mx_.squeeze(-1)
        picked = m.take_along_axis(logits, m.expand_dims(labels, -1), axis=-1).squeeze(-1)
        return m.mean(lse - picked)

    return fn


LARGE = (512, 300)

# (id, snippet of the framework module, calls): each snippet runs the same calls under both
VALUES = [
    ("gelu", lambda m: lambda x: x * 0.5 * (1 + m.erf(x / math.sqrt(2))), [one(Arr(LARGE))]),
    ("unary", lambda m: lambda x: m.tanh(m.sin(m.exp(-m.abs(x)))) * 0.5 + 1, [one(Arr((7, 13)))]),
    ("row-bias", lambda m: lambda x, b: m.maximum(x + b, 0) * b, [one(Arr(LARGE), Arr((300,)))]),
    ("col-scale", lambda m: lambda x, s: m.exp(x * s) - s, [one(Arr(LARGE), Arr((512, 1)))]),
    ("f16-weak", lambda m: lambda x: x * 2.0 + 1, [one(Arr(LARGE, "float16"))]),
    ("bf16", lambda m: lambda x: m.exp(x) * x - 3.0, [one(Arr((7, 13), "bfloat16"))]),
    ("int", lambda m: lambda a, b: (a * 3 + b) // 2 - m.abs(b), [one(Arr(LARGE, "int32"), Arr((300,), "int32"))]),
    ("promote", lambda m: lambda a, b: a.astype(m.float16) * b + 1, [one(Arr(LARGE), Arr(LARGE, seed=1))]),
    ("softmax", softmax, [one(Arr((7, 13))), one(Arr((64, 4096))), one(Arr((3, 5, 17)))]),
    ("layer-norm", layer_norm, [one(Arr((64, 4096)), Arr((4096,)), Arr((4096,)))]),
    ("cross-entropy", cross_entropy, [one(Arr((64, 100)), Arr((64,), "uint32", high=100))]),
    ("sum-axis0", lambda m: lambda x: m.sum(m.exp(x) * 2 - x, axis=0), [one(Arr(LARGE))]),
    ("matmul-bias-relu", lambda m: lambda x, w, b: m.maximum(x @ w + b, 0), each([(128, 64), (64, 32), (32,)])),
    ("tree-out", lambda m: lambda x: {"a": (x, None), "b": [x * 2, 3]}, [one(Arr((3,)))]),
]  # fmt: skip


@pytest.mark.parametrize("name,make_fn,calls", VALUES, ids=[c[0] for c in VALUES])
def test_values_as_mlx(name, make_fn, calls):
    loose = any(a.dtype in ("float16", "bfloat16") for args, _ in calls for a in args)
    check_same_as_mlx(make_fn, calls, rtol=1e-2 if loose else 2e-5, atol=1e-2 if loose else 1e-5)


def tree_sum(m):
    def total(tree):
        if isinstance(tree, (list, tuple)):
            return sum((total(t) for t in tree), 0)
        if isinstance(tree, dict):
            return sum((total(v) for v in tree.values()), 0)
        return len(tree) if isinstance(tree, str) else (0 if tree is None else tree)

    return lambda x, *rest, **kwargs: x * 2 + total(rest) + total(kwargs)


A, B, C = Arr((2, 3)), Arr((2, 3), seed=1), Arr((3, 3), seed=2)

# Call sequences whose trace counts must match MLX's after every call
SEQUENCES = [
    ("shapes", [one(A), one(B), one(C), one(A), one(Arr((6,))), one(C)]),
    ("dtypes", [one(A), one(Arr((2, 3), "float16")), one(Arr((2, 3), "int32")), one(B)]),
    ("layouts", [one(A), one(Arr((3, 2), transpose=True)), one(B)]),
    ("trees", [one(A, (A, B)), one(A, (B, A)), one(A, (A, B, B)), one(A, {"a": A}), one(A, {"b": A})]),
    ("constants", [one(A, 1), one(A, 1), one(A, 2), one(A, 1.0), one(A, "s"), one(A, "t"), one(A, None)]),
    ("nan-constants", [one(A, float("nan")), one(A, float("nan")), one(A, 1.5)]),
    ("constants-in-trees", [one(A, (A, 1)), one(A, (A, 2)), one(A, {"a": 1}), one(A, {"a": B})]),
    ("kwargs", [one(A, s=1), one(A, s=1), one(A, s=2), one(A, t=1), one(A, s=A), one(A, s=B), one(A, B)]),
    ("scalars", [one(Arr(())), one(Arr((), seed=3)), one(Arr((1,))), one(A, Arr(()))]),
]  # fmt: skip


@pytest.mark.parametrize("name,calls", SEQUENCES, ids=[c[0] for c in SEQUENCES])
def test_trace_counts_as_mlx(name, calls):
    check_same_as_mlx(tree_sum, calls)


SHAPELESS = [
    ("unary", lambda m: lambda x: m.tanh(m.exp(x) * 2 - 1), each((2, 3), (4, 5), (300, 500), (2, 3, 4), (7, 7))),
    ("f16", lambda m: lambda x: m.exp(x) * 2, each((2, 3), (4, 5), dtype="float16") + each((7, 7))),
    ("row-bias", lambda m: lambda x, b: x * b + b, each([(2, 3), (3,)], [(5, 7), (7,)], [(400, 400), (400,)])),
    ("softmax", softmax, each((2, 3), (9, 4), (64, 4096), (3, 2))),
    ("layer-norm", layer_norm, each([(2, 3), (3,), (3,)], [(9, 40), (40,), (40,)])),
    ("mean-var", lambda m: lambda x: m.mean(x, axis=0) * m.var(x), each((2, 3), (9, 4), (30, 2))),
    ("sum-rows", lambda m: lambda x: m.sum(m.abs(x), axis=-1), each((2, 3), (2, 17), (2, 300))),
    ("sum-last", lambda m: lambda x: m.sum(x * x, axis=-1), each((2, 3), (600, 300), (5, 2, 3))),
    ("constants", lambda m: lambda x, c: x * c, [one(Arr((2, 3)), 2.0), one(Arr((4, 5)), 2.0), one(Arr((4, 5)), 3.0)]),
]  # fmt: skip


@pytest.mark.parametrize("name,make_fn,calls", SHAPELESS, ids=[c[0] for c in SHAPELESS])
def test_shapeless_as_mlx(name, make_fn, calls):
    check_same_as_mlx(make_fn, calls, rtol=1e-3, atol=1e-3, shapeless=True)


def trace_error(framework, fn_of_m, arg):
    m = FRAMEWORKS[framework][0]
    try:
        m.compile(fn_of_m(m))(m.ones((2, 3)), arg)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


ERRORS = [
    ("item", lambda m: lambda x, _: x[0, 0].item(), None),
    ("tolist", lambda m: lambda x, _: x.tolist(), None),
    ("numpy", lambda m: lambda x, _: np.array(x), None),
    ("print", lambda m: lambda x, _: print(x) or x, None),
    ("bool", lambda m: lambda x, _: x if x.sum() > 0 else -x, None),
    ("eval", lambda m: lambda x, _: m.eval(x) or x, None),
    ("object-arg", lambda m: lambda x, _: x, object()),
    ("set-arg", lambda m: lambda x, _: x, {1}),
    ("ndarray-arg", lambda m: lambda x, _: x, np.ones(2)),
]


@pytest.mark.parametrize("name,fn_of_m,arg", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_as_mlx(name, fn_of_m, arg):
    want = trace_error("mlx", fn_of_m, arg)
    assert want is not None
    got = trace_error("nuvec", fn_of_m, arg)
    assert got is not None and issubclass(got, want), got  # nuvec's OpError is a ValueError


def train(framework, weights, steps=8):
    """Losses, dropout masks and final weights of compiled steps with state captured."""
    m, nn, optim = FRAMEWORKS[framework]
    m.random.seed(11)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 1))
    model.update(convert(m, weights))
    opt = optim.Adam(learning_rate=1e-2)
    rng = np.random.default_rng(1)
    x = m.array(rng.standard_normal((32, 6)).astype(np.float32))
    y = m.array(rng.standard_normal((32, 1)).astype(np.float32))
    value_and_grad = nn.value_and_grad(model, lambda model, x, y: m.mean((model(x) - y) ** 2))
    state = [model.state, opt.state, m.random.state]

    @functools.partial(m.compile, inputs=state, outputs=state)
    def step(x, y):
        loss, grads = value_and_grad(model, x, y)
        opt.update(model, grads)
        return loss, model.layers[2](m.ones((4, 16)))

    losses, masks = [], []
    for _ in range(steps):
        loss, mask = step(x, y)
        losses.append(loss.item())
        masks.append(np.array(mask))
    return losses, masks, to_numpy(m, model.parameters())


WEIGHTS = {
    "layers": [
        {"weight": Arr((16, 6), seed=1), "bias": Arr((16,), seed=2)},
        {},
        {},
        {"weight": Arr((1, 16), seed=3), "bias": Arr((1,), seed=4)},
    ]
}


def test_training_steps_as_mlx():
    want_losses, want_masks, want_params = train("mlx", WEIGHTS)
    got_losses, got_masks, got_params = train("nuvec", WEIGHTS)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-4)
    for g, w in zip(got_masks, want_masks):  # nuvec's random bits are MLX's
        np.testing.assert_array_equal(g, w)
    assert_trees_close(got_params, want_params, rtol=1e-4, atol=1e-6)


def test_random_without_captured_key_as_mlx():
    """Both read the key once, at trace time, and replay the traced draw."""
    draws = {}
    for name, (m, _, _) in FRAMEWORKS.items():
        m.random.seed(0)
        f = m.compile(lambda x, m=m: x + m.random.uniform(shape=x.shape))
        draws[name] = [np.array(f(m.zeros((6,)))) for _ in range(3)]
        draws[name].append(np.array(m.random.uniform(shape=(6,))))
    for g, w in zip(draws["nuvec"], draws["mlx"]):
        np.testing.assert_array_equal(g, w)
