"""compile of every element-wise op of the op table, alone and in a chain, and of random
expression trees (with last-axis reductions), traced once and replayed: compiled equals
uncompiled bit for bit on nuvec. Runs against MLX too (NUVEC_TEST_IMPL=mlx)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import IS_MLX, mx
from compile_helpers import assert_same, check_compiled, counted, rand
from helpers import seeded_rng, to_mx
from op_table import cases


def through(x):
    """x again, through two element-wise steps (a comparison and a select) that fuse with op."""
    return mx.where(x == x, x, x)


@pytest.mark.skipif(IS_MLX, reason="MLX's CPU compile runs a C compiler per trace: too slow")
@pytest.mark.parametrize("op,dt", cases())
def test_every_elementwise_op(op, dt):
    rng = seeded_rng("compile", op.test_id, dt)
    for shape in ((7, 13), (512, 300)):  # the second is over the size where work is fused
        xs = [
            to_mx(x, d) for x, d in zip(op.sample(rng, [shape] * op.arity, dt), op.slot_dtypes(dt))
        ]
        check_compiled(lambda *a: op.call(mx, *a), *xs)
        check_compiled(lambda *a: chained(op, a), *xs)


def chained(op, xs):
    out = op.call(mx, *(through(x) for x in xs))
    return tuple(through(o) for o in out) if op.n_out > 1 else through(out)


UNARY = {"exp": mx.exp, "sin": mx.sin, "tanh": mx.tanh, "neg": mx.negative, "abs": mx.abs}
BINARY = {"add": mx.add, "mul": mx.multiply, "sub": mx.subtract, "max": mx.maximum}
# Reductions (kept as a column or a row, so the result still broadcasts) and softmax
REDUCE = {
    "sum": lambda a: mx.sum(a, axis=-1, keepdims=True),
    "rmax": lambda a: mx.max(a, axis=-1, keepdims=True),
    "mean": lambda a: mx.mean(a, axis=-1, keepdims=True),
    "sum0": lambda a: mx.sum(a, axis=0, keepdims=True),
    "softmax": lambda a: mx.softmax(a, axis=-1),
}


def expressions(n_inputs):
    """Element-wise expression trees over inputs 0..n_inputs-1 and Python scalars, with
    last-axis reductions in them."""
    leaf = st.one_of(
        st.tuples(st.just("in"), st.integers(0, n_inputs - 1)),
        st.tuples(st.just("const"), st.sampled_from([0.5, 2.0, -1.0])),
    )
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(sorted(UNARY) + sorted(REDUCE)), kids),
            st.tuples(st.sampled_from(sorted(BINARY)), kids, kids),
            st.tuples(st.just("where"), kids, kids, kids),
        ),
        max_leaves=10,
    )


def evaluate(e, xs):
    op, *rest = e
    if op == "in":
        return xs[rest[0]]
    if op == "const":
        return rest[0]
    args = [evaluate(a, xs) for a in rest]
    if op == "where":
        return mx.where(mx.greater(args[0], args[1]), args[1], args[2])
    if op in REDUCE:  # a reduction of a constant or a 0-d array is left out
        return REDUCE[op](args[0]) if getattr(args[0], "ndim", 0) else args[0]
    return (UNARY.get(op) or BINARY[op])(*args)


@st.composite
def expression_cases(draw):
    n = draw(st.integers(1, 3))
    rows, cols = draw(st.sampled_from([1, 5, 200])), draw(st.sampled_from([1, 3, 17, 1024]))
    shapes = [(rows, cols)] + [
        draw(st.sampled_from([(rows, cols), (cols,), (rows, 1), ()])) for _ in range(n - 1)
    ]
    dtype = draw(st.sampled_from(["float32", "float16"]))
    return draw(expressions(n)), shapes, dtype, draw(st.integers(0, 2**16))


@given(expression_cases())
def test_random_elementwise_expressions(case):
    e, shapes, dtype, seed = case
    xs = [rand(s, seed=seed + i).astype(getattr(mx, dtype)) for i, s in enumerate(shapes)]

    def fn(*xs):
        return evaluate(e, xs) + xs[0]  # the first input fixes the result's shape and dtype

    check_compiled(fn, *xs)


@st.composite
def shapeless_cases(draw):
    """An expression, and for each of three calls the inputs' shapes: each input keeps its rank
    and form (full, row, column) while the sizes change, size 1 included."""
    n = draw(st.integers(1, 3))
    forms = ["full"] + [draw(st.sampled_from(["full", "row", "col"])) for _ in range(n - 1)]
    sizes = st.sampled_from([1, 2, 3, 17, 300])
    first_rows, calls = draw(sizes), []
    for _ in range(3):  # the rows kept or changed, so that the rows' length alone may change
        r, c = draw(st.sampled_from([first_rows, draw(sizes)])), draw(sizes)
        calls.append([{"full": (r, c), "row": (c,), "col": (r, 1)}[f] for f in forms])
    return draw(expressions(n)), calls, draw(st.integers(0, 2**16))


@pytest.mark.nuvec_only  # MLX 0.32 crashes (SIGSEGV) when a shapeless trace meets a size-1 axis
@given(shapeless_cases())
def test_random_shapeless_expressions(case):
    e, calls, seed = case

    def fn(*xs):
        return evaluate(e, xs) + xs[0]

    f = counted(fn)
    cf = mx.compile(f, shapeless=True)
    for shapes in calls:
        xs = [rand(s, seed=seed + i) for i, s in enumerate(shapes)]
        assert_same(cf(*xs), fn(*xs))
    assert f.calls == 1
