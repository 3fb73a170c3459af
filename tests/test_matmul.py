"""Matrix products: matmul (every shape class, layout and float dtype) against NumPy in float64,
the contractions built on it, bad input, and the determinism promises (row independence,
thread-count independence), which are bit for bit."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import MX, np_values, seeded_rng, to_np

# Unit roundoff of each dtype's accumulation and of its stored result.
ACC_EPS = {
    "float32": 2**-24,
    "float64": 2**-53,
    "float16": 2**-24,
    "bfloat16": 2**-24,
    "complex64": 2**-24,
}
OUT_EPS = {
    "float32": 2**-24,
    "float64": 2**-53,
    "float16": 2**-11,
    "bfloat16": 2**-8,
    "complex64": 2**-24,
}
DTYPES = ("float32", "float64", "float16", "bfloat16", "complex64")
# MLX's CPU matmul lacks float64 and complex64.
NUVEC_DTYPES = ("float64", "complex64")


def dtype_param(d):
    return pytest.param(d, marks=pytest.mark.nuvec_only) if d in NUVEC_DTYPES else d


def operand(rng, shape, dtype):
    """Random values exactly representable in `dtype` (NumPy holds them in float32/64/complex)."""
    x = rng.standard_normal(shape)
    if dtype == "complex64":
        return (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return np_values(x, dtype)


def check(got, a, b, dtype, err=""):
    """got == a @ b within the dot-product error bound: (k * eps_acc + eps_out) * (|a| @ |b|)."""
    a64 = a.astype(np.complex128 if dtype == "complex64" else np.float64)
    b64 = b.astype(a64.dtype)
    ref = np.matmul(a64, b64)
    mag = np.matmul(np.abs(a64), np.abs(b64))
    k = a.shape[-1] if a.ndim else 1
    bound = (4 * k * ACC_EPS[dtype] + 2 * OUT_EPS[dtype]) * mag + 1e-300
    res = to_np(got)
    assert res.shape == ref.shape, f"{err}: shape {res.shape} != {ref.shape}"
    assert got.dtype == MX[dtype], f"{err}: dtype {got.dtype}"
    excess = np.abs(res.astype(ref.dtype) - ref) - bound
    assert np.all(excess <= 0), f"{err}: worst excess {excess.max()} (bound {bound.max()})"


SHAPES = [  # (M, K, N): square, skinny, vector-like, and sizes off every block size
    (64, 64, 64),
    (1, 300, 70),
    (2, 513, 129),
    (5, 40, 1000),
    (6, 17, 33),
    (7, 100, 50),
    (300, 700, 130),
    (37, 53, 41),
    (1, 1, 1),
    (200, 1, 3),
    (130, 9, 1),
    (1, 1000, 1),
    (15, 33, 31),
    (253, 257, 65),
]


@pytest.mark.parametrize("dtype", [dtype_param(d) for d in DTYPES])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_shapes(m, k, n, dtype):
    rng = seeded_rng("shapes", m, k, n, dtype)
    a, b = operand(rng, (m, k), dtype), operand(rng, (k, n), dtype)
    check(
        mx.matmul(mx.array(a, dtype=MX[dtype]), mx.array(b, dtype=MX[dtype])),
        a,
        b,
        dtype,
        f"{m}x{k}x{n}",
    )


@pytest.mark.parametrize("dtype", [dtype_param(d) for d in DTYPES])
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((5,), (5, 3)),
        ((4, 5), (5,)),
        ((5,), (5,)),
        ((2, 1, 4, 5), (3, 5, 6)),
        ((3, 4, 5), (5, 2)),
        ((4, 5), (2, 3, 5, 6)),
        ((5,), (3, 5, 2)),
        ((3, 4, 5), (5,)),
        ((1, 4, 5), (3, 5, 7)),
        ((2, 3, 1, 9), (9, 4)),
    ],
)
def test_matmul_vectors_and_batches(sa, sb, dtype):
    rng = seeded_rng("batch", sa, sb, dtype)
    a, b = operand(rng, sa, dtype), operand(rng, sb, dtype)
    check(
        mx.matmul(mx.array(a, dtype=MX[dtype]), mx.array(b, dtype=MX[dtype])),
        a,
        b,
        dtype,
        f"{sa} @ {sb}",
    )


def swap_last(x):
    return x.transpose(0, 2, 1) if isinstance(x, np.ndarray) else mx.transpose(x, (0, 2, 1))


def strided_cases():
    # Each case: a view of A (m x k) and of B (k x n) built from bigger arrays.
    return {
        "a_transposed": (lambda x: x.T, (40, 30), lambda y: y, (40, 50)),
        "b_transposed": (lambda x: x, (30, 40), lambda y: y.T, (50, 40)),
        "both_transposed": (lambda x: x.T, (300, 9), lambda y: y.T, (70, 300)),
        "stepped": (lambda x: x[::2, ::3], (60, 90), lambda y: y[1::3, ::2], (90, 100)),
        "reversed": (lambda x: x[::-1, ::-1], (17, 23), lambda y: y[::-1], (23, 19)),
        "skinny_b_transposed": (lambda x: x, (3, 500), lambda y: y.T, (70, 500)),
        "skinny_b_stepped": (lambda x: x[:, ::2], (2, 600), lambda y: y[::2, ::2], (600, 90)),
        "batch_transposed": (swap_last, (3, 20, 10), swap_last, (3, 15, 20)),
    }


@pytest.mark.parametrize("dtype", [dtype_param(d) for d in DTYPES])
@pytest.mark.parametrize("case", sorted(strided_cases()))
def test_matmul_views(case, dtype):
    fa, sa, fb, sb = strided_cases()[case]
    rng = seeded_rng("views", case, dtype)
    a, b = operand(rng, sa, dtype), operand(rng, sb, dtype)
    got = mx.matmul(fa(mx.array(a, dtype=MX[dtype])), fb(mx.array(b, dtype=MX[dtype])))
    check(got, fa(a), fb(b), dtype, case)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_matmul_broadcast_views(dtype):
    rng = seeded_rng("bcast", dtype)
    row, col = operand(rng, (1, 30), dtype), operand(rng, (40, 1), dtype)
    a = mx.broadcast_to(mx.array(row, dtype=MX[dtype]), (20, 30))  # every row the same (stride 0)
    b = mx.broadcast_to(mx.array(col[:30], dtype=MX[dtype]), (30, 40))  # every column the same
    check(
        mx.matmul(a, b), np.broadcast_to(row, (20, 30)), np.broadcast_to(col[:30], (30, 40)), dtype
    )


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((0, 5), (5, 3)),
        ((4, 0), (0, 3)),
        ((4, 5), (5, 0)),
        ((0, 4, 5), (5, 2)),
        ((0,), (0,)),
        ((3, 0), (0,)),
        ((2, 3, 0), (2, 0, 4)),
    ],
)
def test_matmul_empty(sa, sb):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)
    got = mx.matmul(mx.array(a), mx.array(b))
    check(got, a, b, "float32", f"{sa} @ {sb}")


@pytest.mark.parametrize(
    "da,db,out",
    [
        ("float16", "float32", "float32"),
        ("bfloat16", "float16", "float32"),
        ("bfloat16", "float32", "float32"),
        ("float16", "float16", "float16"),
    ],
)
def test_matmul_promotion(da, db, out):
    rng = seeded_rng("promote", da, db)
    a, b = operand(rng, (9, 20), da), operand(rng, (20, 7), db)
    got = mx.matmul(mx.array(a, dtype=MX[da]), mx.array(b, dtype=MX[db]))
    check(got, a, b, out)


def test_matmul_operator():
    rng = seeded_rng("operator")
    a, b = operand(rng, (4, 6), "float32"), operand(rng, (6, 3), "float32")
    check(mx.array(a) @ mx.array(b), a, b, "float32")


@pytest.mark.nuvec_only
def test_matmul_operator_with_lists():
    rng = seeded_rng("operator")
    a, b = operand(rng, (4, 6), "float32"), operand(rng, (6, 3), "float32")
    check(a.tolist() @ mx.array(b), a, b, "float32")  # __rmatmul__
    check(mx.array(a) @ b.tolist(), a, b, "float32")


# ---------------------------------------------------------------------------------------------
# Bad input: OpError at the call, naming the op.


def op_error(fn, op):
    with pytest.raises(ValueError) as info:
        fn()
    if not IS_MLX:
        assert isinstance(info.value, mx.OpError) and info.value.op_name == op, repr(info.value)


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (5, 6)),
        ((4,), (5,)),
        ((2, 3, 4), (2, 5, 6)),
        ((2, 3, 4), (3, 4, 5)),
        ((3,), (4, 2)),
    ],
)
def test_matmul_bad_shapes(sa, sb):
    op_error(lambda: mx.matmul(mx.zeros(sa), mx.zeros(sb)), "matmul")


def test_matmul_zero_d():
    op_error(lambda: mx.matmul(mx.array(2.0), mx.zeros((2, 2))), "matmul")
    op_error(lambda: mx.matmul(mx.zeros((2,)), mx.array(2.0)), "matmul")


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint16", "int64", "bool"])
def test_matmul_integer_dtypes(dtype):
    op_error(
        lambda: mx.matmul(mx.zeros((2, 2), dtype=MX[dtype]), mx.zeros((2, 2), dtype=MX[dtype])),
        "matmul",
    )


@pytest.mark.nuvec_only
def test_contraction_errors():
    x = mx.zeros((3, 4))
    op_error(lambda: mx.addmm(mx.zeros((5, 5)), x, mx.zeros((4, 2))), "addmm")
    op_error(lambda: mx.inner(x, mx.zeros((3, 3))), "inner")
    op_error(lambda: mx.tensordot(x, mx.zeros((3, 4)), axes=[[0], [1]]), "tensordot")
    op_error(lambda: mx.tensordot(x, x, axes=3), "tensordot")
    op_error(lambda: mx.einsum("i.j", x), "einsum")
    op_error(lambda: mx.einsum("...ij,...jk", mx.zeros((2, 3, 4)), mx.zeros((3, 4, 5))), "einsum")
    op_error(lambda: mx.einsum("...ijk", x), "einsum")
    op_error(lambda: mx.einsum("ij,jk->ik", x, mx.zeros((3, 2))), "einsum")
    op_error(lambda: mx.einsum("ij,jk->iz", x, mx.zeros((4, 2))), "einsum")
    op_error(lambda: mx.einsum("ij->i", x, x), "einsum")


# ---------------------------------------------------------------------------------------------
# Contractions built on matmul.


@pytest.mark.parametrize(
    "alpha,beta,cshape",
    [(1.0, 1.0, (5, 3)), (0.5, 2.0, (3,)), (2.0, 0.0, (1, 3)), (-1.0, 0.25, (5, 1))],
)
def test_addmm(alpha, beta, cshape):
    rng = seeded_rng("addmm", alpha, beta, cshape)
    a, b, c = (operand(rng, s, "float32") for s in ((5, 8), (8, 3), cshape))
    got = mx.addmm(mx.array(c), mx.array(a), mx.array(b), alpha=alpha, beta=beta)
    ref = alpha * (a.astype(np.float64) @ b) + beta * c
    np.testing.assert_allclose(to_np(got), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((5,), (5,)), ((3, 5), (5,)), ((2, 3, 5), (4, 5)), ((), (3, 2))])
def test_inner(sa, sb):
    rng = seeded_rng("inner", sa, sb)
    a, b = operand(rng, sa, "float32"), operand(rng, sb, "float32")
    np.testing.assert_allclose(
        to_np(mx.inner(mx.array(a), mx.array(b))),
        np.inner(a.astype(np.float64), b),
        rtol=1e-5,
        atol=1e-5,
    )


def test_outer():
    rng = seeded_rng("outer")
    a, b = operand(rng, (2, 3), "float32"), operand(rng, (4,), "float32")
    np.testing.assert_allclose(to_np(mx.outer(mx.array(a), mx.array(b))), np.outer(a, b), rtol=1e-6)


@pytest.mark.parametrize(
    "sa,sb,axes",
    [
        ((3, 4, 5), (4, 5, 6), 2),
        ((3, 4, 5), (5, 4, 2), [[1, 2], [1, 0]]),
        ((3, 4), (4, 2), 1),
        ((2, 3), (4,), 0),
        ((3, 4, 5), (3, 2), [[0], [0]]),
    ],
)
def test_tensordot(sa, sb, axes):
    rng = seeded_rng("tensordot", sa, sb, str(axes))
    a, b = operand(rng, sa, "float32"), operand(rng, sb, "float32")
    np.testing.assert_allclose(
        to_np(mx.tensordot(mx.array(a), mx.array(b), axes=axes)),
        np.tensordot(a.astype(np.float64), b, axes=axes),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "spec,shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("ij,jk", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("i,i->", [(6,), (6,)]),
        ("ij->ji", [(3, 4)]),
        ("ij->i", [(3, 4)]),
        ("ij->", [(3, 4)]),
        ("ij,j->i", [(3, 4), (4,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("ik,kj->ji", [(3, 4), (4, 2)]),
        ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
        ("ij,kl->", [(2, 3), (4, 5)]),
        ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
        ("ij,ij->ij", [(3, 4), (3, 4)]),
        ("i,i,i->i", [(5,), (5,), (5,)]),
        ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
        ("...ij,...jk->...ik", [(3, 4), (2, 4, 5)]),
        ("i...,i...->...", [(3, 2), (3, 1)]),
        ("...,...", [(2, 3), (3,)]),
        ("b...d,bd->b...", [(2, 3, 4, 5), (2, 5)]),
    ],
)
def test_einsum(spec, shapes):
    rng = seeded_rng("einsum", spec)
    xs = [operand(rng, s, "float32") for s in shapes]
    got = mx.einsum(spec, *[mx.array(x) for x in xs])
    ref = np.einsum(spec, *[x.astype(np.float64) for x in xs])
    np.testing.assert_allclose(to_np(got), ref, rtol=1e-5, atol=1e-5)


def test_einsum_sums_axes_under_an_ellipsis_missing_from_the_output():
    """MLX sums them (NumPy refuses)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(to_np(mx.einsum("...i->i", mx.array(x))), x.sum(0))


# ---------------------------------------------------------------------------------------------
# Determinism: row independence and thread-count independence, bit for bit.


def bits(x):
    """A framework array's bytes (bfloat16 through float32, which holds it exactly)."""
    return to_np(x).tobytes()


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["plain", "b_transposed", "batched"])
def test_row_independence(dtype, layout):
    """Rows of an m-row product equal the one-row products, m = 1 .. ROW_INDEPENDENT_ROWS: the
    few-row paths (the first rows: plain layout, and float32 b transposed, which reads W along k)
    and the blocked path (the rest, and every other transposed b) agree, whatever the row blocks
    and edge tiles."""
    rows = mx.ROW_INDEPENDENT_ROWS
    assert rows >= 64
    rng = seeded_rng("rows", dtype, layout)
    k = int(
        rng.integers(513, 1100) if layout == "plain" else rng.integers(1, 600)
    )  # plain: several k blocks
    n = int(rng.integers(1, 200))
    a = mx.array(operand(rng, (rows, k), dtype), dtype=MX[dtype])
    w = mx.array(
        operand(rng, (n, k) if layout == "b_transposed" else (k, n), dtype), dtype=MX[dtype]
    )
    b = w.T if layout == "b_transposed" else w
    one_row = [bits(mx.matmul(a[i : i + 1], b)) for i in range(rows)]
    for m in range(1, rows + 1):
        if layout == "batched" and m % 2 == 0:
            # (2, m/2, k) @ (k, n): batch rows fold into one product.
            out = to_np(mx.matmul(mx.reshape(a[:m], (2, m // 2, k)), b)).reshape(m, n)
        else:
            out = to_np(mx.matmul(a[:m], b))
        for i in range(m):
            assert out[i].tobytes() == one_row[i], (
                f"{dtype} k={k} n={n}: row {i} of a {m}-row product differs"
            )


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", DTYPES)
def test_thread_count_independence(dtype):
    rng = seeded_rng("threads", dtype)
    cases = [
        ((300, 700), (700, 130)),
        ((1, 2000), (2000, 1500)),
        ((5, 300), (300, 2000)),
        ((40, 300), (300, 1500)),  # one row block, many column blocks: A packed once for all
        ((3, 64, 80), (3, 80, 90)),
    ]
    arrays = [
        (
            mx.array(operand(rng, sa, dtype), dtype=MX[dtype]),
            mx.array(operand(rng, sb, dtype), dtype=MX[dtype]),
        )
        for sa, sb in cases
    ]
    # x @ W.T of few rows (float32: each thread's columns in lanes of long runs of W's rows).
    w = mx.array(operand(rng, (1501, 300), dtype), dtype=MX[dtype])
    arrays.append((mx.array(operand(rng, (3, 300), dtype), dtype=MX[dtype]), w.T))
    before = mx.get_num_threads()
    try:
        results = {}
        for t in (1, 2, 3, 7):
            mx.set_num_threads(t)
            results[t] = [bits(mx.matmul(a, b)) for a, b in arrays]
        for t in (2, 3, 7):
            assert results[t] == results[1], f"{dtype}: {t} threads differ from 1"
    finally:
        mx.set_num_threads(before)


@pytest.mark.parametrize("dtype", [dtype_param(d) for d in DTYPES])
@pytest.mark.parametrize(
    "x_shape,t_shape,view",
    [
        ((1, 96), (18, 96, 32), "plain"),  # one row against a stack of 32-column tiles
        ((3, 50), (5, 50, 16), "plain"),
        ((7, 40), (4, 40, 64), "plain"),
        ((2, 33), (3, 33, 40), "plain"),  # widths off the vector length
        ((1, 20), (7, 20, 8), "plain"),
        ((1, 2, 30), (2, 3, 30, 32), "plain"),  # two batch axes that merge into one
        ((2, 30), (6, 30, 32), "every_other"),  # a strided stack
        ((2, 30), (3, 4, 30, 32), "swapped"),  # batch axes that do not merge
    ],
)
def test_few_rows_against_a_stack_of_matrices(dtype, x_shape, t_shape, view):
    """x @ T for a stack T of matrices, x's rows shared by every one (one pass over the stack
    split between threads, as one product's columns): near float64's, and on nuvec each matrix's
    product has the bits of its own product, whatever the thread count."""
    rng = seeded_rng("stack", dtype, x_shape, t_shape, view)
    x_np = operand(rng, x_shape, dtype)
    full = t_shape if view != "every_other" else (2 * t_shape[0],) + t_shape[1:]
    t_np = operand(rng, full, dtype)
    x, t = mx.array(x_np, dtype=MX[dtype]), mx.array(t_np, dtype=MX[dtype])
    if view == "every_other":
        t, t_np = t[::2], t_np[::2]
    elif view == "swapped":
        t, t_np = mx.swapaxes(t, 0, 1), np.swapaxes(t_np, 0, 1)
    check(x @ t, x_np, t_np, dtype, f"{x_shape} @ {t.shape}")
    if IS_MLX:
        return
    stack = t.reshape((-1,) + t.shape[-2:])
    before = mx.get_num_threads()
    try:
        for threads in (1, 2, 3):
            mx.set_num_threads(threads)
            out = to_np(x @ t).reshape((-1,) + x.shape[-2:-1] + t.shape[-1:])
            for i in range(stack.shape[0]):
                one = to_np(x.reshape(x.shape[-2:]) @ stack[i])
                assert out[i].tobytes() == one.tobytes(), f"{threads} threads: matrix {i} differs"
    finally:
        mx.set_num_threads(before)


@pytest.mark.nuvec_only
@pytest.mark.parametrize(
    "k,n,row_stride", [(576, 100, 576), (512, 48, 640), (64, 16, 64), (96, 7, 96)]
)
def test_bfloat16_x_times_w_t_few_and_many_rows(k, n, row_stride):
    """bfloat16 x @ W.T with W contiguous along k, in whole chunks of 32 (on AMX processors the
    few-row product reads W's rows in place, the operands' roles swapped; docs/matmul.md): every
    row of 1 to 40-row products equals its one-row product, also for W a view of longer rows, and
    is near float64's."""
    rng = seeded_rng("bf16-w-rows", k, n, row_stride)
    big = mx.array(rng.standard_normal((n, row_stride)).astype(np.float32)).astype(mx.bfloat16)
    w = big[:, :k]
    x = mx.array(rng.standard_normal((40, k)).astype(np.float32)).astype(mx.bfloat16)
    one_row = [bits(x[i : i + 1] @ w.T) for i in range(40)]
    for m in (1, 5, 16, 17, 33, 40):
        out = to_np(x[:m] @ w.T)
        assert all(out[i].tobytes() == one_row[i] for i in range(m)), f"{m} rows"
    ref = to_np(x).astype(np.float64) @ to_np(w).astype(np.float64).T
    np.testing.assert_allclose(out, ref, rtol=2**-7, atol=2**-7 * np.sqrt(k))


THREADS_SCRIPT = r"""
import hashlib, sys
import numpy as np
import nuvec as mx
rng = np.random.default_rng(5)
h = hashlib.sha256()
for dtype in ["float32", "bfloat16", "float64"]:
    for m, k, n in [(3, 900, 700), (200, 300, 500)]:
        a = mx.array(rng.standard_normal((m, k))).astype(getattr(mx, dtype))
        b = mx.array(rng.standard_normal((k, n))).astype(getattr(mx, dtype))
        h.update(np.array(mx.matmul(a, b).astype(mx.float64)).tobytes())
print(mx.get_num_threads(), h.hexdigest())
"""


@pytest.mark.nuvec_only
def test_num_threads_environment():
    """NUVEC_NUM_THREADS=1, 2 and 5 give the same bits."""
    outs = []
    for t in ("1", "2", "5"):
        env = dict(os.environ, NUVEC_NUM_THREADS=t)
        res = subprocess.run(
            [sys.executable, "-c", THREADS_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, res.stderr
        threads, digest = res.stdout.split()
        assert threads == t
        outs.append(digest)
    assert outs[0] == outs[1] == outs[2]


ISA_SCRIPT = r"""
import json, sys
import numpy as np
import nuvec as mx
rng = np.random.default_rng(3)
out = {"isa": mx._core._cpu_isa(), "cases": []}
def np_of(x):
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)
for dtype in ["float32", "float64", "float16", "bfloat16", "complex64"]:
    for m, k, n in [(1, 300, 70), (5, 97, 33), (40, 600, 75), (3, 200, 32), (2, 64, 16), (1, 50, 8)]:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        A, B = mx.array(a).astype(getattr(mx, dtype)), mx.array(b).astype(getattr(mx, dtype))
        full = np_of(mx.matmul(A, B))
        rows_match = all(np_of(mx.matmul(A[i:i + 1], B)).tobytes() == full[i:i + 1].tobytes() for i in range(m))
        af, bf = np_of(A).astype(np.complex128), np_of(B).astype(np.complex128)
        err = float(np.max(np.abs(full - af @ bf) / (np.abs(af) @ np.abs(bf))))
        out["cases"].append([dtype, m, k, n, err, rows_match])
json.dump(out, sys.stdout)
"""


@pytest.mark.nuvec_only
@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512"])
def test_kernel_builds(isa):
    """Each kernel build agrees with NumPy and keeps rows independent (in a subprocess forced with
    NUVEC_CPU_ISA)."""
    env = dict(os.environ, NUVEC_CPU_ISA=isa)
    res = subprocess.run(
        [sys.executable, "-c", ISA_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    if isa != "portable" and out["isa"] != isa:
        pytest.skip(f"this processor runs {out['isa']}, not {isa}")
    for dtype, m, k, n, err, rows_match in out["cases"]:
        assert rows_match, f"{isa} {dtype} {m}x{k}x{n}: rows differ from one-row products"
        assert err <= 4 * k * ACC_EPS[dtype] + 2 * OUT_EPS[dtype], (
            f"{isa} {dtype} {m}x{k}x{n}: error {err}"
        )


@pytest.mark.nuvec_only
@pytest.mark.parametrize("m", [1, 3, 64])  # the skinny and the blocked kernels
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_products_flush_subnormals(m, dtype):
    """nuvec's products read subnormal inputs as zero and flush subnormal results (docs/matmul.md:
    as XLA and TensorFlow on CPUs; MLX keeps them, at 30-55x the time); element-wise ops after
    them still keep subnormals."""
    rng = seeded_rng("flush", m, dtype)
    tiny = np.finfo(dtype).smallest_normal
    a = rng.standard_normal((m, 96)).astype(dtype)
    b = rng.standard_normal((96, 80)).astype(dtype)
    a[:, ::3] *= tiny / 4  # subnormal
    zeroed = a.copy()
    zeroed[:, ::3] = 0
    dt = getattr(mx, dtype)
    got, want = (to_np(mx.array(v, dt) @ mx.array(b, dt)) for v in (a, zeroed))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    # Each result below the smallest normal number is zero (the exact products are normal or 0)
    x = np.full((m, 4), np.sqrt(tiny) / 2, dtype)
    assert (to_np(mx.array(x, dt) @ mx.array(x.T, dt)) == 0).all()
    # Subnormal inputs are zero even where their products would be large
    s = np.full((m, 4), tiny / 4, dtype)
    assert (to_np(mx.array(s, dt) @ mx.array(np.full((4, 5), 2.0**60, dtype), dt)) == 0).all()
    assert to_np(mx.array(a, dt) * mx.array(1.0, dt))[0, 0] == a[0, 0] != 0


@pytest.mark.nuvec_only
def test_convolution_flushes_subnormals():
    rng = seeded_rng("flush-conv")
    x = rng.standard_normal((2, 20, 6)).astype(np.float32)
    w = rng.standard_normal((5, 3, 6)).astype(np.float32)
    x[..., ::2] *= np.float32(1e-39)
    zeroed = x.copy()
    zeroed[..., ::2] = 0
    got, want = (to_np(mx.conv1d(mx.array(v), mx.array(w))) for v in (x, zeroed))
    np.testing.assert_array_equal(got, want)
    # subnormal inputs are zero even against weights that would make their products large
    big = mx.full((5, 3, 6), 2.0**60)
    assert (to_np(mx.conv1d(mx.full((2, 20, 6), 1e-39), big)) == 0).all()
