"""`compile` against the same function run uncompiled: values (bit for bit on nuvec), trace counts
(the Python function runs once per signature), shapeless traces, trees, the cache, the off
switches and the trace-time errors.

Runs against MLX too (NUVEC_TEST_IMPL=mlx), which is how the retrace rules and error types here
were checked; MLX compiles on the CPU through a C compiler and makes no bitwise promise, so on
MLX the values are compared within a tolerance. Every element-wise op and random expressions are
in test_compile_ops.py; transforms in test_compile_transforms.py; state capture in a training
loop and random numbers in test_compile_state.py; the MLX differential tests in
test_compile_mlx.py."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX, mx
from compile_helpers import assert_same, check_compiled, counted, nuvec_bug, rand

FILE = os.path.basename(__file__)

LARGE = (512, 300)  # 153600 elements: over 2^17, where work is fused and spread over threads
A, B = rand((2, 3)), rand((2, 3), seed=1)

# Element-wise chains: (id, function, input shapes, dtype)
ELEMENTWISE = [
    ("unary", lambda x: mx.tanh(mx.sin(mx.exp(-mx.abs(x)))) * 0.5 + 1, [(7, 13)], "float32"),
    ("unary-large", lambda x: mx.sqrt(mx.abs(mx.cos(x) * 3 - 1)), [LARGE], "float32"),
    ("unary-1d-large", lambda x: mx.log1p(mx.square(x)) - mx.sigmoid(x), [(1 << 18,)], "float32"),
    (
        "gelu-erf",
        lambda x: x * 0.5 * (1 + mx.erf(x / math.sqrt(2))),
        [LARGE],
        "float32",
    ),
    ("silu", lambda x: x * mx.sigmoid(x), [(7, 13)], "float32"),
    ("row-bias", lambda x, b: mx.maximum(x + b, 0) * b, [LARGE, (300,)], "float32"),
    ("row-bias-small", lambda x, b: mx.maximum(x + b, 0) * b, [(7, 13), (13,)], "float32"),
    ("col-scale", lambda x, s: mx.exp(x * s) - s, [LARGE, (512, 1)], "float32"),
    ("scalar-array", lambda x, s: x * s + mx.square(s), [LARGE, ()], "float32"),
    ("where", lambda x: mx.where(x > 0, x, 0.1 * x), [LARGE], "float32"),
    ("outer", lambda a, b: a * b + a, [(512, 1), (1, 300)], "float32"),
    ("f16-weak-scalar", lambda x: x * 2.0 + 1, [LARGE], "float16"),
    ("bf16-chain", lambda x: mx.exp(x) * x - 3.0, [(7, 13)], "bfloat16"),
    ("f64-chain", lambda x: mx.tanh(x) * mx.cos(x), [(7, 13)], "float64"),
    ("int-chain", lambda a, b: (a * 3 + b) // 2 - mx.abs(b), [LARGE, (300,)], "int32"),
    ("mixed-dtypes", lambda a, b: a.astype(mx.float16) * b + 1, [LARGE, LARGE], "float32"),
    ("compare-cast", lambda a, b: (a > b).astype(mx.float32) + a, [LARGE, (300,)], "float32"),
]


def inputs(shapes, dtype, seed=0):
    scale = 10 if dtype == "int32" else 1  # integers spread over more than -1..1
    return [
        rand(s, np.float64, seed + i, scale).astype(getattr(mx, dtype))
        for i, s in enumerate(shapes)
    ]


@pytest.mark.parametrize("name,fn,shapes,dtype", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_chains_equal_uncompiled(name, fn, shapes, dtype):
    check_compiled(fn, *inputs(shapes, dtype))


# What the simplifier may touch (views, casts, repeated and constant subexpressions, dead
# outputs) and may not drop (casts that round, integer wrap-around): (id, function, shapes)
GRAPHS = [
    ("transposed", lambda x: (x.T * 2 + 1).T - x, [LARGE]),
    ("strided-slices", lambda x: mx.exp(x[::2, 1:]) + x[1::2, :-1], [LARGE]),
    ("reshape", lambda x: mx.reshape(mx.sin(x), (-1,)) * 2, [LARGE]),
    ("concatenate", lambda x: mx.concatenate([mx.exp(x), -x], axis=1).sum(axis=1), [LARGE]),
    ("broadcast-to", lambda x, b: mx.broadcast_to(b, x.shape) * x + b, [LARGE, (1, 300)]),
    ("no-op-cast-and-view", lambda x: x.astype(mx.float32).reshape(x.shape) * 1 + 0, [LARGE]),
    ("rounding-cast", lambda x: x.astype(mx.float16).astype(mx.float32) * 3, [LARGE]),
    ("bf16-round-trip", lambda x: (x * 1.001).astype(mx.bfloat16).astype(mx.float32), [(7, 13)]),
    ("repeated", lambda x: mx.exp(x) + mx.exp(x) * mx.exp(x), [LARGE]),
    ("constants", lambda x: x * (mx.array(2.0) + mx.array(3.0)) + mx.ones(x.shape), [LARGE]),
    ("dead-output", lambda x: (mx.exp(x), x + 1)[1], [LARGE]),
    ("shared-outputs", lambda x: (mx.exp(x) * 2, mx.exp(x).sum(-1), mx.exp(x)), [LARGE]),
    # outputs over 8 MB, written around the caches
    ("large-outputs", lambda x: (mx.exp(x), mx.where(x > 0, x, x * 0.1)), [(2048, 2100)]),
    ("large-softmax", lambda x: mx.softmax(x * 2, axis=-1) + 1, [(2048, 2100)]),
    ("uint8-wrap", lambda x: (mx.abs(x) * 50).astype(mx.uint8) * 200, [LARGE]),
    ("int-times-float", lambda x: (x * 10).astype(mx.int32) * 2.5, [(7, 13)]),
    ("bool-plus-int", lambda x: (x > 0) + 1, [LARGE]),
    ("full-sum", lambda x: mx.sum(mx.exp(x)) + mx.mean(x * x), [LARGE]),
    ("argmax", lambda x: mx.argmax(x * x - x, axis=-1), [LARGE]),
    (
        "logsumexp-op",
        lambda x: mx.logsumexp(x * 2, axis=-1) + mx.softmax(x, axis=-1).sum(-1),
        [LARGE],
    ),
]


@pytest.mark.parametrize("name,fn,shapes", GRAPHS, ids=[c[0] for c in GRAPHS])
def test_simplified_graphs_equal_uncompiled(name, fn, shapes):
    check_compiled(fn, *inputs(shapes, "float32"))


def test_overlapping_views_as_arguments():
    x = rand(LARGE)
    check_compiled(lambda a, b: a * 2 + b, x[:, :-1], x[:, 1:])


def test_output_fed_back_as_input():
    f = counted(lambda x, w: mx.tanh(x * w + 0.1))
    cf = mx.compile(f)
    x, y, w = rand(LARGE), rand(LARGE), rand((300,), seed=1)
    for _ in range(10):
        x, y = cf(x, w), mx.tanh(y * w + 0.1)
    assert_same(x, y)
    assert f.calls == 1


def test_exception_in_the_function_propagates_and_is_not_cached():
    def fn(x):
        if x.shape[0] == 3:
            raise KeyError("three")
        return x + 1

    f = counted(fn)
    cf = mx.compile(f)
    for shape, calls in (((3,), 1), ((2,), 2), ((3,), 3), ((2,), 3)):
        if shape == (3,):
            with pytest.raises(KeyError):
                cf(mx.ones(shape))
        else:
            assert_same(cf(mx.ones(shape)), mx.ones(shape) + 1)
        assert f.calls == calls


# Calls at the edges: (id, function, arguments)
EDGES = [
    ("no-arguments", lambda: mx.ones((3,)) * 2, ()),
    ("constant-only", lambda c: mx.ones((3,)) * c, (2.0,)),
    ("empty", lambda x: mx.exp(x) * 2, (mx.ones((0, 5)),)),
    ("empty-rows-sum", lambda x: mx.sum(mx.exp(x), axis=-1), (mx.ones((3, 0)),)),
    ("zero-dim", lambda x, y: mx.exp(x) * y + 1, (mx.array(2.0), mx.array(3.0))),
    (
        "rank-5-broadcast",
        lambda a, b: mx.exp(a) * b,
        (rand((2, 1, 3, 1, 5)), rand((1, 4, 1, 6, 1))),
    ),
    ("constant-output", lambda x: (x, mx.array(5.0)), (A,)),
    ("empty-tuple-output", lambda x: (), (A,)),
    ("none-output", lambda x: None, (A,)),
    ("int-output", lambda x: (x * 2, 3), (A,)),
    ("repeated-output", lambda x: (x * 2,) * 3, (A,)),
    ("dict-output-order", lambda x: {"z": x, "a": x + 1}, (A,)),
    (
        "constants-built-inside",
        lambda x: (
            x * mx.array(np.arange(3, dtype=np.float32))
            + mx.arange(3)
            + mx.eye(3)[0]
            - mx.random.uniform(shape=(3,), key=mx.random.key(0))
        ),
        (A,),
    ),
]


@pytest.mark.parametrize("name,fn,args", EDGES, ids=[c[0] for c in EDGES])
def test_edge_calls(name, fn, args):
    check_compiled(fn, *args)


def test_weak_python_scalar_keeps_float16():
    out = mx.compile(lambda x: x * 2.0 + 1)(mx.ones((4,), mx.float16))
    assert out.dtype == mx.float16


def softmax(x):
    e = mx.exp(x - mx.max(x, axis=-1, keepdims=True))
    return e / mx.sum(e, axis=-1, keepdims=True)


def log_softmax(x):
    s = x - mx.max(x, axis=-1, keepdims=True)
    return s - mx.log(mx.sum(mx.exp(s), axis=-1, keepdims=True))


def layer_norm(x):
    w = mx.linspace(0.5, 1.5, x.shape[-1])
    mu = mx.mean(x, axis=-1, keepdims=True)
    return (x - mu) * mx.rsqrt(mx.var(x, axis=-1, keepdims=True) + 1e-5) * w + 0.25


def rms_norm(x):
    return x * mx.rsqrt(mx.mean(x * x, axis=-1, keepdims=True) + 1e-6) * 1.5


def cross_entropy(x):
    labels = mx.broadcast_to(mx.arange(x.shape[-2]) % x.shape[-1], x.shape[:-1])
    m = mx.max(x, axis=-1, keepdims=True)
    lse = mx.log(mx.sum(mx.exp(x - m), axis=-1)) + m.squeeze(-1)
    picked = mx.take_along_axis(x, mx.expand_dims(labels, -1), axis=-1).squeeze(-1)
    return mx.mean(lse - picked)


def sum_axis0(x):
    return mx.sum(mx.exp(x) * 2 - x, axis=0)


REDUCTIONS = [softmax, log_softmax, layer_norm, rms_norm, cross_entropy, sum_axis0]


@pytest.mark.parametrize("fn", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(7, 13), (64, 4096), (3, 5, 17), (40, 4000)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_reduction_patterns_equal_uncompiled(fn, shape, dtype):
    check_compiled(fn, rand(shape, seed=3, scale=3).astype(getattr(mx, dtype)))


@pytest.mark.parametrize("shape", [((7, 13), (13, 5)), ((128, 512), (512, 300))], ids=str)
def test_matmul_bias_relu(shape):
    (a, b) = shape
    check_compiled(lambda x, w, c: mx.maximum(x @ w + c, 0), rand(a), rand(b, seed=1), rand(b[1:]))


def summed(tree):
    """Every number or array leaf of `tree` added up (strings count by length)."""
    if isinstance(tree, (list, tuple)):
        return sum((summed(t) for t in tree), 0)
    if isinstance(tree, dict):
        return sum((summed(v) for v in tree.values()), 0)
    if isinstance(tree, str):
        return len(tree)
    return 0 if tree is None else tree


def tree_fn(x, *rest, **kwargs):
    return x * 2 + summed(rest) + summed(kwargs)


# (id, first call (args, kwargs), second call, whether the second call traces again)
RETRACE = [
    ("same-signature", ((A,), {}), ((B,), {}), False),
    ("new-shape", ((A,), {}), ((rand((3, 3)),), {}), True),
    ("new-rank", ((A,), {}), ((rand((6,)),), {}), True),
    ("new-dtype", ((A,), {}), ((A.astype(mx.float16),), {}), True),
    ("scalar-array-vs-float", ((A, mx.array(1.0)), {}), ((A, 1.0), {}), True),
    ("transposed-same-shape", ((A,), {}), ((rand((3, 2)).T,), {}), False),
    ("broadcast-same-shape", ((A,), {}), ((mx.broadcast_to(rand((1, 3)), (2, 3)),), {}), False),
    ("tuple-leaves", ((A, (A, B)), {}), ((A, (B, A)), {}), False),
    ("tree-length", ((A, (A, B)), {}), ((A, (A, B, B)), {}), True),
    ("dict-values", ((A, {"a": A}), {}), ((A, {"a": B}), {}), False),
    ("dict-keys", ((A, {"a": A}), {}), ((A, {"b": A}), {}), True),
    ("nested", ((A, [{"a": (A,)}]), {}), ((A, [{"a": (B,)}]), {}), False),
    ("int-constant", ((A, 1), {}), ((A, 2), {}), True),
    ("same-int-constant", ((A, 1), {}), ((A, 1), {}), False),
    ("int-to-float-constant", ((A, 1), {}), ((A, 1.0), {}), True),
    ("float-constant", ((A, 0.5), {}), ((A, 0.25), {}), True),
    ("constant-in-tuple", ((A, (A, 1)), {}), ((A, (A, 2)), {}), True),
    ("string-constant", ((A, "a"), {}), ((A, "bb"), {}), True),
    ("none", ((A, None), {}), ((A, None), {}), False),
    ("kwarg-same", ((A,), {"s": 1}), ((A,), {"s": 1}), False),
    ("kwarg-constant", ((A,), {"s": 1}), ((A,), {"s": 2}), True),
    ("kwarg-name", ((A,), {"s": 1}), ((A,), {"t": 1}), True),
    ("kwarg-array", ((A,), {"s": A}), ((A,), {"s": B}), False),
    ("kwarg-array-shape", ((A,), {"s": A}), ((A,), {"s": rand((3,))}), True),
    ("kwarg-vs-positional", ((A, B), {}), ((A,), {"s": B}), True),
]


@pytest.mark.parametrize("name,first,second,retraces", RETRACE, ids=[c[0] for c in RETRACE])
def test_retrace_rules(name, first, second, retraces):
    f = counted(tree_fn)
    cf = mx.compile(f)
    for (args, kwargs), calls in ((first, 1), (second, 1 + retraces), (first, 1 + retraces)):
        assert_same(cf(*args, **kwargs), tree_fn(*args, **kwargs))
        assert f.calls == calls


@pytest.mark.nuvec_only  # MLX 0.32 replays 0.0's values for -0.0
def test_negative_zero_constant_is_a_new_constant():
    f = counted(lambda x, c: x + c)
    cf = mx.compile(f)
    x = mx.array([-0.0, 1.0, -0.0], mx.float64)
    for c in (0.0, -0.0, 0.0):
        got = np.array(cf(x, c))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array(x) + c))
    assert f.calls == 2


def test_nan_constant_traces_once():
    f = counted(lambda x, c: x + c)
    cf = mx.compile(f)
    for _ in range(3):
        assert_same(cf(A, float("nan")), A + float("nan"))
    assert f.calls == 1


@pytest.mark.nuvec_only  # MLX 0.32 keys True as 1 and replays the bool trace for an int
def test_bool_and_int_constants_trace_apart():
    f = counted(lambda x, c: x * c)
    cf = mx.compile(f)
    xb = mx.array([True, False])
    for c in (True, 1, True):
        assert_same(cf(xb, c), xb * c)
    assert f.calls == 2


def test_keyword_and_dict_order():
    f = counted(lambda x, d, **kw: x * kw["a"] - kw["b"] + d["p"] * d["q"])
    cf = mx.compile(f)
    C = rand((2, 3), seed=7)
    for d, kw in (({"p": A, "q": B}, {"a": B, "b": C}), ({"q": C, "p": B}, {"b": A, "a": C})):
        assert_same(cf(A, d, **kw), f(A, d, **kw))


def test_many_calls_trace_once():
    f = counted(lambda x, y: mx.exp(x) * y)
    cf = mx.compile(f)
    for seed in range(20):
        x, y = rand((5, 6), seed=seed), rand((6,), seed=seed + 100)
        assert_same(cf(x, y), mx.exp(x) * y)
    assert f.calls == 1


def test_many_calls_with_tuple_outputs_trace_once():
    # (nuvec replays a cached trace of arrays to a flat tuple without leaving C++.)
    f = counted(lambda x, y: (mx.exp(x) * y, x - y, y))
    cf = mx.compile(f)
    for seed in range(6):
        x, y = rand((5, 6), seed=seed), rand((6,), seed=seed + 100)
        out = cf(x, y)
        assert type(out) is tuple and len(out) == 3
        for got, want in zip(out, (mx.exp(x) * y, x - y, y)):
            assert_same(got, want)
    assert f.calls == 1


@pytest.mark.nuvec_only  # MLX keys lists and tuples alike and replays the wrong trace
@pytest.mark.parametrize("first,second", [((A, B), [A, B]), ([A, B], (A, B))], ids=["t-l", "l-t"])
def test_tuple_and_list_retrace(first, second):
    def fn(x, t):
        return x * (2 if isinstance(t, tuple) else 3) + t[0]

    f = counted(fn)
    cf = mx.compile(f)
    for t, calls in ((first, 1), (second, 2)):
        assert_same(cf(A, t), fn(A, t))
        assert f.calls == calls


def test_new_default_stream_retraces():
    f = counted(lambda x: x + 1)
    cf = mx.compile(f)
    cf(A)
    with mx.stream(mx.new_stream(mx.cpu)):
        assert_same(cf(A), A + 1)
    assert f.calls == 2


def test_same_array_for_two_arguments():
    f = counted(lambda a, b: a * b + a)
    cf = mx.compile(f)
    for a, b in ((A, A), (A, B), (B, B)):
        assert_same(cf(a, b), a * b + a)


def test_closure_arrays_are_read_at_trace_time():
    """Arrays the function closes over are constants of the trace, as in MLX: state that changes
    between calls must be passed as an argument or captured through inputs=/outputs=."""
    state = {"w": mx.array([1.0, 2.0, 3.0])}
    cf = mx.compile(lambda x: x * state["w"])
    x = mx.ones((3,))
    first = cf(x)
    state["w"] = mx.array([5.0, 5.0, 5.0])
    assert_same(cf(x), first)


class Tripler:
    """A callable object whose attributes share names with a compiled function's own."""

    def __init__(self):
        self.fun, self.inputs, self.outputs, self.shapeless, self.cache = "x", 1, 2, True, {}

    def __call__(self, x):
        return x * 3


def test_compile_a_callable_object():
    f = Tripler()
    cf = mx.compile(f)
    for x in (A, B, rand((4,))):
        assert_same(cf(x), x * 3)


def test_decorator_form():
    calls = []

    @mx.compile
    def f(x):
        calls.append(1)
        return mx.exp(x) + 1

    assert_same(f(A), mx.exp(A) + 1)
    assert_same(f(B), mx.exp(B) + 1)
    assert len(calls) == 1


SHAPELESS = [
    ("unary", lambda x: mx.tanh(mx.exp(x) * 2 - 1), [[(2, 3)], [(4, 5)], [(3, 7)], [(300, 500)]]),
    ("row-bias", lambda x, b: x * b + b, [[(2, 3), (3,)], [(5, 7), (7,)], [(400, 400), (400,)]]),
    ("softmax", softmax, [[(2, 3)], [(9, 4)], [(64, 4096)], [(3, 2)]]),
    ("rms-norm", rms_norm, [[(2, 3)], [(40, 4000)], [(3, 5)]]),
    ("mean-var", lambda x: mx.mean(x, axis=-1) + mx.var(x, axis=0).sum(), [[(2, 3)], [(7, 9)]]),
    ("mean-all", lambda x: x - mx.mean(x), [[(2, 3)], [(300, 500)], [(4, 2)]]),
    ("sum-last", lambda x: mx.sum(x * x, axis=-1), [[(2, 3)], [(600, 300)], [(5, 2)]]),
    # the same output shape from rows of another length
    ("sum-rows", lambda x: mx.sum(mx.abs(x), axis=-1), [[(2, 3)], [(2, 17)], [(2, 300)]]),
    ("max-rows", lambda x: mx.max(mx.exp(x), axis=-1), [[(4, 300)], [(4, 2)], [(4, 5000)]]),
    ("mean-rows", lambda x: mx.mean(mx.abs(x), -1, keepdims=True), [[(3, 2)], [(3, 30)]]),
    (
        "logsumexp-last",
        lambda x: mx.logsumexp(x, axis=-1, keepdims=True),
        [[(5, 2, 4)], [(2, 3, 9)]],
    ),
    (
        "logsumexp-axis-1",
        lambda x: mx.logsumexp(x, axis=1, keepdims=True),
        [[(2, 3, 300)], [(64, 7, 300)]],
    ),
]


def check_shapeless(fn, shape_sets):
    f = counted(fn)
    cf = mx.compile(f, shapeless=True)
    for i, shapes in enumerate(shape_sets + shape_sets[:1]):
        args = [rand(s, seed=i + j) for j, s in enumerate(shapes)]
        assert_same(cf(*args), fn(*args))
    assert f.calls == 1


@pytest.mark.parametrize("name,fn,shape_sets", SHAPELESS, ids=[c[0] for c in SHAPELESS])
def test_shapeless_one_trace_serves_all_shapes(name, fn, shape_sets):
    check_shapeless(fn, shape_sets)


def size_one_variants(shapes):
    """The shape set with every axis 1, and with every axis but the last 1."""
    return [[(1,) * len(s) for s in shapes], [(1,) * (len(s) - 1) + (6,) for s in shapes]]


@pytest.mark.nuvec_only  # MLX 0.32 crashes (SIGSEGV) when a shapeless trace meets a size-1 axis
@pytest.mark.parametrize("name,fn,shape_sets", SHAPELESS, ids=[c[0] for c in SHAPELESS])
def test_shapeless_size_one_axes(name, fn, shape_sets):
    check_shapeless(fn, shape_sets + size_one_variants(shape_sets[0]))


# Known nuvec bugs of logsumexp traced shapeless on length-1 axes: (ones, id) -> what happens
LOGSUMEXP_BUGS = {
    ("all-but-last", "logsumexp-last"): "traced on (1, 1, 4): OpError from its own reshape",
}


@pytest.mark.nuvec_only  # MLX 0.32 crashes (SIGSEGV) when a shapeless trace meets a size-1 axis
@pytest.mark.parametrize(
    "fn,shape_sets,ones",
    [
        pytest.param(
            fn,
            shape_sets,
            ones,
            id=f"{ones}-{name}",
            marks=[nuvec_bug(LOGSUMEXP_BUGS[ones, name])] if (ones, name) in LOGSUMEXP_BUGS else [],
        )
        for ones in ("leading", "all-but-last")
        for name, fn, shape_sets in SHAPELESS
    ],
)
def test_shapeless_traced_on_size_one_axes(fn, shape_sets, ones):
    def one(s):
        return (1,) + s[1:] if ones == "leading" else (1,) * (len(s) - 1) + s[-1:]

    check_shapeless(fn, [[one(s) for s in shape_sets[0]]] + shape_sets)


# Shape-dependent steps whose output shape MLX's shapeless replay works out again
SHAPELESS_VIEWS = [
    ("reshape-minus-one", lambda x: x.reshape(-1) * 2),
    ("flatten", lambda x: mx.flatten(x) + 1),
    ("expand-dims", lambda x: mx.expand_dims(x, 0) * 2),
    ("none-index", lambda x: x[:, None] * x[:, :, None]),
    ("squeeze", lambda x: mx.sum(x, axis=-1, keepdims=True).squeeze(-1)),
    ("concatenate", lambda x: mx.concatenate([x, x * 2], axis=0)),
    ("zeros-like", lambda x: mx.zeros_like(x) + x),
    ("ones-like", lambda x: mx.ones_like(x) * x),
]


@pytest.mark.parametrize("name,fn", SHAPELESS_VIEWS, ids=[c[0] for c in SHAPELESS_VIEWS])
def test_shapeless_recomputes_view_shapes(name, fn):
    check_shapeless(fn, [[(2, 3)], [(3, 4)], [(50, 40)]])


# Views traced on length-1 axes that nuvec cannot map to a new shape (docs/compile.md: it raises
# OpError); MLX 0.32 replays them right
VIEW_BUG = "ambiguous shapeless reshape traced on a length-1 axis raises OpError; MLX replays it"
VIEW_BUGS = {((2, 1), "none-index"), ((1, 3), "expand-dims"), ((1, 3), "none-index")}


@pytest.mark.nuvec_only  # MLX 0.32 crashes (SIGSEGV) on some of these size-1 axes
@pytest.mark.parametrize(
    "fn,first",
    [
        pytest.param(
            fn,
            first,
            id=f"{first}-{name}",
            marks=[nuvec_bug(VIEW_BUG)] * ((first, name) in VIEW_BUGS),
        )
        for first in ((2, 1), (1, 3))
        for name, fn in SHAPELESS_VIEWS
    ],
)
def test_shapeless_view_shapes_traced_on_size_one_axes(fn, first):
    check_shapeless(fn, [[first], [(3, 4)], [(50, 40)], [(1, 5)]])


# Steps fixed by the traced shape (a slice's bounds, a shape passed as numbers): a replay for
# another shape must give the uncompiled result or raise, never a wrong array
SHAPELESS_FIXED = [
    ("slice", lambda x: x[1:] * 2),
    ("slice-end", lambda x: x[:, :2] * 2),
    ("split", lambda x: mx.split(x, 2, axis=1)[0]),
    ("pad", lambda x: mx.pad(x, 1)),
    ("reshape-numbers", lambda x: x.reshape(x.shape[0] * x.shape[1]) * 2),
    ("zeros-shape", lambda x: mx.zeros(x.shape) + x),
    ("arange", lambda x: x + mx.arange(x.shape[-1])),
    ("take", lambda x: mx.take(x, mx.array([0, 1]), axis=0)),
    ("broadcast-to", lambda x: mx.broadcast_to(x, (2, *x.shape)) * 2),
    ("random", lambda x: x + mx.random.uniform(shape=x.shape, key=mx.random.key(0))),
]


@pytest.mark.nuvec_only  # MLX 0.32 returns wrong shapes or garbage values for several of these
@pytest.mark.parametrize("name,fn", SHAPELESS_FIXED, ids=[c[0] for c in SHAPELESS_FIXED])
def test_shapeless_fixed_shapes_raise_or_are_right(name, fn):
    cf = mx.compile(fn, shapeless=True)
    assert_same(cf(rand((2, 4))), fn(rand((2, 4))))
    x = rand((3, 6), seed=1)
    try:
        got = cf(x)
    except ValueError as e:
        assert name.split("-")[0] in str(e) or "shape" in str(e), str(e)
        return
    assert_same(got, fn(x))


@pytest.mark.parametrize(
    "second",
    [rand((2, 3, 4)), rand((6,)), A.astype(mx.float16), A.astype(mx.int32)],
    ids=["rank-3", "rank-1", "float16", "int32"],
)
def test_shapeless_retraces_on_rank_or_dtype(second):
    fn = lambda x: mx.exp(x) * 2  # noqa: E731
    f = counted(fn)
    cf = mx.compile(f, shapeless=True)
    for x, calls in ((A, 1), (second, 2), (A, 2), (second, 2)):
        assert_same(cf(x), fn(x))
        assert f.calls == calls


def test_tree_arguments_and_outputs():
    def fn(t, d, *, scale):
        a, (b, c) = t
        return {"sum": a + b, "pair": (d["x"] * c, [d["y"] - scale]), "none": None}

    f = counted(fn)
    cf = mx.compile(f)
    for seed in range(3):
        t = (rand((4,), seed=seed), [rand((4,), seed=seed + 1), rand((4,), seed=seed + 2)])
        d = {"x": rand((4,), seed=seed + 3), "y": rand((2, 4), seed=seed + 4)}
        scale = rand((4,), seed=seed + 5)
        got, want = cf(t, d, scale=scale), fn(t, d, scale=scale)
        assert set(got) == {"sum", "pair", "none"} and got["none"] is None
        assert isinstance(got["pair"], tuple) and isinstance(got["pair"][1], list)
        for g, w in ((got["sum"], want["sum"]), (got["pair"][0], want["pair"][0])):
            assert_same(g, w)
        assert_same(got["pair"][1][0], want["pair"][1][0])
    assert f.calls == 1


def test_output_may_be_an_input_or_repeat_an_array():
    cf = mx.compile(lambda x, y: (x, y * 2, y * 2, x))
    out = cf(A, B)
    for g, w in zip(out, (A, B * 2, B * 2, A)):
        assert_same(g, w)


def test_cache_keeps_working_over_many_shapes():
    fn = lambda x: mx.exp(x) - x  # noqa: E731
    f = counted(fn)
    cf = mx.compile(f)
    shapes = [(n % 17 + 1, n // 17 + 1) for n in range(300)]
    for s in shapes + shapes[:5]:
        x = rand(s, seed=len(s))
        assert_same(cf(x), fn(x))
    assert f.calls >= len(shapes)


@pytest.mark.nuvec_only  # MLX keeps every trace; nuvec keeps the CACHE_SIZE most recent
def test_cache_drops_the_least_recently_used_trace():
    from nuvec._compile import CACHE_SIZE

    f = counted(lambda x: x * 2)
    cf = mx.compile(f)
    shapes = [(n + 1,) for n in range(CACHE_SIZE + 1)]
    for s in shapes[:CACHE_SIZE] * 2:  # all kept: the second round replays
        assert_same(cf(mx.ones(s)), mx.ones(s) * 2)
    assert f.calls == CACHE_SIZE
    for s, calls in ((shapes[-1], 1), (shapes[1], 1), (shapes[0], 2), (shapes[2], 3)):
        assert_same(cf(mx.ones(s)), mx.ones(s) * 2)
        assert f.calls == CACHE_SIZE + calls


@pytest.mark.nuvec_only  # MLX keeps every trace
@pytest.mark.parametrize("args", [(), (1.0,)], ids=["arrays-only", "with-constant"])
def test_cache_keeps_a_recently_used_trace(args):
    from nuvec._compile import CACHE_SIZE

    f = counted(lambda x, *c: x * 2)
    cf = mx.compile(f)
    hot = mx.ones((1000,))
    for n in range(CACHE_SIZE):  # the hot shape first, then enough to fill the cache
        cf(hot if n == 0 else mx.ones((n,)), *args)
    cf(hot, *args)  # now the most recently used
    cf(mx.ones((5000,)), *args)  # evicts the least recently used: shape (1,)
    assert_same(cf(hot, *args), hot * 2)
    assert f.calls == CACHE_SIZE + 1


@pytest.mark.nuvec_only  # MLX keeps every trace
def test_cache_order_when_replays_of_arrays_mix_with_other_calls():
    """Replays of array-only calls skip the move to the cache's end when their key is there
    already; a call through the other path (a constant argument) moves its key there, so the next
    array-only replay must move its own key again."""
    from nuvec._compile import CACHE_SIZE

    f = counted(lambda x, *c: x * 2)
    cf = mx.compile(f)
    a = mx.ones((1000,))
    cf(a)
    for n in range(1, CACHE_SIZE):
        cf(mx.ones((n,)), 1.0)
    cf(a)  # the end now
    cf(mx.ones((1,)), 1.0)  # now the end
    cf(a)  # must be the end again
    for n in range(CACHE_SIZE - 1):  # evicts every other key: the last is (1,) with 1.0, not a
        cf(mx.ones((5000 + n,)))
    calls = f.calls
    assert_same(cf(a), a * 2)
    assert f.calls == calls


@pytest.mark.nuvec_only  # nuvec's calls may come from several threads
def test_calls_from_several_threads():
    import threading

    fn = lambda x, w: mx.tanh(x * w + 1) - mx.exp(-x) * w  # noqa: E731
    cf = mx.compile(fn)
    failures = []

    def work(seed):
        for i in range(20):
            x, w = rand((1000 + 7 * (i % 3), 64), seed=seed + i), rand((64,), seed=seed)
            if not np.array_equal(np.array(cf(x, w)), np.array(fn(x, w))):
                failures.append((seed, i))

    threads = [threading.Thread(target=work, args=(100 * t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.nuvec_only  # DESIGN.md's determinism promise; MLX has no set_num_threads
@pytest.mark.parametrize("fn", [layer_norm, softmax, sum_axis0, lambda x: mx.sum(mx.exp(x))])
def test_fused_results_do_not_depend_on_the_thread_count(fn):
    x, before = rand((600, 7000), seed=4), mx.get_num_threads()
    want = fn(x)
    try:
        for n in (1, 2, 3):
            mx.set_num_threads(n)
            assert_same(mx.compile(fn)(x), want)
    finally:
        mx.set_num_threads(before)


def test_calls_another_compiled_function():
    inner = counted(lambda x: mx.exp(x) * 2)
    cinner = mx.compile(inner)
    fn = lambda x, y: cinner(x) + cinner(y) * x  # noqa: E731
    cf = mx.compile(counted(fn))
    assert_same(cf(A, B), mx.exp(A) * 2 + mx.exp(B) * 2 * A)
    assert_same(cf(B, A), mx.exp(B) * 2 + mx.exp(A) * 2 * B)


def test_disable_and_enable_compile():
    f = counted(lambda x: mx.exp(x) + 1)
    cf = mx.compile(f)
    try:
        mx.disable_compile()
        for calls in (1, 2, 3):
            assert_same(cf(A), mx.exp(A) + 1)
            assert f.calls == calls
    finally:
        mx.enable_compile()
    for _ in range(2):
        assert_same(cf(A), mx.exp(A) + 1)
    assert f.calls == 4


SUBPROCESS = """
import {module} as mx
calls = []
f = mx.compile(lambda x: calls.append(1) or mx.exp(x))
for _ in range(3):
    f(mx.ones((3,)))
print(len(calls))
"""


@pytest.mark.parametrize("value,calls", [("1", 3), (None, 1)])
def test_environment_switch(value, calls):
    module, var = (
        ("mlx.core", "MLX_DISABLE_COMPILE") if IS_MLX else ("nuvec", "NUVEC_DISABLE_COMPILE")
    )
    env = {k: v for k, v in os.environ.items() if k != var}
    if value is not None:
        env[var] = value
    code = SUBPROCESS.format(module=module)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(calls)]


# Functions that read an array's value while being traced: (id, function)
READS_VALUE = [
    ("item", lambda x: x[0, 0].item()),
    ("tolist", lambda x: x.tolist()),
    ("numpy", lambda x: np.array(x)),
    ("print", lambda x: print(x) or x),
    ("bool", lambda x: x * 2 if (x.sum() > 0) else x),
    ("float", lambda x: x * float(x.sum())),
    ("eval", lambda x: mx.eval(x) or x),
    ("bool-mask", lambda x: x[x > 0]),
]


@pytest.mark.parametrize("name,fn", READS_VALUE, ids=[c[0] for c in READS_VALUE])
def test_reading_a_value_raises_at_trace_time(name, fn):
    with pytest.raises(ValueError) as info:
        mx.compile(fn)(A)
    if not IS_MLX:  # nuvec names the line that read the value (in the text or as OpError does)
        e, line = info.value, fn.__code__.co_firstlineno
        located = (os.path.basename(getattr(e, "filename", None) or ""), getattr(e, "lineno", None))
        assert f"{FILE}:{line}" in str(e) or located == (FILE, line), (str(e), located)


@pytest.mark.nuvec_only
def test_a_replayed_node_that_fails_names_the_callers_line():
    # A replay records its nodes at the line that called the compiled function (captured once).
    f = mx.compile(lambda x, i: mx.take(x, i) * 2)
    for index in ([0, 7], [9]):
        y = f(mx.arange(5).astype(mx.float32), mx.array(index))
        line = sys._getframe().f_lineno - 1
        with pytest.raises(mx.EvalIndexError) as info:
            mx.eval(y)
        e = info.value
        assert (os.path.basename(e.filename), e.lineno) == (FILE, line), (e.filename, e.lineno)
        assert f"{FILE}:{line}" in str(e)


def test_compiled_function_works_after_a_failed_trace():
    with pytest.raises(ValueError):
        mx.compile(lambda x: x.item())(A)
    assert_same(mx.compile(lambda x: x + 1)(A), A + 1)
    assert_same(A * 2, A + A)


NOT_CONSTANTS = [object(), {1, 2}, np.ones(3, np.float32), [A, {"k": object()}]]


@pytest.mark.parametrize("arg", NOT_CONSTANTS, ids=lambda a: type(a).__name__)
def test_arguments_that_are_not_trees_or_constants(arg):
    f = counted(lambda x, c: x)
    with pytest.raises(ValueError, match="object|set|ndarray"):
        mx.compile(f)(A, arg)
    assert f.calls == 0  # rejected before tracing
