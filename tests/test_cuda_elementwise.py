"""Element-wise ops and copies on the GPU against the CPU backend (docs/cuda.md, "Element-wise ops
and copies"): every op of op_table over the dtypes it accepts, broadcast and strided inputs,
astype between every pair of dtypes, where, 0-d and empty arrays, donation chains, nan and inf,
the parameterised ops, integer corner cases, and the copying layout, creation and concatenate
kernels.

Bitwise equality where the GPU computes as the CPU does (integer, bool, comparisons, rounding,
floored division, min/max, the arithmetic of +-*/ in real floats); within the op table's
tolerances for the math functions (CUDA's and the C library's differ in the last bits) and for
complex results other than the textbook ones. The GPU tests skip without a CUDA device.
"""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import assert_same, needs_gpu
from helpers import ALL, COMPLEX, FLOATS, MX, seeded_rng, to_mx
from op_table import BINARY, TERNARY, UNARY, cases

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

# Ops whose GPU results are the CPU's bits for real dtypes (the rest call math functions).
EXACT = {
    "abs",
    "negative",
    "sign",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "floor",
    "ceil",
    "round",
    "round_decimals2",
    "trunc",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "isfinite",
    "logical_not",
    "bitwise_invert",
    "conjugate",
    "real",
    "imag",
    "nan_to_num",
    "stop_gradient",
    "positive",
    "degrees",
    "radians",
    "add",
    "subtract",
    "multiply",
    "divide",
    "floor_divide",
    "remainder",
    "divmod",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "isclose",
    "allclose",
    "array_equal",
    "where",
    "clip",
}
# ... and for complex64 too (the rest use libcu++'s complex functions or division).
EXACT_COMPLEX = EXACT - {"sign", "sqrt", "rsqrt", "reciprocal", "divide"}


def host(x):
    """A framework array as NumPy (bfloat16 through float32, which holds it exactly)."""
    if x.dtype == mx.bfloat16:
        x = x.astype(mx.float32, stream=mx.cpu)
    return np.array(x)


def run_on(device, fn, *args):
    with mx.stream(device):
        out = fn(*args)
    mx.eval(out)
    return [host(o) for o in out] if isinstance(out, (list, tuple)) else host(out)


def compare(fn, *args, rtol=0.0, atol=0.0):
    cpu, gpu = run_on(mx.cpu, fn, *args), run_on(mx.gpu, fn, *args)
    for c, g in zip(cpu, gpu) if isinstance(cpu, list) else [(cpu, gpu)]:
        assert_same(c, g, rtol, atol)


def tolerance(op, dt):
    exact = EXACT_COMPLEX if op.result_dtype(dt) in COMPLEX or dt in COMPLEX else EXACT
    return (0.0, 0.0) if op.test_id in exact else op.tolerance(dt)


def inputs(op, dt, shapes, layout=None):
    rng = seeded_rng("cuda", op.test_id, dt, shapes)
    xs = op.sample(rng, shapes, dt)
    names = op.slot_dtypes(dt)
    arrays = [to_mx(x, n) for x, n in zip(xs, names)]
    return [layout(a) for a in arrays] if layout else arrays


def check_op(op, dt, shapes, layout=None):
    xs = inputs(op, dt, shapes, layout)
    compare(lambda *a: op.call(mx, *a), *xs, rtol=tolerance(op, dt)[0], atol=tolerance(op, dt)[1])


# ----------------------------------------------------------------------------- the op table
@pytest.mark.parametrize("op,dt", cases(UNARY))
def test_unary_matches_the_cpu(op, dt):
    check_op(op, dt, [(7, 301)])  # not a multiple of the block or the vector width


@pytest.mark.parametrize("op,dt", cases(BINARY))
def test_binary_matches_the_cpu(op, dt):
    check_op(op, dt, [(5, 67), (5, 67)])


@pytest.mark.parametrize("op,dt", cases([op for op in BINARY if not op.reduces]))
def test_binary_broadcasts(op, dt):
    check_op(op, dt, [(3, 1, 67), (4, 1)])
    check_op(op, dt, [(1,), (129,)])  # a scalar operand


@pytest.mark.parametrize("op,dt", cases(TERNARY))
def test_ternary_matches_the_cpu(op, dt):
    shapes = [(4, 1, 33), (1, 5, 33), (33,)] if op.name == "where" else [(4, 33)] * op.arity
    check_op(op, dt, shapes[: op.arity])


LAYOUTS = {
    "transposed": lambda a: a.T if a.ndim == 2 else a,
    "stepped": lambda a: a[..., ::3] if a.ndim else a,
    "reversed": lambda a: a[::-1] if a.ndim else a,
    "offset": lambda a: a[..., 1:] if a.ndim else a,  # unaligned: not the vector kernel
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", ["exp", "negative", "isnan", "add", "maximum", "less", "power"])
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int32", "complex64"])
def test_strided_inputs(name, dt, layout):
    ops = {op.test_id: op for op in UNARY + BINARY}
    op = ops[name]
    if dt not in op.dtypes:
        pytest.skip(f"{name} takes no {dt}")
    check_op(op, dt, [(24, 40)] * op.arity, LAYOUTS[layout])


def test_more_axes_than_one_launch_indexes():
    # Reversing the axes of a 2x...x2 array leaves 10 axes no collapse can merge.
    x = mx.arange(2**10, dtype=mx.float32).reshape((2,) * 10)
    compare(lambda a: mx.transpose(a) * 3 + a, x)
    compare(lambda a: mx.transpose(a).astype(mx.int16), x)


def test_mixed_input_dtypes():
    a = mx.arange(-50, 50, dtype=mx.int32).reshape(10, 10)
    b = mx.linspace(-3, 3, 10).astype(mx.float16)
    u = mx.arange(10, dtype=mx.uint8)
    for fn in (mx.add, mx.multiply, mx.divide, mx.maximum, mx.less, mx.power, mx.floor_divide):
        rtol = 2e-3 if fn is mx.power else 0.0  # powf's last bits may round float16 either way
        compare(fn, a, b, rtol=rtol)
        compare(fn, u, a, rtol=rtol)
        compare(fn, b, mx.array(2.5, dtype=mx.bfloat16), rtol=rtol)


# ----------------------------------------------------------------------------- conversions
def conversion_values(src, dst):
    """Values of dtype src in range for dst (out-of-range float conversions are tested below)."""
    rng = seeded_rng("astype", src, dst)
    v = np.concatenate(
        [rng.uniform(-120, 120, 200), [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 127.5, 255.0]]
    )
    if src not in FLOATS and src not in COMPLEX:
        v = np.round(v)
    if src.startswith("uint") or dst in ("uint32", "uint64"):
        v = np.abs(v)
    return v


@pytest.mark.parametrize("dst", ALL)
@pytest.mark.parametrize("src", ALL)
def test_astype_between_every_pair(src, dst):
    v = conversion_values(src, dst)
    x = mx.array(v.astype(np.complex64) if src in COMPLEX else v).astype(MX[src], stream=mx.cpu)
    compare(lambda a: a.astype(MX[dst]), x)
    compare(lambda a: a.T.astype(MX[dst]), x.reshape(13, 16))


@pytest.mark.parametrize(
    "dst", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]
)
@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
def test_astype_out_of_range_floats_as_the_cpu(src, dst):
    v = np.array(
        [np.nan, np.inf, -np.inf, 1e10, -1e10, 3e9, -3e9, 300.7, -300.7, 7e4, -7e4, 2.0**31]
        + [2.0**63, 2.0**64, 1e19, -(2.0**63), -1.0, -7.5]
    )
    x = mx.array(np.tile(v, 11)).astype(MX[src], stream=mx.cpu)
    compare(lambda a: a.astype(MX[dst]), x)


# ----------------------------------------------------------------------------- corners
@pytest.mark.parametrize("dt", ["float32", "float16", "int64", "bool", "complex64"])
def test_0d_and_empty(dt):
    d = MX[dt]
    for shape in [(), (0,), (3, 0), (0, 4)]:
        x = mx.zeros(shape, dtype=d, stream=mx.cpu) + mx.array(1, dtype=d)
        compare(lambda a: [a + a, mx.abs(a), mx.where(a == a, a, a), a.astype(mx.float32)], x)
    compare(lambda a, b: a * b, mx.zeros((0, 3)), mx.ones((3,)))


def test_donation_chains():
    x = mx.linspace(-4, 4, 4099)
    mx.eval(x)

    def chain(a):
        b = a + 1  # a fresh output, donated onwards below
        return ((b * 2) - 3) / mx.array(7.0)

    compare(chain, x)
    # exp's bits are CUDA's (within its tolerance of the CPU's); its operand was donated
    compare(lambda a: mx.exp(-(a + 1)) * (a + 1), x, rtol=1e-6)
    for dt in (mx.float16, mx.bfloat16, mx.int32):
        y = x.astype(dt, stream=mx.cpu)
        mx.eval(y)
        compare(lambda a: (((a + 1) * 2) - 3).astype(mx.float32) + 1, y)


def test_nan_and_inf():
    v = mx.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-40, 3e38])
    for fn in (
        mx.exp,
        mx.log,
        mx.sqrt,
        mx.floor,
        mx.sign,
        mx.isnan,
        mx.isinf,
        mx.tanh,
        mx.reciprocal,
    ):
        compare(fn, v, rtol=2e-6)
    for fn in (
        mx.maximum,
        mx.minimum,
        mx.add,
        mx.multiply,
        mx.divide,
        mx.remainder,
        mx.floor_divide,
    ):
        compare(fn, v[:, None], v[None, :])
    compare(lambda a: mx.nan_to_num(a, nan=1.5, posinf=2.0), v)
    compare(lambda a: mx.nan_to_num(a.astype(mx.float16)), v)


def test_parameterised_ops():
    x = mx.array(np.random.default_rng(0).uniform(-1000, 1000, 257).astype(np.float32))
    for d in (-2, -1, 0, 1, 3):
        compare(lambda a: mx.round(a, d), x)
        compare(lambda a: mx.round(a.astype(mx.int32), d), x)
    y = x + mx.array(np.float32(1e-3))
    compare(lambda a, b: mx.isclose(a, b, rtol=1e-6, atol=1e-4), x, y)
    compare(
        lambda a, b: mx.isclose(a, b, equal_nan=True),
        mx.array([np.nan, 1.0]),
        mx.array([np.nan, 1.0]),
    )


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_integer_division_and_shifts(dt):
    info = np.iinfo(dt)
    wrap = (lambda v: v % (1 << info.bits)) if info.min == 0 else (lambda v: v)
    a = np.array([wrap(v) for v in (info.min, info.max, -7, 7, 0, 1, -1, 5)], dtype=dt)
    b = np.array([wrap(v) for v in (-1, 0, 2, -2, 0, 3, -3, 70)], dtype=dt)
    xa, xb = mx.array(a), mx.array(b)
    for fn in (mx.floor_divide, mx.remainder, mx.left_shift, mx.right_shift, mx.power, mx.multiply):
        compare(fn, xa, xb)
        compare(fn, xb, xa)


def test_large_and_vectorised():
    n = (1 << 20) + 3
    a = mx.random.normal((n,), key=mx.random.key(0))
    b = mx.random.normal((n,), key=mx.random.key(1))
    for dt in (mx.float32, mx.float16, mx.bfloat16):
        x, y = a.astype(dt, stream=mx.cpu), b.astype(dt, stream=mx.cpu)
        for fn in (mx.add, mx.subtract, mx.multiply, mx.divide, mx.maximum, mx.minimum):
            compare(fn, x, y)
            compare(fn, x, mx.array(0.5, dtype=dt))


# ----------------------------------------------------------------------------- copies and creation
@pytest.mark.parametrize(
    "dt", ["float32", "float16", "bfloat16", "float64", "int64", "int8", "uint8"]
)
def test_arange_matches_the_cpu(dt):
    compare(lambda: mx.arange(0, 1000, 3, dtype=MX[dt]))  # int8 wraps as the CPU's conversion does
    if dt.startswith("float") or dt == "bfloat16":
        compare(lambda: mx.arange(-1.5, 2.0, 0.1, dtype=MX[dt]))


def test_slice_update_writes_in_place_and_copies():
    def update(x):
        y = x * 1  # held by nothing else: the update writes into its buffer
        y[2:5, ::2] = mx.array(-1.0)
        y[0] = mx.arange(8, dtype=mx.float32)
        return y

    x = mx.arange(48, dtype=mx.float32).reshape(6, 8)
    compare(update, x)

    def kept(a):  # b shares a's buffer, which a still needs: the update writes into a copy
        b = mx.stop_gradient(a)
        b[1:3, 1:3] = mx.zeros((2, 2))
        return [b, a]

    compare(kept, x)


def test_copying_layout_kernels():
    x = mx.arange(120, dtype=mx.float32).reshape(4, 5, 6)
    compare(lambda a: mx.transpose(a, (2, 0, 1)).reshape(-1), x)  # a reshape that copies
    compare(lambda a: mx.contiguous(a[:, ::2].T), x)
    compare(lambda a: a[:, 1:4].view(mx.int16), x)
    compare(lambda a: mx.broadcast_to(a[:, :1], (4, 5, 6)) + 0, x)
    compare(lambda a: mx.full((3, 4), a[1, 2, 3]), x)
    compare(lambda a: mx.zeros_like(a, dtype=mx.bfloat16) + mx.ones_like(a), x)


def test_concatenate_copies_into_windows():
    a = mx.arange(24, dtype=mx.float32).reshape(4, 6)
    b = mx.arange(24, dtype=mx.int32).reshape(6, 4)
    compare(lambda x, y: mx.concatenate([x, y.T, x[:, ::2]], axis=1), a, b)
    compare(lambda x, y: mx.concatenate([x.astype(mx.float16), y.T[:0], x[::-1]], axis=0), a, b)
