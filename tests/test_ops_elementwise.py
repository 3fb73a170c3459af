"""Every element-wise op of the foundation against NumPy, driven by op_table.OPS: all accepted
dtypes, contiguous / transposed / stepped / reversed inputs, 0-d and empty arrays, broadcasting
(Hypothesis), mixed dtypes, the Python operators and the documented edge cases."""

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

from _impl import IS_MLX, mx
from helpers import (
    ALL,
    BOOL_INT,
    FLOATS,
    FMAX,
    INEXACT,
    INTS,
    NP,
    SINTS,
    assert_array_equal_np,
    np_values,
    promote,
    seeded_rng,
    to_mx,
    to_np,
)
from op_table import BINARY, OPS, OPS_BY_ID, REQUIRED_NAMES, UNARY, case_id, cases, dtypes_checked


# ----------------------------------------------------------------------------- machinery
def _check(op, dt, xs, mx_xs, what):
    """Run `op` on the framework inputs and compare with the NumPy oracle on `xs`."""
    out = op.call(mx, *mx_xs)
    outs = list(out) if op.n_out > 1 else [out]
    assert len(outs) == op.n_out, f"{op.test_id}: expected {op.n_out} outputs"
    refs = op.reference(xs, dt)
    rtol, atol = op.tolerance(dt)
    for k, (o, r) in enumerate(zip(outs, refs)):
        assert_array_equal_np(
            o,
            r,
            rtol,
            atol,
            dtype=op.result_dtype(dt),
            err_msg=f"{op.test_id}[{dt}] {what} output {k}",
        )


def _contig(x, name):
    return to_mx(x, name)


def _transposed(x, name):
    return to_mx(np.ascontiguousarray(x.T), name).T


def _stepped(x, name):
    return to_mx(np.repeat(x, 2, axis=0), name)[::2]


def _reversed_stepped(x, name):
    z = np.repeat(x[::-1, ::-1], 2, axis=1)
    assert np.array_equal(z[::-1, ::-2], x, equal_nan=x.dtype.kind in "fc")
    return to_mx(z, name)[::-1, ::-2]


LAYOUTS_2D = {
    "contiguous": _contig,
    "transposed": _transposed,
    "stepped": _stepped,
    "reversed_stepped": _reversed_stepped,
}


def _mx_inputs(op, dt, xs, layout):
    names = op.slot_dtypes(dt)
    return [layout(x, n) for x, n in zip(xs, names)]


# ----------------------------------------------------------------------------- the table
def test_table_covers_the_foundation():
    missing = [name for name in REQUIRED_NAMES if not hasattr(mx, name)]
    assert not missing, f"ops missing from the framework: {missing}"


@pytest.mark.parametrize("op,dt", cases())
def test_op_against_numpy(op, dt):
    rng = seeded_rng("elementwise", op.test_id, dt)
    # Contiguous, transposed, stepped and reversed-stepped 2-D views.
    for what, layout in LAYOUTS_2D.items():
        xs = op.sample(rng, [(3, 5)] * op.arity, dt)
        _check(op, dt, xs, _mx_inputs(op, dt, xs, layout), what)
    # Mixed layouts: the first input transposed, the others contiguous.
    if op.arity > 1:
        xs = op.sample(rng, [(4, 6)] * op.arity, dt)
        names = op.slot_dtypes(dt)
        mx_xs = [_transposed(xs[0], names[0])] + [to_mx(x, n) for x, n in zip(xs[1:], names[1:])]
        _check(op, dt, xs, mx_xs, "mixed layouts")
    # A long odd-length vector (vector loops and their tails) and a 0-d array.
    for shape in [(67,), ()]:
        xs = op.sample(rng, [shape] * op.arity, dt)
        _check(op, dt, xs, _mx_inputs(op, dt, xs, _contig), f"shape {shape}")


@pytest.mark.parametrize("op", OPS, ids=case_id)
def test_op_empty(op):
    rng = seeded_rng("empty", op.test_id)
    for dt in op.dtypes:
        for shapes in ([(0,)] * op.arity, [(2, 0)] * op.arity, [(0, 3)] * op.arity):
            xs = op.sample(rng, shapes, dt)
            _check(op, dt, xs, _mx_inputs(op, dt, xs, _contig), f"empty {shapes[0]}")
    if op.arity > 1:
        dt = op.dtypes[-1]
        shapes = [(0, 3)] + [(1, 3)] * (op.arity - 1)
        xs = op.sample(rng, shapes, dt)
        _check(op, dt, xs, _mx_inputs(op, dt, xs, _contig), "empty broadcast")


@pytest.mark.parametrize("op", OPS, ids=case_id)
@given(data=st.data())
def test_op_shapes_and_broadcasting(op, data):
    dt = data.draw(st.sampled_from(dtypes_checked(op, IS_MLX)), label="dtype")
    if op.arity == 1:
        shapes = [data.draw(array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))]
    else:
        bs = data.draw(
            mutually_broadcastable_shapes(
                num_shapes=op.arity, min_dims=0, max_dims=3, min_side=0, max_side=4
            ),
            label="shapes",
        )
        shapes = list(bs.input_shapes)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    xs = op.sample(rng, shapes, dt)
    _check(op, dt, xs, _mx_inputs(op, dt, xs, _contig), f"shapes {shapes}")


@pytest.mark.parametrize("op", BINARY, ids=case_id)
def test_operands_broadcast_along_the_innermost_axis(op):
    """Both operands are broadcast views whose innermost axis has stride 0: every run of the
    output reads one value of each (a run of equal results)."""
    rng = seeded_rng("inner-broadcast", op.test_id)
    for dt in dtypes_checked(op, IS_MLX):
        xs = op.sample(rng, [(3, 1, 1), (1, 5, 1)], dt)
        full = [np.broadcast_to(x, (3, 5, 2)) for x in xs]
        views = [mx.broadcast_to(a, (3, 5, 2)) for a in _mx_inputs(op, dt, xs, _contig)]
        _check(op, dt, full, views, "innermost-axis broadcast views")


# ----------------------------------------------------------------------------- mixed dtypes
MIXED_PAIRS = [
    ("int8", "uint8"),
    ("uint64", "int8"),
    ("float16", "bfloat16"),
    ("int32", "float16"),
    ("bool", "float32"),
    ("uint8", "int64"),
    ("float32", "float64"),
    ("complex64", "float32"),
    ("int16", "bfloat16"),
    ("uint32", "int32"),
    ("bool", "int8"),
    ("uint16", "float64"),
]
MIXED_OPS = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "equal",
    "less",
    "greater_equal",
    "logical_and",
    "arctan2",
    "power",
]


def _mixed_cases():
    out = []
    for name in MIXED_OPS:
        op = OPS_BY_ID[name]
        for a, b in MIXED_PAIRS:
            if all(d in op.dtypes for d in (a, b, promote(a, b))):
                out.append(pytest.param(name, a, b, id=f"{name}-{a}-{b}"))
    return out


@pytest.mark.parametrize("name,a,b", _mixed_cases())
def test_binary_mixed_dtypes(name, a, b):
    op = OPS_BY_ID[name]
    common = promote(a, b)
    rng = seeded_rng("mixed", name, a, b)
    x = op.domain(0).sample(rng, (4, 5), a)
    y = op.domain(1).sample(rng, (4, 5), b)
    out = op.call(mx, to_mx(x, a), to_mx(y, b))
    ref = op.reference([np_values(x, common), np_values(y, common)], common)[0]
    rtol, atol = op.tolerance(common)
    assert_array_equal_np(
        out, ref, rtol, atol, dtype=op.result_dtype(common), err_msg=f"{name}({a}, {b})"
    )


# ----------------------------------------------------------------------------- operators
BINOPS = [
    ("+", operator.add, "add"),
    ("-", operator.sub, "subtract"),
    ("*", operator.mul, "multiply"),
    ("/", operator.truediv, "divide"),
    ("//", operator.floordiv, "floor_divide"),
    ("%", operator.mod, "remainder"),
    ("**", operator.pow, "power"),
    ("==", operator.eq, "equal"),
    ("!=", operator.ne, "not_equal"),
    ("<", operator.lt, "less"),
    ("<=", operator.le, "less_equal"),
    (">", operator.gt, "greater"),
    (">=", operator.ge, "greater_equal"),
    ("&", operator.and_, "bitwise_and"),
    ("|", operator.or_, "bitwise_or"),
    ("^", operator.xor, "bitwise_xor"),
    ("<<", operator.lshift, "left_shift"),
    (">>", operator.rshift, "right_shift"),
]
OPERATOR_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "bfloat16", "complex64"]


def _binop_cases():
    out = []
    for sym, fn, name in BINOPS:
        for dt in OPERATOR_DTYPES:
            if dt in OPS_BY_ID[name].dtypes:
                out.append(pytest.param(sym, fn, name, dt, id=f"{sym}-{dt}"))
    return out


@pytest.mark.parametrize("sym,fn,name,dt", _binop_cases())
def test_binary_operator(sym, fn, name, dt):
    op = OPS_BY_ID[name]
    rng = seeded_rng("operator", sym, dt)
    xs = op.sample(rng, [(4, 5), (4, 5)], dt)
    a, b = to_mx(xs[0], dt), to_mx(xs[1], dt)
    got = fn(a, b)
    ref = op.reference(xs, dt)[0]
    rtol, atol = op.tolerance(dt)
    assert_array_equal_np(got, ref, rtol, atol, dtype=op.result_dtype(dt), err_msg=sym)
    # The operator and the named function agree.
    assert_array_equal_np(
        got,
        to_np(op.call(mx, a, b)),
        dtype=op.result_dtype(dt),
        rtol=rtol,
        atol=atol,
        err_msg=f"{sym} vs mx.{name}",
    )


def _scalar_cases():
    out = []
    for sym, fn, name in BINOPS:
        for dt in ["uint8", "int8", "int32", "float16", "float32", "bfloat16"]:
            if dt not in OPS_BY_ID[name].dtypes:
                continue
            for s in (2, 1.5):
                if (
                    isinstance(s, float)
                    and dt not in INEXACT
                    and name
                    in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")
                ):
                    continue
                out.append(pytest.param(sym, fn, name, dt, s, id=f"{sym}-{dt}-{s}"))
    return out


def _scalar_effective_dtype(dt, s):
    # Python scalars are weak: an int takes the array's dtype, a float makes ints float32.
    if isinstance(s, int) or dt in INEXACT:
        return dt
    return "float32"


@pytest.mark.parametrize("sym,fn,name,dt,s", _scalar_cases())
def test_operator_with_python_scalar(sym, fn, name, dt, s):
    """`x OP s` and the reflected `s OP x` with weak Python scalars."""
    op = OPS_BY_ID[name]
    eff = _scalar_effective_dtype(dt, s)
    rng = seeded_rng("scalar-operator", sym, dt, s)
    # x is drawn from the op's domain for the slot it occupies.
    x_right = op.domain(0).sample(rng, (3, 4), dt)
    x_left = op.domain(1).sample(rng, (3, 4), dt)
    sv = np_values(np.full((3, 4), s), eff)
    rtol, atol = op.tolerance(eff)
    res = op.result_dtype(eff)

    got = fn(to_mx(x_right, dt), s)
    ref = op.reference([np_values(x_right, eff), sv], eff)[0]
    assert_array_equal_np(got, ref, rtol, atol, dtype=res, err_msg=f"x {sym} {s!r}")

    reflected = name in (
        "add",
        "subtract",
        "multiply",
        "divide",
        "floor_divide",
        "remainder",
        "power",
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
    )
    if reflected:
        got = fn(s, to_mx(x_left, dt))
        ref = op.reference([sv, np_values(x_left, eff)], eff)[0]
        assert_array_equal_np(got, ref, rtol, atol, dtype=res, err_msg=f"{s!r} {sym} x")


@pytest.mark.parametrize("dt", ["uint8", "int32", "float32", "float16", "complex64"])
def test_reflected_examples(dt):
    v = np.array([1, 2, 3]).astype(NP[dt])
    x = to_mx(v, dt)
    with np.errstate(all="ignore"):
        assert_array_equal_np(1 - x, (np.array(1, NP[dt]) - v).astype(NP[dt]), dtype=dt)
        assert_array_equal_np(2**x, (np.array(2, NP[dt]) ** v).astype(NP[dt]), dtype=dt)
        assert_array_equal_np(
            10 // x if dt != "complex64" else 10 * x,
            (np.array(10, NP[dt]) // v if dt != "complex64" else 10 * v),
            dtype=dt,
        )
    if dt == "uint8":
        assert_array_equal_np(1 - x, np.array([0, 255, 254], np.uint8))


@pytest.mark.parametrize("dt", ALL)
def test_unary_operators(dt):
    rng = seeded_rng("unary-operators", dt)
    xs = OPS_BY_ID["abs"].sample(rng, [(3, 4)], dt)
    x = to_mx(xs[0], dt)
    checks = [("abs", abs)]
    if dt != "bool":
        checks.append(("negative", operator.neg))
    if dt in BOOL_INT:
        checks.append(("bitwise_invert", operator.invert))
    for name, fn in checks:
        op = OPS_BY_ID[name]
        ref = op.reference(xs, dt)[0]
        rtol, atol = op.tolerance(dt)
        assert_array_equal_np(
            fn(x), ref, rtol, atol, dtype=op.result_dtype(dt), err_msg=f"{name} operator"
        )


def test_bool_invert_is_logical_not():
    x = mx.array([True, False, True])
    assert_array_equal_np(~x, np.array([False, True, False]))


INPLACE = [
    ("+=", operator.iadd, "add", "int32", 3),
    ("-=", operator.isub, "subtract", "int32", 3),
    ("*=", operator.imul, "multiply", "int32", 3),
    ("//=", operator.ifloordiv, "floor_divide", "int32", 4),
    ("%=", operator.imod, "remainder", "int32", 4),
    ("**=", operator.ipow, "power", "int32", 2),
    ("&=", operator.iand, "bitwise_and", "int32", 6),
    ("|=", operator.ior, "bitwise_or", "int32", 6),
    ("^=", operator.ixor, "bitwise_xor", "int32", 6),
    ("<<=", operator.ilshift, "left_shift", "int32", 2),
    (">>=", operator.irshift, "right_shift", "int32", 2),
    ("/=", operator.itruediv, "divide", "float32", 4.0),
    ("+=", operator.iadd, "add", "float16", 1.5),
]


def _inplace_start(dt):
    return (
        np.array([[-7, 0, 5], [9, -3, 12]]).astype(NP[dt])
        if dt != "float16"
        else np.array([[-7.5, 0, 5], [9, -3, 12.25]], np.float16)
    )


@pytest.mark.parametrize("sym,fn,name,dt,s", INPLACE, ids=[f"{c[0]}-{c[3]}" for c in INPLACE])
def test_inplace_operator_value(sym, fn, name, dt, s):
    start = _inplace_start(dt)
    x = to_mx(start, dt)
    x = fn(x, s)
    op = OPS_BY_ID[name]
    ref = op.reference([start, np.full(start.shape, s).astype(NP[dt])], dt)[0]
    assert_array_equal_np(x, ref, *op.tolerance(dt), dtype=dt, err_msg=sym)
    # Array right-hand sides too.
    x = to_mx(start, dt)
    x = fn(x, to_mx(np.full((3,), s).astype(NP[dt]), dt))
    assert_array_equal_np(x, ref, *op.tolerance(dt), dtype=dt, err_msg=f"{sym} array")


@pytest.mark.parametrize("sym,fn,name,dt,s", INPLACE, ids=[f"{c[0]}-{c[3]}" for c in INPLACE])
def test_inplace_operator_updates_the_object(sym, fn, name, dt, s):
    """`x += 1` keeps the object: other names for it see the new value; views keep the old (MLX)."""
    start = _inplace_start(dt)
    x = to_mx(start, dt)
    alias, ident = x, id(x)
    view = x[0]
    x = fn(x, s)
    assert x is alias and id(x) == ident
    op = OPS_BY_ID[name]
    ref = op.reference([start, np.full(start.shape, s).astype(NP[dt])], dt)[0]
    assert_array_equal_np(alias, ref, *op.tolerance(dt), dtype=dt, err_msg=f"alias after {sym}")
    assert_array_equal_np(view, start[0], dtype=dt, err_msg=f"view after {sym}")


def test_augmented_assignment_statements():
    x = mx.array([1, 2, 3])
    x += 1
    assert_array_equal_np(x, np.array([2, 3, 4], np.int32))
    x *= 2
    x -= mx.array([1, 1, 1])
    assert_array_equal_np(x, np.array([3, 5, 7], np.int32))
    f = mx.array([1.0, 2.0], mx.float16)
    f /= 4
    f **= 2
    assert_array_equal_np(f, np.array([0.0625, 0.25], np.float16))


def test_augmented_assignment_updates_other_references():
    x = mx.array([1, 2, 3])
    y = x
    x += 1
    assert_array_equal_np(y, np.array([2, 3, 4], np.int32))
    f = mx.array([1.0, 2.0])
    g = f
    f /= 2
    assert_array_equal_np(g, np.array([0.5, 1.0], np.float32))


# ----------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("dt", SINTS)
def test_integer_floor_divide_and_remainder_floor(dt):
    a = np.array([-7, 7, -7, 7, -1, -9, 0, 9, 100, -100], NP[dt])
    b = np.array([2, 2, -2, -2, 3, 4, 5, -4, 7, 7], NP[dt])
    x, y = to_mx(a, dt), to_mx(b, dt)
    assert_array_equal_np(mx.floor_divide(x, y), np.floor_divide(a, b))
    assert_array_equal_np(x // y, np.floor_divide(a, b))
    assert_array_equal_np(mx.remainder(x, y), np.remainder(a, b))
    assert_array_equal_np(x % y, np.remainder(a, b))
    out = mx.divmod(x, y)
    assert type(out) is list  # MLX returns a list, not a tuple
    q, r = out
    assert_array_equal_np(q, np.floor_divide(a, b))
    assert_array_equal_np(r, np.remainder(a, b))
    # Scalar divisors take the same path.
    assert_array_equal_np(x // 3, np.floor_divide(a, np.array(3, NP[dt])))
    assert_array_equal_np(x % -3, np.remainder(a, np.array(-3, NP[dt])))


@pytest.mark.parametrize("dt", FLOATS)
def test_float_floor_divide_and_remainder_signs(dt):
    a = np_values([-7.5, 7.5, -7.5, 7.5, -1.0, 5.0, -0.5], dt)
    b = np_values([2.0, 2.0, -2.0, -2.0, 4.0, -0.25, 0.5], dt)
    x, y = to_mx(a, dt), to_mx(b, dt)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_array_equal_np(x // y, np.floor_divide(a64, b64), dtype=dt)
    assert_array_equal_np(x % y, np.remainder(a64, b64), dtype=dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_sign_of_zeros_and_nan_is_positive_zero(dt):
    # MLX's sign is +0 for -0.0, +0.0 and NaN (NumPy's keeps NaN); the infinities give -1 and 1.
    x = mx.array([-0.0, 0.0, np.nan, -np.nan, -np.inf, np.inf, -2.5, 1e-3], dtype=getattr(mx, dt))
    out = np.array(mx.sign(x).astype(mx.float32))
    np.testing.assert_array_equal(out, [0, 0, 0, 0, -1, 1, -1, 1])
    assert not np.signbit(out[:4]).any()


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dt", BOOL_INT)
def test_integer_division_by_zero_is_zero(dt):
    # NEVER run against MLX: it dies of SIGFPE.
    a = np_values([5, 0, 1, 3], dt)
    b = np_values([0, 0, 0, 1], dt)
    x, y = to_mx(a, dt), to_mx(b, dt)
    with np.errstate(all="ignore"):
        q, r = np.floor_divide(a, b).astype(NP[dt]), np.remainder(a, b).astype(NP[dt])
    assert_array_equal_np(mx.floor_divide(x, y), q, dtype=dt)
    assert_array_equal_np(mx.remainder(x, y), r, dtype=dt)
    qq, rr = mx.divmod(x, y)
    assert_array_equal_np(qq, q, dtype=dt)
    assert_array_equal_np(rr, r, dtype=dt)
    if dt != "bool":
        assert_array_equal_np(x // 0, np.zeros(4, NP[dt]), dtype=dt)
        assert_array_equal_np(x % 0, np.zeros(4, NP[dt]), dtype=dt)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_integer_min_divided_by_minus_one_does_not_trap(dt):
    # INT_MIN / -1 overflows (x86 traps on it); NumPy wraps to INT_MIN and remainder 0.
    lo = np.iinfo(NP[dt]).min
    x, y = to_mx(np.array([lo, lo], NP[dt]), dt), to_mx(np.array([-1, 1], NP[dt]), dt)
    with np.errstate(all="ignore"):
        q = np.floor_divide(np.array([lo, lo], NP[dt]), np.array([-1, 1], NP[dt]))
    assert_array_equal_np(mx.floor_divide(x, y), q)
    assert_array_equal_np(mx.remainder(x, y), np.zeros(2, NP[dt]))


@pytest.mark.parametrize("dt", INTS)
def test_integer_divide_by_zero_is_float(dt):
    a, b = np_values([1, 0, 2], dt), np_values([0, 0, 1], dt)
    with np.errstate(all="ignore"):
        ref = a.astype(np.float64) / b.astype(np.float64)
    assert_array_equal_np(mx.divide(to_mx(a, dt), to_mx(b, dt)), ref, dtype="float32")


@pytest.mark.parametrize(
    "dt,a,b,ref",
    [
        ("int8", [100, -100, 127], [100, -100, 1], [-56, 56, -128]),
        ("uint8", [0, 1, 255], [1, 2, 1], None),
        ("int32", [2**31 - 1, -(2**31)], [1, -1], None),
        ("uint64", [0, 2**64 - 1], [1, 1], None),
    ],
)
def test_integer_add_subtract_wrap(dt, a, b, ref):
    an, bn = np.array(a, dtype=NP[dt]), np.array(b, dtype=NP[dt])
    x, y = to_mx(an, dt), to_mx(bn, dt)
    with np.errstate(all="ignore"):
        assert_array_equal_np(x + y, an + bn)
        assert_array_equal_np(x - y, an - bn)
        assert_array_equal_np(x * y, an * bn)
    if ref is not None:
        assert_array_equal_np(x + y, np.array(ref, NP[dt]))


@pytest.mark.parametrize("dt", FLOATS)
def test_round_half_to_even(dt):
    v = np_values([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.25], dt)
    assert_array_equal_np(mx.round(to_mx(v, dt)), np.round(v.astype(np.float64)), dtype=dt)


@pytest.mark.parametrize(
    "dt,decimals,step",
    [("float16", 2, 8), ("bfloat16", 2, 4), ("float16", 1, 8), ("bfloat16", 1, 2)],
)
def test_round_decimals_half_types(dt, decimals, step):
    # Values on a grid where value * 10**decimals is exact even in half precision; the result
    # may be one unit in the last place off the correctly rounded one (MLX scales by 1/10**d).
    v = np.arange(-40, 41) / step if dt == "float16" else np.arange(-8, 9) / step
    v = np_values(v, dt)
    rtol = {"float16": 1e-3, "bfloat16": 8e-3}[dt]
    assert_array_equal_np(
        mx.round(to_mx(v, dt), decimals),
        np.round(v.astype(np.float64), decimals),
        rtol=rtol,
        dtype=dt,
    )


def test_round_integers_with_negative_decimals():
    a = np.array([15, 25, 123, -15], np.int32)
    assert_array_equal_np(mx.round(mx.array(a), -1), np.round(a, -1))
    assert_array_equal_np(
        mx.round(mx.array([1234.5, 1250.0]), -2), np.array([1200.0, 1200.0], np.float32)
    )


def test_clip_with_none_bounds():
    x = mx.array([1, 5, 10])
    assert_array_equal_np(mx.clip(x, 2, None), np.array([2, 5, 10], np.int32))
    assert_array_equal_np(mx.clip(x, None, 7), np.array([1, 5, 7], np.int32))
    xf = mx.array([1.0, 5.0, 10.0])
    assert_array_equal_np(
        mx.clip(xf, mx.array([0.0, 6.0, 0.0]), 8.0), np.array([1.0, 6.0, 8.0], np.float32)
    )
    assert_array_equal_np(
        mx.clip(mx.array([1, 5, 10], mx.int8), 2, 7), np.array([2, 5, 7], np.int8)
    )


def test_where_promotion_and_scalars():
    cond = mx.array([True, False, True])
    assert_array_equal_np(mx.where(cond, 1, 2.5), np.array([1.0, 2.5, 1.0], np.float32))
    assert_array_equal_np(
        mx.where(cond, mx.array([1, 2, 3], mx.int8), 2.5), np.array([1.0, 2.5, 3.0], np.float32)
    )
    assert_array_equal_np(
        mx.where(cond, mx.array([1, 2, 3], mx.float16), 7), np.array([1, 7, 3], np.float16)
    )
    assert_array_equal_np(
        mx.where(cond, mx.array([1, 2, 3], mx.int8), mx.array([4, 5, 6], mx.uint8)),
        np.array([1, 5, 3], np.int16),
    )
    # A non-bool condition is truthiness.
    assert_array_equal_np(mx.where(mx.array([2, 0, -1]), 1, 0), np.array([1, 0, 1], np.int32))
    # Broadcasting of all three.
    got = mx.where(mx.array([[True], [False]]), mx.arange(3), mx.array(-1))
    assert_array_equal_np(got, np.array([[0, 1, 2], [-1, -1, -1]], np.int32))


def test_isclose_arguments():
    a = mx.array([1.0, 1.05, float("nan"), float("inf"), 0.0])
    b = mx.array([1.0, 1.0, float("nan"), float("inf"), 1e-9])
    an, bn = to_np(a), to_np(b)
    assert_array_equal_np(mx.isclose(a, b), np.isclose(an, bn))
    assert_array_equal_np(mx.isclose(a, b, rtol=0.1), np.isclose(an, bn, rtol=0.1))
    assert_array_equal_np(mx.isclose(a, b, atol=0.0, rtol=0.0), np.isclose(an, bn, 0.0, 0.0))
    assert_array_equal_np(mx.isclose(a, b, equal_nan=True), np.isclose(an, bn, equal_nan=True))


def test_allclose_and_array_equal():
    a = mx.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.array([[1.0, 2.0], [3.0, 4.5]])
    assert mx.allclose(a, a).item() is True
    assert mx.allclose(a, b).item() is False
    assert mx.allclose(a, b, atol=0.6).item() is True
    assert mx.allclose(a, b, rtol=0.2).item() is True
    assert mx.array_equal(a, a).item() is True
    assert mx.array_equal(a, b).item() is False
    # Values, not dtypes, matter; shapes must match exactly (no broadcasting).
    assert mx.array_equal(mx.array([1, 2]), mx.array([1.0, 2.0])).item() is True
    assert mx.array_equal(mx.ones((1, 2)), mx.ones((2,))).item() is False
    assert mx.array_equal(mx.ones((2,)), mx.ones((3,))).item() is False
    n = mx.array([1.0, float("nan")])
    assert mx.array_equal(n, n).item() is False
    assert mx.array_equal(n, n, equal_nan=True).item() is True
    assert mx.allclose(n, n).item() is False
    assert mx.allclose(n, n, equal_nan=True).item() is True
    # allclose broadcasts.
    assert mx.allclose(mx.ones((3, 2)), mx.array(1.0)).item() is True
    for r in (mx.allclose(a, b), mx.array_equal(a, b)):
        assert r.shape == () and r.dtype == mx.bool_


@pytest.mark.parametrize("dt", ["float16", "float32", "bfloat16"])
def test_nan_to_num_arguments(dt):
    v = np_values([1.0, np.nan, np.inf, -np.inf], dt)
    x = to_mx(v, dt)
    assert_array_equal_np(
        mx.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
        np.array([1.0, 1.0, 2.0, -3.0]),
        dtype=dt,
    )
    # Infinities default to the dtype's largest finite values.
    assert_array_equal_np(
        mx.nan_to_num(x, 5.0), np.array([1.0, 5.0, FMAX[dt], -FMAX[dt]]), rtol=1e-6, dtype=dt
    )


@pytest.mark.parametrize("dt", FLOATS)
def test_maximum_minimum_propagate_nan(dt):
    a = np_values([1.0, np.nan, 3.0, -np.inf, np.nan], dt)
    b = np_values([np.nan, 2.0, 1.0, 0.0, np.nan], dt)
    x, y = to_mx(a, dt), to_mx(b, dt)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_array_equal_np(mx.maximum(x, y), np.maximum(a64, b64), dtype=dt)
    assert_array_equal_np(mx.minimum(x, y), np.minimum(a64, b64), dtype=dt)


def test_complex_abs_sign_real_imag():
    z = np.array([3 + 4j, -1 - 1j, 0j, 1j, -2 + 0j], np.complex64)
    x = mx.array(z)
    assert_array_equal_np(mx.abs(x), np.abs(z.astype(np.complex128)), 1e-6, 1e-7, dtype="float32")
    assert_array_equal_np(
        mx.sign(x), np.sign(z.astype(np.complex128)), 1e-6, 1e-7, dtype="complex64"
    )
    assert_array_equal_np(mx.real(x), z.real, dtype="float32")
    assert_array_equal_np(mx.imag(x), z.imag, dtype="float32")
    assert_array_equal_np(mx.conjugate(x), np.conjugate(z), dtype="complex64")


@pytest.mark.parametrize("name", [op.test_id for op in UNARY])
def test_unary_ops_accept_stream_keyword(name):
    op = OPS_BY_ID[name]
    dt = "float32" if "float32" in op.dtypes else op.dtypes[0]
    xs = op.sample(seeded_rng("stream", name), [(2, 3)], dt)
    out = op.call(mx, to_mx(xs[0], dt), stream=mx.cpu)
    outs = list(out) if op.n_out > 1 else [out]
    for o, r in zip(outs, op.reference(xs, dt)):
        assert_array_equal_np(o, r, *op.tolerance(dt), dtype=op.result_dtype(dt))


@pytest.mark.parametrize("name", [op.test_id for op in BINARY])
def test_binary_ops_accept_stream_keyword(name):
    op = OPS_BY_ID[name]
    dt = "int32" if "int32" in op.dtypes else op.dtypes[0]
    xs = op.sample(seeded_rng("stream", name), [(2, 3), (2, 3)], dt)
    s = mx.default_stream(mx.cpu)
    out = op.call(mx, to_mx(xs[0], dt), to_mx(xs[1], dt), stream=s)
    outs = list(out) if op.n_out > 1 else [out]
    for o, r in zip(outs, op.reference(xs, dt)):
        assert_array_equal_np(o, r, *op.tolerance(dt), dtype=op.result_dtype(dt))


def test_ops_accept_python_scalars_and_lists():
    assert_array_equal_np(mx.add(1, 2), np.array(3, np.int32))
    assert_array_equal_np(mx.multiply(mx.array([1.0, 2.0]), 3), np.array([3.0, 6.0], np.float32))
    assert_array_equal_np(
        mx.maximum(2.5, mx.array([1, 5], mx.int16)), np.array([2.5, 5.0], np.float32)
    )
    assert_array_equal_np(mx.sqrt(4.0), np.array(2.0, np.float32))
    assert_array_equal_np(mx.exp(0), np.array(1.0, np.float32))


@pytest.mark.parametrize("shape", [(200, 300), (256, 512)])  # below and above the fusion size
def test_dead_operand_beside_a_transposed_one(shape):
    # The result may take the dead operand's buffer; the transposed operand must then not be
    # laid out there before the kernel reads the dead operand's values.
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape[::-1]).astype(np.float32)
    t = mx.array(y).T
    mx.eval(t)
    out = mx.array(x) * 0.5 - t
    mx.eval(out)
    np.testing.assert_array_equal(np.asarray(out), x * np.float32(0.5) - y.T)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "float64", "uint8"])
@pytest.mark.parametrize("shape", [(128, 128), (131, 257), (3, 100, 77), (300, 9)])
def test_transposed_operands_are_laid_out_exactly(dtype, shape):
    # Transposed operands of at least 2^14 elements are laid out row-major through register tiles
    # first (8 x 8 pairs on AVX2, 16 x 16 on AVX-512; element by element past whole tiles), then
    # read by the kernel: every element lands in its place, whatever the tails.
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    axes = (*range(len(shape) - 2), len(shape) - 1, len(shape) - 2)
    big = x.size >= 1 << 14
    t = mx.transpose(mx.array(x, dtype=getattr(mx, dtype)), axes)
    np.testing.assert_array_equal(np.asarray(mx.contiguous(t)), x.transpose(axes))
    np.testing.assert_array_equal(np.asarray(t + mx.zeros(t.shape, t.dtype)), x.transpose(axes))
    assert big or shape == (300, 9)  # (300, 9): below the size, the strided path


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("n", [1, 3, 17, 100])
def test_a_negative_zero_operand_keeps_its_sign(dtype, n):
    # A one-element operand is spread over the vector lanes; -0.0 must stay -0.0 there (as NumPy).
    x = np.linspace(-2, 2, n).astype(dtype)
    for got, want in (
        (mx.array(x) * -0.0, x * np.array(-0.0, dtype)),
        (
            mx.array(np.full(n, -0.0, dtype)) + mx.array(np.array([-0.0], dtype)),
            np.full(n, -0.0, dtype),
        ),
    ):
        np.testing.assert_array_equal(np.signbit(np.array(got)), np.signbit(want))


@pytest.mark.parametrize("dt", ["float32", "float16", "int8", "uint8", "int16", "int64", "bool_"])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
def test_where_over_runs_and_single_values(dt, n):
    # the select kernel's whole vectors (64 bytes of elements, a mask from the conditions' bytes)
    # and its tail, with either side a run or one value: NumPy's elements, bit for bit.
    rng = np.random.default_rng(n)
    npdt = np.dtype("bool" if dt == "bool_" else dt)
    c = rng.random(n) > 0.4
    a = (rng.standard_normal(n) * 50).astype(npdt)
    b = (rng.standard_normal(n) * 50).astype(npdt)
    a[0] = np.array(np.nan).astype(npdt) if npdt.kind == "f" else a[0]
    for x, y in (
        (a, b),
        (a[:1].reshape(()), b),
        (a, b[:1].reshape(())),
        (a[:1].reshape(()), b[:1].reshape(())),
    ):
        got = np.asarray(mx.where(mx.array(c), mx.array(x), mx.array(y)))
        want = np.where(c, x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
