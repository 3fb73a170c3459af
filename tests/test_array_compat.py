"""The array's Python protocols as MLX has them (issue 11): comparisons with non-arrays, pickling and
copying, format(), complex(), repr, in-place operators, __array_namespace__, and integer-like
objects (__index__) as shapes, axes and indices. Every test without the nuvec_only mark passes on
MLX too; the repr tests also compare nuvec's strings with MLX's side by side."""

import copy
import operator
import pickle

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import ALL, MX, NP, assert_array_equal_np, np_values, seeded_rng, to_mx, to_np


class Index:
    """An integer-like object that is not an int (as NumPy integers are)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


# ----------------------------------------------------------------------------- == != < with others
NON_OPERANDS = [
    pytest.param([1, 2, 3], id="list"),
    pytest.param((1, 2, 3), id="tuple"),
    pytest.param([1, 2], id="short-list"),
    pytest.param([[1, 2, 3]], id="nested-list"),
    pytest.param("abc", id="str"),
    pytest.param(object(), id="object"),
    pytest.param(mx.float32, id="dtype"),
]
ORDERINGS = [operator.lt, operator.le, operator.gt, operator.ge]
ARITHMETIC = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.pow,
    operator.mod,
]


@pytest.mark.parametrize("other", NON_OPERANDS)
def test_equality_with_a_non_operand_is_a_python_bool(other):
    x = mx.array([1, 2, 3])
    assert (x == other) is False
    assert (x != other) is True
    assert (other == x) is False
    assert (other != x) is True


@pytest.mark.parametrize("other", NON_OPERANDS)
@pytest.mark.parametrize("op", ORDERINGS + ARITHMETIC, ids=lambda f: f.__name__)
def test_ordering_and_arithmetic_with_a_non_operand_raise_value_error(other, op):
    x = mx.array([1, 2, 3])
    with pytest.raises(ValueError):
        op(x, other)
    if op is operator.mod and isinstance(other, str):
        return  # "abc" % x is string formatting
    with pytest.raises(ValueError):
        op(other, x)


def test_in_place_with_a_non_operand_raises_and_keeps_the_value():
    x = mx.array([1, 2, 3])
    with pytest.raises(ValueError):
        x += [1, 2, 3]
    assert x.tolist() == [1, 2, 3]


@pytest.mark.parametrize("op", [operator.eq, operator.lt, operator.add], ids=lambda f: f.__name__)
def test_none_is_rejected_with_type_error(op):
    with pytest.raises(TypeError):
        op(mx.array([1, 2, 3]), None)


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(np.array([1, 0, 3], np.int32), id="ndarray"),
        pytest.param(np.int32(2), id="np-int"),
        pytest.param(np.float32(2), id="np-float"),
        pytest.param(memoryview(np.array([1, 0, 3], np.int32)), id="memoryview"),
        pytest.param(2, id="int"),
        pytest.param(2.0, id="float"),
        pytest.param(True, id="bool"),
        pytest.param(2 + 0j, id="complex"),
    ],
)
def test_array_likes_compare_element_wise(other):
    x = mx.array([1, 2, 3])
    ref = np.array([1, 2, 3]) == np.asarray(other)
    eq, ne = x == other, x != other
    assert_array_equal_np(eq, ref)
    assert_array_equal_np(ne, ~ref)
    assert_array_equal_np(x < other, np.array([1, 2, 3]) < np.asarray(other))


def test_dlpack_producers_are_operands():
    torch = pytest.importorskip("torch")
    x = mx.array([1.0, 2.0, 3.0])
    assert_array_equal_np(x == torch.ones(3), np.array([True, False, False]))
    assert_array_equal_np(x + torch.ones(3), np.array([2, 3, 4], np.float32))


def _iadd(x, other):
    x += other
    return x


@pytest.mark.parametrize(
    "fn, dtype, out_dtype, ref",
    [
        pytest.param(lambda x: x + np.array([3.5]), "int8", "int8", [4], id="int8+float64"),
        pytest.param(lambda x: x + np.array(1.0), "float16", "float16", [2.5], id="float16+0d"),
        pytest.param(
            lambda x: mx.add(x, np.array([1.0], np.float32)), "float16", "float16", [2.5], id="add"
        ),
        pytest.param(lambda x: mx.power(x, np.array([0.5])), "int32", "int32", [1], id="power"),
        pytest.param(
            lambda x: x + np.array([1j], np.complex64), "float32", "float32", [1.5], id="complex"
        ),
        pytest.param(lambda x: x == np.array([1.5]), "int8", "bool_", [True], id="compare"),
        pytest.param(
            lambda x: mx.where(True, x, np.array([2.0])), "float16", "float16", [1.5], id="where"
        ),
        pytest.param(lambda x: mx.clip(x, np.array([2.5]), None), "int8", "int8", [2], id="clip"),
        pytest.param(lambda x: _iadd(x, np.array([2.7])), "int8", "int8", [3], id="in-place"),
        pytest.param(lambda x: x + np.float32(2.5), "int32", "int32", [3], id="np-float32"),
        pytest.param(lambda x: x + np.int64(1000), "int8", "int8", [-23], id="np-int64-wraps"),
        # NumPy's float64 is a Python float: weak, so it promotes as 2.5 would.
        pytest.param(lambda x: x + np.float64(2.5), "int32", "float32", [3.5], id="np-float64"),
    ],
)
def test_numpy_operands_take_the_arrays_dtype(fn, dtype, out_dtype, ref):
    # As MLX: a NumPy array or scalar next to an array is converted to that array's dtype (cast,
    # where a Python scalar would promote): 1.5 is 1 in the integer dtypes (so int8 1 == 1.5).
    out = fn(mx.array([1.5]).astype(getattr(mx, dtype)))
    assert out.dtype == getattr(mx, out_dtype)
    assert out.tolist() == ref


@pytest.mark.nuvec_only
def test_op_functions_still_accept_lists():
    # nuvec's functions take anything array() takes; MLX's reject lists.
    assert mx.add(mx.array([1, 2]), [3, 4]).tolist() == [4, 6]
    assert mx.equal(mx.array([1, 2]), [1, 0]).tolist() == [True, False]


# ----------------------------------------------------------------------------- pickle and copies
def _sample(dt):
    a = np.array([[0, 1, 2], [3, 4, 5]]) % (2 if dt == "bool" else 100)
    if dt in ("float16", "float32", "float64", "bfloat16"):
        a = a * 1.25 - 2.5
    if dt == "complex64":
        a = a + 1j * a[::-1]
    return np_values(a, dt)


PICKLE_DTYPES = [
    pytest.param(dt, marks=pytest.mark.nuvec_only, id=dt)
    if dt == "float64"
    else pytest.param(dt, id=dt)
    for dt in ALL
]  # MLX's pickle turns float64 into float32


@pytest.mark.parametrize("dt", PICKLE_DTYPES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(dt, protocol):
    a = _sample(dt)
    x = to_mx(a, dt)
    for src, ref in (
        (x, a),
        (x[:, ::2], a[:, ::2]),
        (x.T, a.T),
        (x[1, 2], a[1, 2]),
        (x[:0], a[:0]),
    ):
        y = pickle.loads(pickle.dumps(src, protocol=protocol))
        assert type(y) is type(x)
        assert_array_equal_np(y, ref, dtype=dt)


def test_pickle_inside_containers():
    tree = {"w": mx.array([1.5, 2.5]), "b": [mx.array(3, mx.int64), mx.zeros((2, 0))]}
    back = pickle.loads(pickle.dumps(tree))
    assert_array_equal_np(back["w"], np.array([1.5, 2.5], np.float32))
    assert_array_equal_np(back["b"][0], np.array(3, np.int64))
    assert back["b"][1].shape == (2, 0)


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_copies(dt, how):
    a = _sample(dt)
    x = to_mx(a, dt)
    y = how(x)
    assert y is not x
    assert_array_equal_np(y, a, dtype=dt)
    x[0] = x[1]  # the copy is a separate object
    assert_array_equal_np(y, a, dtype=dt)


def test_deepcopy_of_a_tree_and_a_lazy_array():
    x = mx.arange(6).reshape(2, 3) * 2
    tree = copy.deepcopy({"a": [x, x[0]]})
    assert tree["a"][0].tolist() == [[0, 2, 4], [6, 8, 10]]
    assert tree["a"][1].tolist() == [0, 2, 4]


# ----------------------------------------------------------------------------- format, complex, item
@pytest.mark.parametrize(
    "make,spec,text",
    [
        (lambda: mx.array(3.14159), ".2f", "3.14"),
        (lambda: mx.array(3.14159), "", "3.141590118408203"),
        (lambda: mx.array(0.1, mx.float16), ".10f", "0.0999755859"),
        (lambda: mx.array(3.5, mx.bfloat16), ".2f", "3.50"),
        (lambda: mx.array(255), "x", "ff"),
        (lambda: mx.array(3, mx.uint8), "08b", "00000011"),
        (lambda: mx.array(7, mx.uint64), ">5", "    7"),
        (lambda: mx.array(12345.678), ",.1f", "12,345.7"),
        (lambda: mx.array(0.25), ".1%", "25.0%"),
        (lambda: mx.array(True), "", "True"),
        (lambda: mx.array(True), "d", "1"),
        (lambda: mx.array(1 + 2j), ".1f", "1.0+2.0j"),
        (lambda: mx.array(1 + 2j), "", "(1+2j)"),
        (lambda: mx.array([1.0, 2.0]), "", "array([1, 2], dtype=float32)"),
        (lambda: mx.zeros((0,)), "", "array([], dtype=float32)"),
    ],
)
def test_format(make, spec, text):
    x = make()
    assert format(x, spec) == text
    assert f"{x:{spec}}" == text


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.array([3.14159]),
        lambda: mx.array([[2]]),
        lambda: mx.array([1.0, 2.0]),
        lambda: mx.zeros((0,)),
    ],
)
def test_format_spec_of_an_array_with_axes_raises_type_error(make):
    with pytest.raises(TypeError):
        format(make(), ".2f")


@pytest.mark.nuvec_only
def test_format_spec_invalid_for_the_scalar_raises_value_error():
    # Python's own error for format(3, "s"); MLX 0.32 crashes the interpreter here.
    with pytest.raises(ValueError):
        format(mx.array(3), "s")


@pytest.mark.parametrize(
    "make,value",
    [
        (lambda: mx.array(1 + 2j), 1 + 2j),
        (lambda: mx.array([1 - 2j]), 1 - 2j),
        (lambda: mx.array([[0.5j]]), 0.5j),
        (lambda: mx.array(2.5), 2.5 + 0j),
        (lambda: mx.array(2.5, mx.bfloat16), 2.5 + 0j),
        (lambda: mx.array(-3), -3 + 0j),
        (lambda: mx.array(True), 1 + 0j),
    ],
)
def test_complex(make, value):
    got = complex(make())
    assert type(got) is complex and got == value


def test_complex_item_and_scalar_conversions():
    z = mx.array(np.array([1 - 2j], np.complex64))
    assert type(z.item()) is complex and z.item() == 1 - 2j
    assert z[0].item() == 1 - 2j
    assert mx.array([[3 + 4j]]).item() == 3 + 4j
    with pytest.raises(TypeError):
        float(mx.array(1 + 2j))
    with pytest.raises(TypeError):
        int(mx.array(1 + 2j))
    for conv in (complex, float, int):
        with pytest.raises(ValueError):
            conv(mx.array([1, 2]))


# ----------------------------------------------------------------------------- __array_namespace__
def test_array_namespace():
    x = mx.array([1, 2])
    assert x.__array_namespace__() is mx
    assert x.__array_namespace__(api_version=None) is mx
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2023.12")


# ----------------------------------------------------------------------------- in-place operators
IN_PLACE = [
    ("+=", operator.iadd, np.add, "int32", 3),
    ("-=", operator.isub, np.subtract, "int32", 3),
    ("*=", operator.imul, np.multiply, "int32", 3),
    ("/=", operator.itruediv, np.divide, "float32", 4.0),
    ("//=", operator.ifloordiv, np.floor_divide, "int32", 4),
    ("%=", operator.imod, np.remainder, "int32", 4),
    ("**=", operator.ipow, np.power, "int32", 2),
    ("&=", operator.iand, np.bitwise_and, "int32", 6),
    ("|=", operator.ior, np.bitwise_or, "int32", 6),
    ("^=", operator.ixor, np.bitwise_xor, "int32", 6),
    ("<<=", operator.ilshift, np.left_shift, "int32", 2),
    (">>=", operator.irshift, np.right_shift, "int32", 2),
    ("+=", operator.iadd, np.add, "float16", 1.5),
    ("*=", operator.imul, np.multiply, "bfloat16", 2.0),
]


@pytest.mark.parametrize("sym,fn,ref,dt,s", IN_PLACE, ids=[f"{c[0]}-{c[3]}" for c in IN_PLACE])
def test_in_place_keeps_the_object_and_every_name_sees_it(sym, fn, ref, dt, s):
    a = np_values(np.array([[1, 4, 5], [9, 3, 12]]), dt)
    x = to_mx(a, dt)
    ident, alias, holder = id(x), x, [x]
    x = fn(x, s)
    expected = ref(a, np.asarray(s, NP[dt])).astype(NP[dt])
    assert id(x) == ident and x is alias and holder[0] is x
    for name in (x, alias, holder[0]):
        assert_array_equal_np(name, expected, dtype=dt, err_msg=sym)
    x = to_mx(a, dt)
    alias = x
    x = fn(x, to_mx(np.full((3,), s), dt))  # an array on the right too
    assert x is alias
    assert_array_equal_np(alias, expected, dtype=dt, err_msg=f"{sym} array")


def test_in_place_matmul_keeps_the_object():
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    alias = x
    x @= mx.array([[0.0, 1.0], [1.0, 0.0]])
    assert x is alias
    assert alias.tolist() == [[2.0, 1.0], [4.0, 3.0]]
    with pytest.raises(ValueError):
        x @= mx.ones((3,))
    assert alias.tolist() == [[2.0, 1.0], [4.0, 3.0]]


def test_in_place_keeps_views_and_earlier_results():
    x = mx.array([1.0, 2.0, 3.0])
    head, doubled = x[:2], x * 2
    x += 10
    assert x.tolist() == [11.0, 12.0, 13.0]
    assert head.tolist() == [1.0, 2.0]
    assert doubled.tolist() == [2.0, 4.0, 6.0]


def test_in_place_promotes_as_the_operator_does():
    x = mx.array([1, 2], mx.int32)
    x += 1.5
    assert x.dtype == mx.float32 and x.tolist() == [2.5, 3.5]
    y = mx.array([1, 2], mx.uint8)
    y += mx.array([1, 1], mx.int32)
    assert y.dtype == mx.int32


def test_in_place_true_division_of_integers_raises():
    x = mx.array([1, 2, 3])
    with pytest.raises(ValueError):
        x /= 2
    assert x.dtype == mx.int32 and x.tolist() == [1, 2, 3]


def test_in_place_subscript_update():
    x = mx.array([1, 2, 3, 4])
    alias = x
    x[1:3] += 10
    x[0] *= 5
    assert alias.tolist() == [5, 12, 13, 4]


def _f(a):
    b = a
    a += 1
    a *= a
    return (a * b).sum()


def _g(a):
    c = a * 2
    a *= 3
    return (a + c).sum()


def _h(a):
    a[0] = 5.0
    a += a
    return a.sum()


def _k(a):
    a -= mx.sin(a)
    a **= 2
    return a.sum()


@pytest.mark.parametrize(
    "fun,x,expected",
    [
        (_f, [1.0, 2.0, 3.0], [32.0, 108.0, 256.0]),  # b is a: sum((a + 1) ** 4)
        (_g, [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]),
        (_h, [1.0, 2.0, 3.0], [0.0, 2.0, 2.0]),
        (_k, [0.5, 1.5], None),
    ],
    ids=["alias", "earlier-result", "setitem", "chain"],
)
def test_in_place_under_grad(fun, x, expected):
    arg = mx.array(x)
    g = mx.grad(fun)(arg)
    if expected is None:  # d/dx (x - sin x)^2 = 2 (x - sin x)(1 - cos x)
        a = np.array(x, np.float64)
        expected = 2 * (a - np.sin(a)) * (1 - np.cos(a))
    np.testing.assert_allclose(to_np(g), expected, rtol=1e-6)
    assert arg.tolist() == x  # the caller's array is not the traced one


def test_in_place_under_vjp_jvp_and_vmap():
    def f(a):
        a *= a
        a += 1
        return a

    x = mx.array([1.0, 2.0, 3.0])
    out, (ct,) = mx.vjp(lambda a: f(a), [x], [mx.ones((3,))])
    assert out[0].tolist() == [2.0, 5.0, 10.0] and ct.tolist() == [2.0, 4.0, 6.0]
    _, (t,) = mx.jvp(f, [x], [mx.ones((3,))])
    assert t.tolist() == [2.0, 4.0, 6.0]
    assert mx.vmap(f)(mx.array([[1.0, 2.0], [3.0, 4.0]])).tolist() == [[2.0, 5.0], [10.0, 17.0]]
    assert x.tolist() == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- __index__
X = np.arange(24).reshape(2, 3, 4)


def _set(x, index, value):
    x[index] = value
    return x


INDEX_LIKE = [
    ("zeros", lambda: mx.zeros((np.int64(3), Index(2))), np.zeros((3, 2), np.float32)),
    ("ones", lambda: mx.ones([np.int32(2)]), np.ones((2,), np.float32)),
    ("full", lambda: mx.full((Index(2),), 1.0), np.ones((2,), np.float32)),
    ("zeros-bool", lambda: mx.zeros((True,)), np.zeros((1,), np.float32)),
    ("reshape-method", lambda: mx.array(X).reshape((Index(6), 4)), X.reshape(6, 4)),
    ("reshape", lambda: mx.reshape(mx.array(X), (Index(6), np.int8(4))), X.reshape(6, 4)),
    (
        "broadcast_to",
        lambda: mx.broadcast_to(mx.array(1), (Index(2), 3)),
        np.ones((2, 3), np.int32),
    ),
    ("sum-np", lambda: mx.array(X).sum(axis=np.int64(1)), X.sum(1)),
    ("sum-index", lambda: mx.array(X).sum(axis=Index(1)), X.sum(1)),
    ("sum-tuple", lambda: mx.sum(mx.array(X), axis=(Index(0), np.int64(2))), X.sum((0, 2))),
    ("sum-bool", lambda: mx.array(X).sum(axis=True), X.sum(1)),
    ("getitem-np", lambda: mx.array(X)[np.int64(1)], X[1]),
    ("getitem-index", lambda: mx.array(X)[Index(1)], X[1]),
    ("getitem-tuple", lambda: mx.array(X)[Index(1), np.int32(2), Index(3)], X[1, 2, 3]),
    ("getitem-uint8", lambda: mx.array(X)[np.uint8(1)], X[1]),
    ("slice", lambda: mx.array(X)[np.int64(1) : Index(2)], X[1:2]),
    ("slice-step", lambda: mx.array(X)[:: Index(2)], X[::2]),
    ("setitem", lambda: _set(mx.array(X), (np.int64(1), Index(2)), -1), _set(X.copy(), (1, 2), -1)),
    ("transpose", lambda: mx.transpose(mx.array(X), (Index(2), 0, 1)), X.transpose(2, 0, 1)),
    (
        "transpose-list",
        lambda: mx.transpose(mx.array(X), [np.int64(2), 0, 1]),
        X.transpose(2, 0, 1),
    ),
    ("expand_dims", lambda: mx.expand_dims(mx.array(X), Index(0)), X[None]),
    ("squeeze", lambda: mx.squeeze(mx.zeros((1, 2)), Index(0)), np.zeros((2,), np.float32)),
    ("split", lambda: mx.split(mx.array(X), Index(2), axis=np.int64(2))[1], X[:, :, 2:]),
    ("eye", lambda: mx.eye(Index(3)), np.eye(3, dtype=np.float32)),
    ("argmax", lambda: mx.argmax(mx.array(X), axis=Index(1)), X.argmax(1).astype(np.uint32)),
    ("cumsum", lambda: mx.cumsum(mx.array(X), axis=Index(1)), X.cumsum(1)),
    (
        "concatenate",
        lambda: mx.concatenate([mx.array(X)] * 2, axis=Index(1)),
        np.concatenate([X] * 2, 1),
    ),
    ("stack", lambda: mx.stack([mx.array(X)] * 2, axis=np.int64(1)), np.stack([X] * 2, 1)),
    ("flatten", lambda: mx.flatten(mx.array(X), Index(1)), X.reshape(2, 12)),
    ("swapaxes", lambda: mx.swapaxes(mx.array(X), Index(0), Index(1)), X.swapaxes(0, 1)),
    ("moveaxis", lambda: mx.moveaxis(mx.array(X), Index(0), Index(2)), np.moveaxis(X, 0, 2)),
    ("repeat", lambda: mx.repeat(mx.array(X), Index(2), axis=Index(0)), X.repeat(2, 0)),
    ("tile", lambda: mx.tile(mx.array(X), (Index(2), 1, 1)), np.tile(X, (2, 1, 1))),
    ("sort", lambda: mx.sort(mx.array(X), axis=Index(1)), np.sort(X, 1)),
    ("pad", lambda: mx.pad(mx.array(X), Index(1)), np.pad(X, 1)),
    ("roll", lambda: mx.roll(mx.array(X), Index(1), axis=Index(0)), np.roll(X, 1, 0)),
    ("topk", lambda: mx.sort(mx.topk(mx.array(X), Index(2)), axis=-1), np.sort(X, -1)[..., -2:]),
    ("linspace", lambda: mx.linspace(0, 1, Index(5)), np.linspace(0, 1, 5, dtype=np.float32)),
    ("tri", lambda: mx.tri(Index(3)), np.tri(3, dtype=np.float32)),
]


@pytest.mark.parametrize("name,make,ref", INDEX_LIKE, ids=[c[0] for c in INDEX_LIKE])
def test_integer_like_objects(name, make, ref):
    assert_array_equal_np(make(), ref)


def test_random_shapes_accept_integer_like_objects():
    assert mx.random.normal((Index(2), np.int64(3))).shape == (2, 3)
    assert mx.random.uniform(shape=[np.int32(4)]).shape == (4,)


@pytest.mark.nuvec_only
def test_integer_like_objects_where_mlx_fails():
    # MLX 0.32 raises std::bad_cast (RuntimeError) for these.
    x = mx.array(X)
    assert mx.zeros(np.int64(3)).shape == (3,)
    assert mx.zeros(Index(3)).shape == (3,)
    assert x.reshape(np.int64(6), Index(4)).shape == (6, 4)
    assert x.transpose(Index(2), 0, np.int64(1)).shape == (4, 2, 3)


@pytest.mark.parametrize("index", [2**40, np.int64(2**40), -(2**40), Index(2**40)], ids=str)
def test_index_out_of_range_raises_value_error(index):
    with pytest.raises(ValueError):
        mx.array(X)[index]


@pytest.mark.parametrize("axis", [2**40, 2**64, -(2**64)], ids=str)
def test_axis_out_of_range_raises_type_error(axis):
    with pytest.raises(TypeError):
        mx.array(X).sum(axis=axis)


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.zeros(2**64),
        lambda: mx.zeros((2, 2**64)),
        lambda: mx.ones((Index(2**70),)),
        lambda: mx.array(X).reshape(2**64),
        lambda: mx.reshape(mx.array(X), (-(2**64), 1)),
        lambda: mx.broadcast_to(mx.array(1), (2**65,)),
    ],
)
def test_shape_beyond_64_bits_raises_overflow_error(call):
    # MLX raises OverflowError from 2**31 (its dims are 32-bit) and std::bad_cast beyond 64 bits.
    with pytest.raises(OverflowError):
        call()


@pytest.mark.nuvec_only
def test_shapes_are_64_bit():
    assert mx.ones((2**33, 0)).shape == (2**33, 0)
    assert mx.zeros((0, np.int64(2**40))).shape == (0, 2**40)


@pytest.mark.nuvec_only
@pytest.mark.parametrize("index", [2**64, -(2**64), Index(2**70)], ids=str)
def test_index_beyond_64_bits_raises_axis_error(index):
    with pytest.raises(mx.AxisError):
        mx.array(X)[index]


# ----------------------------------------------------------------------------- repr, as MLX prints
def _repr_inputs():
    rng = seeded_rng("repr")
    special = np.array(
        [
            0.1,
            1e-5,
            123456.0,
            1e10,
            -2.5,
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1.0,
            100.0,
            1e-10,
            3.14159265,
            1.2e7,
        ]
    )
    out = []
    for shape in [
        (),
        (1,),
        (5,),
        (6,),
        (7,),
        (3, 4),
        (2, 3, 4),
        (2, 2, 2, 2),
        (8, 2, 1),
        (7, 7, 7),
    ]:
        out.append(
            ("normal", shape, rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 8, shape))
        )
        out.append(("small", shape, rng.integers(-100, 100, shape)))
    for shape in [(0,), (0, 3), (2, 0), (2, 0, 3), (7, 0)]:
        out.append(("empty", shape, np.zeros(shape)))
    out += [
        ("special", special.shape, special),
        ("special-2d", (3, 5), special.reshape(3, 5)),
        ("long", (1001,), np.arange(1001.0)),
        ("wide", (30, 100), np.arange(3000.0).reshape(30, 100) / 7),
        ("scalar", (), np.array(3.5)),
        ("tiny", (), np.array(1e-7)),
        ("halves", (2,), np.array([0.5, 0.25])),
        ("big", (2,), np.array([1e20, 1.0])),
        ("negative-nan", (2,), np.array([np.copysign(np.nan, -1), np.nan])),
    ]
    return out


REPR_INPUTS = _repr_inputs()


def _repr_values(values, dt):
    if dt == "bool":
        return values > 0
    if dt in ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"):
        finite = np.nan_to_num(values, nan=7.0, posinf=11.0, neginf=-11.0)
        lo, hi = (0, 255) if dt.startswith("u") else (-128, 127)
        return np.clip(np.round(finite), lo, hi).astype(NP[dt])
    if dt == "complex64":
        if not values.ndim:
            return np.complex64(values - 2j)
        with np.errstate(invalid="ignore"):
            return (values + 1j * values[::-1]).astype(np.complex64)
    return values


@pytest.fixture(scope="module")
def mlx_ref():
    if IS_MLX:
        pytest.skip("compares nuvec with MLX")
    return pytest.importorskip("mlx.core")


def _make(lib, values, dt):
    dtype = getattr(lib, "bool_" if dt == "bool" else dt)
    if dt in ("float16", "bfloat16"):  # both round from float32 the same way
        return lib.array(values.astype(np.float32)).astype(dtype)
    if dt == "float32":
        return lib.array(values.astype(np.float32))
    return lib.array(values, dtype=dtype)


@pytest.mark.parametrize("dt", ALL)
@pytest.mark.parametrize(
    "name,shape,values", REPR_INPUTS, ids=[f"{c[0]}-{c[1]}" for c in REPR_INPUTS]
)
def test_repr_matches_mlx(mlx_ref, dt, name, shape, values):
    if name == "negative-nan" and dt == "bfloat16":
        pytest.skip("MLX's conversion to bfloat16 drops a NaN's sign (conversion, not printing)")
    v = _repr_values(np.asarray(values), dt)
    ours, theirs = _make(mx, v, dt), _make(mlx_ref, v, dt)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    if ours.ndim >= 2:  # non-contiguous views print the same
        assert repr(ours.T) == repr(theirs.T)
        assert repr(ours[..., ::2]) == repr(theirs[..., ::2])


@pytest.mark.parametrize(
    "make,text",
    [
        (lambda: mx.arange(7), "array([0, 1, 2, ..., 4, 5, 6], dtype=int32)"),
        (lambda: mx.arange(6), "array([0, 1, 2, 3, 4, 5], dtype=int32)"),
        (lambda: mx.zeros((2, 0)), "array([[],\n       []], dtype=float32)"),
        (lambda: mx.zeros((0, 3)), "array([], dtype=float32)"),
        (lambda: mx.array(-0.0), "array(-0, dtype=float32)"),
        (lambda: mx.array([1 - 1j]), "array([1-1j], dtype=complex64)"),
        (
            lambda: mx.ones((2, 2, 1), mx.int8),
            "array([[[1],\n        [1]],\n       [[1],\n        [1]]], dtype=int8)",
        ),
    ],
)
def test_repr_layout(make, text):
    assert repr(make()) == text


def test_repr_of_every_dtype_zero_d():
    for dt in ALL:
        x = mx.array(np.array(1).astype(NP[dt]), dtype=MX[dt])
        one = {"bool": "True", "complex64": "1+0j"}.get(dt, "1")
        assert repr(x) == f"array({one}, dtype={dt})"
