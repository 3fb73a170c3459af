"""What compile makes of a trace (csrc/transforms/compile*.cpp, backend/cpu/compiled.cpp): which
steps fuse, what the simplifier folds, and that every such rewrite keeps the uncompiled bits,
including the kernel's special paths (broadcast inputs, streamed outputs, conversions, values
stored for readers outside a group)."""

import math

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = [
    pytest.mark.nuvec_only,
    pytest.mark.skipif(IS_MLX, reason="nuvec's compile internals"),
]


def rand(shape, seed=0, dtype=np.float32):
    return mx.array(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def trace_of(cf):
    (trace,) = cf.cache.values()
    return trace.tape


def same_bits(cf, fn, *args):
    got, want = cf(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.array(got), np.array(want))


def layer_norm(x):
    m = mx.mean(x, axis=-1, keepdims=True)
    v = mx.var(x, axis=-1, keepdims=True)
    return (x - m) * mx.rsqrt(v + 1e-5)


def softmax(x):
    e = mx.exp(x - mx.max(x, axis=-1, keepdims=True))
    return e / mx.sum(e, axis=-1, keepdims=True)


# (function, input shape, fused groups, steps inside them, nodes per replay)
FUSED = [
    ("chain", lambda x: mx.exp(mx.sin(x)) * 2 + 1, (1 << 18,), 1, 4, 1),
    ("layer-norm", layer_norm, (33, 300), 1, 9, 1),  # the two means are one (CSE)
    ("softmax", softmax, (8, 1000), 1, 5, 1),
    ("gelu", lambda x: x * (1 + mx.erf(x / math.sqrt(2))) / 2, (5, 7), 1, 5, 1),
    ("bias-relu", lambda x: mx.maximum(x + mx.arange(7, dtype=mx.float32), 0), (4, 7), 1, 2, 1),
]


@pytest.mark.parametrize("name,fn,shape,groups,steps,nodes", FUSED, ids=[c[0] for c in FUSED])
def test_what_fuses(name, fn, shape, groups, steps, nodes):
    cf = mx.compile(fn)
    same_bits(cf, fn, rand(shape))
    stats = trace_of(cf).stats
    assert (stats["fused_groups"], stats["fused_steps"], stats["nodes"]) == (groups, steps, nodes)


def test_transposes_of_transposes_fold_away():
    fn = lambda x: (x.T * 2).T + 1  # noqa: E731
    cf = mx.compile(fn)
    same_bits(cf, fn, rand((6, 5)))
    assert [n[0] for n in trace_of(cf).nodes].count("transpose") == 2
    fn2 = lambda x: x.T.T * 3  # noqa: E731
    cf2 = mx.compile(fn2)
    same_bits(cf2, fn2, rand((6, 5)))
    assert "transpose" not in [n[0] for n in trace_of(cf2).nodes]


def test_unit_axis_transposes_become_one_reshape():
    # A decode step's heads: (1, 1, H, D) -> (1, H, 1, D) moves only axes of length 1.
    fn = lambda x: (
        mx.sin(x.reshape(1, 1, 4, 8).transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3).reshape(1, 32)
    )  # noqa: E731
    cf = mx.compile(fn)
    same_bits(cf, fn, rand((1, 32)))
    assert sorted(n[0] for n in trace_of(cf).nodes) == ["reshape", "reshape", "sin"]
    # Other transposes stay, and shapeless traces keep every transpose (a length may change).
    fn2 = lambda x: x.reshape(2, 4, 8).transpose(1, 0, 2) * 2  # noqa: E731
    cf2 = mx.compile(fn2)
    same_bits(cf2, fn2, rand((8, 8)))
    assert "transpose" in [n[0] for n in trace_of(cf2).nodes]
    cf3 = mx.compile(fn, shapeless=True)
    same_bits(cf3, fn, rand((1, 32)))
    assert [n[0] for n in trace_of(cf3).nodes].count("transpose") == 2


def test_equal_layout_steps_merge():
    # The same reshapes, slices, transposes and broadcasts of one value, made twice, are made once.
    def g(x):
        return x.reshape(4, 6)[1:3].T + mx.broadcast_to(x, (2, 24)).reshape(2, 4, 6)[0].T[:, :2]

    twice, once = mx.compile(lambda x: g(x) * g(x)), mx.compile(lambda x: (lambda y: y * y)(g(x)))
    x = rand((1, 24))
    same_bits(twice, lambda x: g(x) * g(x), x)
    once(x)
    kinds = sorted(n[0] for n in trace_of(twice).nodes)
    assert kinds == sorted(n[0] for n in trace_of(once).nodes)
    assert {"slice", "transpose", "reshape"} <= set(kinds)


def test_conversions_fuse():
    fn = lambda x: (x > 0).astype(mx.float32) * x + x.astype(mx.float16).astype(mx.float32)  # noqa: E731
    cf = mx.compile(fn)
    same_bits(cf, fn, rand((300, 200)))
    assert trace_of(cf).stats["nodes"] == 1


@pytest.mark.parametrize(
    "fn",
    [
        # a bool value (1 byte an element) dies at the select that makes a float32 one
        lambda x, y: mx.where(x, x, y),
        lambda x, y: mx.where(x > y, x * 2, y - 1) + (x < 0).astype(mx.float32),
        # d is read after the reductions that free other places; square's place is taken again
        lambda x, y: (
            (x - x.mean(-1, keepdims=True))
            * mx.rsqrt(mx.square(x - x.mean(-1, keepdims=True)).mean(-1, keepdims=True) + 1e-5)
            * y
        ),
        # two outputs, one of them also read later; float16 values between float32 ones
        lambda x, y: (
            mx.exp(x.astype(mx.float16)).astype(mx.float32) + y,
            mx.sin(x) * mx.cos(y) + mx.sin(x),
        ),
        lambda x, y: mx.softmax(x * y, axis=-1) + mx.logsumexp(x, axis=-1, keepdims=True),
    ],
)
@pytest.mark.parametrize("shape", [(3, 5), (70, 300), (1 << 15,)])
def test_scratch_places_taken_again_keep_the_bits(fn, shape):
    # Each tile's values share the scratch: a place is reused once its value is dead, and an
    # element-wise step writes over an operand it reads last (same form and item size only).
    same_bits_tree = lambda got, want: [  # noqa: E731
        np.testing.assert_array_equal(np.array(g), np.array(w))
        for g, w in zip(
            got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)
        )
    ]
    x, y = rand(shape), rand(shape, 1)
    same_bits_tree(mx.compile(fn)(x, y), fn(x, y))


def test_a_value_read_after_the_group_is_stored_by_it():
    # h is read by the group (maximum) and later by a product: one pass stores both.
    def fn(x, w, b):
        h = x @ w + b
        r = mx.maximum(h, 0)
        return r @ w.T + h.sum()

    cf = mx.compile(fn)
    args = rand((16, 8)), rand((8, 8), 1), rand((8,), 2)
    same_bits(cf, fn, *args)
    nodes = trace_of(cf).nodes
    assert ("compiled", [16, 8], ["add", "maximum"]) in [tuple(n) for n in nodes]


@pytest.mark.parametrize(
    "fn",
    [
        layer_norm,  # var: the square of x - mean, read by its sum alone
        lambda x: x * mx.rsqrt(mx.mean(mx.square(x), axis=-1, keepdims=True) + 1e-6),  # of an input
        lambda x: mx.std(x * 3 - 1, axis=-1),
        # the square also an output, or also read by another step: stored as before
        lambda x: (mx.square(x), mx.sum(mx.square(x), axis=-1)),
        lambda x: mx.sum(mx.square(x), axis=-1, keepdims=True) + mx.square(x),
        # float16: squared and summed in its own dtype, not folded
        lambda x: mx.sum(mx.square(x.astype(mx.float16)), axis=-1),
    ],
)
@pytest.mark.parametrize("shape", [(3, 5), (9, 1000), (2, 4097), (1 << 14,)])
def test_a_square_read_by_its_sum_alone_keeps_the_bits(fn, shape):
    # The float32 row sum squares its operand as it reads it (the square is never stored): the
    # same products and the same tree, tails past whole vectors included, NaN and inf too.
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 40
    x.reshape(-1)[[1, -2]] = [np.inf, np.nan] if x.size > 100 else [1e30, -1e-30]
    x = mx.array(x)
    got, want = mx.compile(fn)(x), fn(x)
    for g, w in zip(
        got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)
    ):
        np.testing.assert_array_equal(np.array(g), np.array(w))


@pytest.mark.parametrize("shape", [(4096, 4096), (1 << 23,)])
def test_large_outputs_stream_with_the_same_bits(shape):
    # 64 MiB and 32 MiB outputs: written around the caches.
    fn = lambda x: mx.exp(mx.sin(x)) * 2 + 1 if len(shape) == 1 else layer_norm(x)  # noqa: E731
    same_bits(mx.compile(fn), fn, rand(shape))


@pytest.mark.parametrize("shapeless", [False, True])
def test_broadcast_fills_read_by_reductions_and_element_wise_ops(shapeless):
    fns = [
        lambda x: (mx.ones_like(x) * 2).sum(-1, keepdims=True) + x,
        lambda x: mx.sum(mx.zeros_like(x) + 3.0, axis=-1),
        mx.grad(lambda x: mx.sum(mx.exp(x))),
    ]
    for fn in fns:
        cf = mx.compile(fn, shapeless=shapeless)
        for shape in ((64, 300), (3, 5)) if shapeless else ((64, 300),):
            same_bits(cf, fn, rand(shape))


def test_counts_and_fills_follow_shapes_under_vmap_and_grad():
    # Count (mean's divisor) and broadcast_like (fills, gradient seeds) under the transforms.
    def fn(x):
        return mx.mean(x * mx.ones_like(x), axis=-1) + mx.var(x, axis=0).sum()

    cf = mx.compile(fn, shapeless=True)
    x = rand((4, 6, 5))
    np.testing.assert_allclose(np.array(mx.vmap(cf)(x)), np.array(mx.vmap(fn)(x)), rtol=1e-6)
    g = mx.grad(lambda t: cf(t).sum())
    want = mx.grad(lambda t: fn(t).sum())
    for shape in ((6, 5), (2, 9)):
        t = rand(shape, 3)
        np.testing.assert_allclose(np.array(g(t)), np.array(want(t)), rtol=1e-6, atol=1e-7)


def test_constants_are_folded_and_equal_scalars_merged():
    w = rand((5,), 4)

    def fn(x):
        return x * (w * 2 + 1) + 2.0 + mx.zeros((5,)) + 2.0

    cf = mx.compile(fn)
    same_bits(cf, fn, rand((3, 5)))
    tape = trace_of(cf)
    shapes = sorted(tuple(c.shape) for c in tape.constants)
    assert shapes.count(()) == 1  # the two 2.0s are one value
    assert all(c.shape in ((), (5,)) for c in tape.constants)


def test_broadcasts_left_to_the_element_wise_steps_that_read_them():
    # The backward of a row mean spreads a column over the rows: the fused group reads the column.
    fn = mx.grad(lambda x: (layer_norm(x) * mx.arange(300, dtype=mx.float32)).sum())
    cf = mx.compile(fn)
    same_bits(cf, fn, rand((33, 300)))
    names = [n[0] for n in trace_of(cf).nodes]
    assert "broadcast_like" not in names and "broadcast_to" not in names
