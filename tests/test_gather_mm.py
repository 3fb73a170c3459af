"""gather_mm: NumPy float64 references, MLX differentials (shapes, dtypes, errors, gradients),
the vmap rule, and the determinism contract bit for bit: each row of a gathered product (sorted
or unsorted indices, up to 8 experts per token) has the bits of its one-row dense product
`a_row @ b[expert]`, for any NUVEC_NUM_THREADS."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import IS_MLX, mx
from helpers import seeded_rng

# The CPU kernel: on a GPU, gather_mm runs it on host copies, so its rows are not the GPU
# product's bits (docs/cuda.md).
pytestmark = pytest.mark.cpu_backend

nuvec_only = pytest.mark.nuvec_only


def reference(a, b, lhs, rhs):
    """a[lhs] @ b[rhs] in float64 over flat batch indices (MLX's definition)."""
    a2 = a[None] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    fa = a2.reshape((int(np.prod(a2.shape[:-2])),) + a2.shape[-2:]).astype(np.float64)
    fb = b2.reshape((int(np.prod(b2.shape[:-2])),) + b2.shape[-2:]).astype(np.float64)
    if lhs is None:
        lhs = np.arange(fa.shape[0]).reshape(a2.shape[:-2])
    if rhs is None:
        rhs = np.arange(fb.shape[0]).reshape(b2.shape[:-2])
    lhs, rhs = np.broadcast_arrays(np.asarray(lhs), np.asarray(rhs))
    out = np.matmul(fa[lhs.reshape(-1)], fb[rhs.reshape(-1)])
    out = out.reshape(lhs.shape + out.shape[-2:])
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


def arr(x, dtype=None):
    if dtype is None:
        return mx.array(x)
    return mx.array(np.asarray(x, np.float64), dtype=mx.float64).astype(dtype)


# (a shape, b shape, lhs, rhs)
SHAPES = [
    ((4, 3, 5), (6, 5, 7), [0, 1, 1, 3], [3, 2, 3, 0]),
    ((4, 3, 5), (6, 5, 7), None, [[2, 3, 0, 0], [1, 1, 5, 4]]),
    ((4, 3, 5), (6, 5, 7), [[1], [2]], [[0, 1, 2]]),
    ((2, 3, 4, 5), (3, 1, 5, 2), [5], None),
    ((2, 3, 4, 5), (5, 2), [0, 5], None),
    ((3, 5), (6, 5, 7), None, [1, 2]),
    ((5,), (6, 5, 7), None, [1, 4]),
    ((4, 3, 5), (5,), [1, 3], None),
    ((4, 3, 5), (6, 5, 7), 2, np.array([[1, 2], [3, 4]], np.int64)),
    ((4, 0, 5), (6, 5, 7), [0, 1], [2, 3]),
    ((4, 3, 0), (6, 0, 7), [0, 1], [2, 3]),
    ((4, 3, 5), (6, 5, 7), np.zeros((0,), np.int32), 2),
]


@pytest.mark.parametrize("case", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_values_against_numpy(case):
    sa, sb, lhs, rhs = case
    rng = seeded_rng("gather_mm", sa, sb)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    li = None if lhs is None else arr(np.asarray(lhs).astype(np.uint32))
    ri = None if rhs is None else arr(np.asarray(rhs).astype(np.uint32))
    out = mx.gather_mm(arr(a), arr(b), li, ri)
    ref = reference(a, b, lhs, rhs)
    assert out.shape == ref.shape and out.dtype == mx.float32
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-5, atol=1e-5)


@nuvec_only
@given(
    a_batch=st.lists(st.integers(1, 3), max_size=2),
    b_batch=st.lists(st.integers(1, 4), max_size=2),
    mkn=st.tuples(st.integers(1, 5), st.integers(0, 9), st.integers(1, 6)),
    index_shape=st.lists(st.integers(0, 4), max_size=2),
    seed=st.integers(0, 2**16),
)
def test_random_shapes_against_numpy_in_float64(a_batch, b_batch, mkn, index_shape, seed):
    rng = np.random.default_rng(seed)
    m, k, n = mkn
    a = rng.standard_normal((*a_batch, m, k))
    b = rng.standard_normal((*b_batch, k, n))
    lhs = rng.integers(0, int(np.prod(a_batch)), index_shape)
    rhs = rng.integers(0, int(np.prod(b_batch)), index_shape)
    got = mx.gather_mm(arr(a, mx.float64), arr(b, mx.float64), mx.array(lhs), mx.array(rhs))
    ref = reference(a, b, lhs, rhs)
    assert got.shape == ref.shape
    np.testing.assert_allclose(np.array(got), ref, rtol=1e-12, atol=1e-12)


@nuvec_only
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float64"])
def test_other_float_dtypes(dt):
    # MLX's CPU kernel takes float32 only (its GPU the others): nuvec takes all of them.
    rng = seeded_rng("gather_mm dtypes", dt)
    a, b = rng.standard_normal((3, 4, 16)), rng.standard_normal((5, 16, 8))
    d = getattr(mx, dt)
    out = mx.gather_mm(arr(a, d), arr(b, d), arr([2, 0, 1]), arr([4, 4, 0]))
    assert out.dtype == d
    A, B = np.array(arr(a, d).astype(mx.float64)), np.array(arr(b, d).astype(mx.float64))
    tol = {"float16": 1e-2, "bfloat16": 5e-2, "float64": 1e-12}[dt]
    np.testing.assert_allclose(
        np.array(out.astype(mx.float64)), reference(A, B, [2, 0, 1], [4, 4, 0]), rtol=tol, atol=tol
    )


def test_promotion_and_indices_dtypes():
    a = arr(np.ones((2, 3, 4), np.float16))
    b = arr(np.ones((3, 4, 5), np.float32))
    assert mx.gather_mm(a, b, arr([0, 1]), arr([2, 1])).dtype == mx.float32
    for it in (mx.uint8, mx.int64, mx.uint64, mx.int16):
        out = mx.gather_mm(a.astype(mx.float32), b, arr([0, 1]).astype(it), arr([2, 1]).astype(it))
        assert out.shape == (2, 3, 5)
    ai = arr(np.ones((2, 3, 4), np.int32))
    assert mx.gather_mm(ai, b, arr([0]), arr([1])).dtype == mx.float32


def test_without_indices_is_matmul():
    rng = seeded_rng("plain")
    a, b = (
        rng.standard_normal((2, 3, 4)).astype(np.float32),
        rng.standard_normal((4, 5)).astype(np.float32),
    )
    assert np.array_equal(
        np.array(mx.gather_mm(arr(a), arr(b))), np.array(mx.matmul(arr(a), arr(b)))
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.gather_mm(
            arr(np.ones((4, 3, 5))), arr(np.ones((6, 5, 7))), arr([0, 1]), arr([2, 3, 4])
        ),
        lambda: mx.gather_mm(arr(np.ones((4, 3, 5))), arr(np.ones((6, 4, 7))), arr([0]), arr([2])),
        lambda: mx.gather_mm(arr(3.0), arr(np.ones((6, 5, 7))), None, arr([2])),
        lambda: mx.gather_mm(
            arr(np.ones((4, 3, 5))), arr(np.ones((6, 5, 7))), arr([0.0]), arr([2])
        ),
        lambda: mx.gather_mm(
            arr(np.ones((4, 3, 5))), arr(np.ones((6, 5, 7))), arr([True]), arr([2])
        ),
        lambda: mx.gather_mm(
            arr(np.ones((4, 3, 5), np.int32)), arr(np.ones((6, 5, 7), np.int32)), arr([0]), arr([2])
        ),
        lambda: mx.gather_mm(
            arr(np.ones((4, 3, 5))).astype(mx.complex64),
            arr(np.ones((6, 5, 7))).astype(mx.complex64),
            arr([0]),
            None,
        ),
    ],
    ids=["index shapes", "inner", "0-d", "float indices", "bool indices", "int", "complex"],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@nuvec_only
def test_out_of_range_index_raises_at_eval():
    # MLX reads past the operand (garbage values); nuvec raises an index error when evaluated.
    a, b = arr(np.ones((4, 3, 5), np.float32)), arr(np.ones((6, 5, 7), np.float32))
    for li, ri in (([4], [0]), ([0], [6]), ([-1], [0])):
        out = mx.gather_mm(a, b, arr(li), arr(ri))
        with pytest.raises(IndexError):
            mx.eval(out)


def test_against_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("gather_mm mlx")
    for sa, sb, lhs, rhs in SHAPES:
        a, b = (
            rng.standard_normal(sa).astype(np.float32),
            rng.standard_normal(sb).astype(np.float32),
        )
        to = lambda x, m: None if x is None else m.array(np.asarray(x).astype(np.uint32))  # noqa: E731
        got = mx.gather_mm(arr(a), arr(b), to(lhs, mx), to(rhs, mx))
        want = mlx.gather_mm(mlx.array(a), mlx.array(b), to(lhs, mlx), to(rhs, mlx))
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- gradients
def _fd_grad(f, xs, i, h=1e-6):
    g = np.zeros_like(xs[i])
    for idx in np.ndindex(*xs[i].shape):
        up = [x.copy() for x in xs]
        dn = [x.copy() for x in xs]
        up[i][idx] += h
        dn[i][idx] -= h
        g[idx] = (f(*up) - f(*dn)) / (2 * h)
    return g


GRAD_CASES = [
    ((3, 2, 4), (4, 4, 3), [0, 2, 2, 1, 0], [3, 3, 0, 1, 3]),
    (
        (5, 1, 4),
        (3, 4, 2),
        [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4]],
        [[0, 2], [2, 1], [0, 1], [1, 1], [0, 2]],
    ),
    ((2, 3, 4), (3, 4, 2), None, [[2, 2], [0, 1]]),
]


@nuvec_only
@pytest.mark.parametrize("case", GRAD_CASES, ids=["repeats", "moe", "default lhs"])
def test_vjp_and_jvp_against_finite_differences(case):
    sa, sb, lhs, rhs = case
    rng = seeded_rng("gather_mm grad", sa)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ref_out = reference(a, b, lhs, rhs)
    w = rng.standard_normal(ref_out.shape)
    li = None if lhs is None else arr(np.asarray(lhs, np.uint32))
    ri = arr(np.asarray(rhs, np.uint32))

    def loss(x, y):
        return (mx.gather_mm(x, y, li, ri) * arr(w, mx.float64)).sum()

    f64 = lambda x: arr(x, mx.float64)  # noqa: E731
    ga, gb = mx.grad(loss, argnums=(0, 1))(f64(a), f64(b))
    np_loss = lambda x, y: float((reference(x, y, lhs, rhs) * w).sum())  # noqa: E731
    np.testing.assert_allclose(np.array(ga), _fd_grad(np_loss, [a, b], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.array(gb), _fd_grad(np_loss, [a, b], 1), rtol=1e-6, atol=1e-7)
    ta, tb = rng.standard_normal(sa), rng.standard_normal(sb)
    _, (t,) = mx.jvp(lambda x, y: mx.gather_mm(x, y, li, ri), [f64(a), f64(b)], [f64(ta), f64(tb)])
    np.testing.assert_allclose(
        np.array(t), reference(ta, b, lhs, rhs) + reference(a, tb, lhs, rhs), rtol=1e-10
    )


@nuvec_only
def test_second_order_gradients():
    # The cotangent of b is itself a gathered product (the grad_b kind): differentiate it again.
    rng = seeded_rng("gather_mm grad2")
    a, b = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 4, 3))
    li, ri = [0, 2, 2, 1], [3, 3, 0, 3]
    w = rng.standard_normal((4, 2, 3))

    def db_norm(x, y):
        gb = mx.grad(lambda q: (mx.gather_mm(x, q, arr(li), arr(ri)) * arr(w, mx.float64)).sum())(y)
        return (gb * gb).sum()

    def np_db_norm(x, y):
        gb = np.zeros_like(y)
        for i, (j, e) in enumerate(zip(li, ri)):
            gb[e] += x[j].T @ w[i]
        return float((gb * gb).sum())

    ga = mx.grad(db_norm)(arr(a, mx.float64), arr(b, mx.float64))
    np.testing.assert_allclose(np.array(ga), _fd_grad(np_db_norm, [a, b], 0), rtol=1e-6, atol=1e-6)


def test_grads_against_mlx():
    mlx = pytest.importorskip("mlx.core")
    rng = seeded_rng("gather_mm grad mlx")
    for sa, sb, lhs, rhs in GRAD_CASES:
        a, b = (
            rng.standard_normal(sa).astype(np.float32),
            rng.standard_normal(sb).astype(np.float32),
        )
        out_shape = reference(a, b, lhs, rhs).shape
        w = rng.standard_normal(out_shape).astype(np.float32)
        grads = []
        for m in (mx, mlx):
            li = None if lhs is None else m.array(np.asarray(lhs, np.uint32))
            ri = m.array(np.asarray(rhs, np.uint32))
            f = lambda x, y: (m.gather_mm(x, y, li, ri) * m.array(w)).sum()  # noqa: E731
            grads.append([np.array(g) for g in m.grad(f, argnums=(0, 1))(m.array(a), m.array(b))])
        for g, h in zip(*grads):
            np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-5)


def test_sorted_indices_give_the_same_result():
    rng = seeded_rng("sorted")
    x, w = (
        rng.standard_normal((6, 1, 8)).astype(np.float32),
        rng.standard_normal((4, 8, 5)).astype(np.float32),
    )
    idx = arr(np.array([0, 0, 1, 3, 3, 3], np.uint32))
    plain = mx.gather_mm(arr(x), arr(w), None, idx)
    hinted = mx.gather_mm(arr(x), arr(w), None, idx, sorted_indices=True)
    assert np.array_equal(np.array(plain), np.array(hinted))


# ----------------------------------------------------------------------------- vmap
@nuvec_only
@pytest.mark.parametrize(
    "axes", [(0, None, None, None), (None, 1, None, None), (1, 0, None, 0), (None, None, 0, 1)]
)
def test_vmap_matches_a_loop(axes):
    rng = seeded_rng("gather_mm vmap", axes)
    n = 3
    a, b = rng.standard_normal((4, 2, 5)), rng.standard_normal((3, 5, 6))
    li, ri = np.array([0, 3, 3, 1]), np.array([2, 0, 2, 1])
    ins = [a, b, li, ri]
    batched = [
        np.stack([x + (k if j < 2 else 0) for k in range(n)], axis=ax) if ax is not None else x
        for j, (x, ax) in enumerate(zip(ins, axes))
    ]
    if axes[2] is not None:
        batched[2] = np.stack([np.roll(li, k) for k in range(n)], axis=axes[2])
    if axes[3] is not None:
        batched[3] = np.stack([np.roll(ri, k) for k in range(n)], axis=axes[3])
    f = lambda x, y, i, j: mx.gather_mm(x, y, i, j)  # noqa: E731
    xs = [arr(x.astype(np.uint32)) if j > 1 else arr(x, mx.float64) for j, x in enumerate(batched)]
    got = np.array(mx.vmap(f, in_axes=axes)(*xs))
    for k in range(n):
        one = [np.take(x, k, axis=ax) if ax is not None else x for x, ax in zip(batched, axes)]
        np.testing.assert_allclose(got[k], reference(one[0], one[1], one[2], one[3]), rtol=1e-12)


@nuvec_only
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_per_example_gradients_through_vmap(in_axes):
    # vmap of grad: the cotangent rules (grad_b's kind, the scatter of a's) under the vmap rule.
    rng = seeded_rng("gather_mm vmap grad", in_axes)
    n = 3
    li, ri = arr(np.array([0, 2, 2, 1], np.uint32)), arr(np.array([1, 1, 0, 1], np.uint32))
    w = arr(rng.standard_normal((4, 2, 3)), mx.float64)

    def loss(x, y):
        return (mx.gather_mm(x, y, li, ri) * w).sum() ** 2

    a = rng.standard_normal((n, 3, 2, 4) if in_axes[0] == 0 else (3, 2, 4))
    b = rng.standard_normal((n, 2, 4, 3) if in_axes[1] == 0 else (2, 4, 3))
    A, B = arr(a, mx.float64), arr(b, mx.float64)
    ga, gb = mx.vmap(mx.grad(loss, argnums=(0, 1)), in_axes=in_axes)(A, B)
    for k in range(n):
        x = A[k] if in_axes[0] == 0 else A
        y = B[k] if in_axes[1] == 0 else B
        ea, eb = mx.grad(loss, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(np.array(ga[k]), np.array(ea), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.array(gb[k]), np.array(eb), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- determinism
def moe_case(tokens, experts, top_k, dim, dt, sorted_rows):
    """A mixture-of-experts gathered product and each of its rows' one-row dense products."""
    rng = seeded_rng("moe", tokens, experts, top_k, dim, dt)
    x = arr(rng.standard_normal((tokens, dim)), getattr(mx, dt))
    w = arr(rng.standard_normal((experts, dim, dim + 3)), getattr(mx, dt))
    idx = np.stack([rng.permutation(experts)[:top_k] for _ in range(tokens)]).astype(np.uint32)
    if sorted_rows:  # as SwitchGLU with sorted indices: rows (token, k) ordered by expert
        flat = idx.reshape(-1)
        order = np.argsort(flat, kind="stable")
        xs = x[mx.array((order // top_k).astype(np.uint32))][:, None, :]
        out = mx.gather_mm(xs, w, None, mx.array(flat[order]), sorted_indices=True)[:, 0, :]
        pairs = [(int(order[r] // top_k), int(flat[order[r]])) for r in range(len(flat))]
    else:  # unsorted: x (tokens, 1, 1, dim), indices (tokens, top_k)
        out = mx.gather_mm(x[:, None, None, :], w, None, mx.array(idx)).reshape(tokens * top_k, -1)
        pairs = [(t, int(idx[t, k])) for t in range(tokens) for k in range(top_k)]
    singles = [mx.matmul(x[t : t + 1], w[e])[0] for t, e in pairs]
    return out, singles


def as_bits(x):
    return np.array(x.view(mx.uint16) if x.dtype in (mx.bfloat16, mx.float16) else x).tobytes()


MOE = [(t, e, k) for t in (2, 3, 7, 64, 256) for e, k in ((8, 2), (16, 8))]


@nuvec_only
@pytest.mark.parametrize("dt", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("sorted_rows", [False, True])
def test_each_row_has_the_bits_of_its_one_row_product(dt, sorted_rows):
    for tokens, experts, top_k in MOE:
        if tokens > 64 and dt != "float32":
            continue
        out, singles = moe_case(tokens, experts, top_k, 48, dt, sorted_rows)
        for r, one in enumerate(singles):
            assert as_bits(out[r]) == as_bits(one), f"{tokens}x{top_k} of {experts}: row {r}"


@nuvec_only
def test_rows_of_multi_row_items_keep_their_bits():
    rng = seeded_rng("multi-row")
    for m in (2, 3, 7, 64):
        a = arr(rng.standard_normal((3, m, 40)).astype(np.float32))
        b = (
            arr(rng.standard_normal((2, 40, 300)).astype(np.float32))
            .swapaxes(-1, -2)
            .swapaxes(-1, -2)
        )
        li, ri = [2, 0, 2, 1], [1, 1, 0, 1]
        out = mx.gather_mm(a, b, arr(li), arr(ri))
        for i, (j, e) in enumerate(zip(li, ri)):
            for r in range(m):
                assert as_bits(out[i, r]) == as_bits(mx.matmul(a[j, r : r + 1], b[e])[0])


@nuvec_only
@pytest.mark.parametrize("sorted_rows", [False, True])
def test_groups_longer_than_the_row_independent_rows(sorted_rows):
    # 600 rows on each of 2 experts: the kernel splits each group into products of at most
    # ROW_INDEPENDENT_ROWS rows, and every row still has its one-row product's bits.
    assert mx.ROW_INDEPENDENT_ROWS == 256
    out, singles = moe_case(600, 2, 2, 40, "float32", sorted_rows)
    got = np.array(out)
    want = np.stack([np.array(one) for one in singles])
    assert got.tobytes() == want.tobytes()


_SCRIPT = r"""
import hashlib, sys
sys.path.insert(0, {tests!r})
from test_gather_mm import MOE, moe_case, as_bits
import nuvec as mx
mx.set_default_device(mx.cpu)  # the CPU kernel's bits (a GPU would be the default)
for t, e, k in MOE:
    for s in (False, True):
        out, _ = moe_case(t, e, k, 64, "float32", s)
        print(hashlib.sha256(as_bits(out)).hexdigest())
# The cotangents too (b's sums each expert's rows in one product; a's scatters in index order).
x, w = mx.arange(64 * 96).reshape(64, 1, 1, 96) / 1000, mx.cos(mx.arange(8 * 96 * 99).reshape(8, 96, 99))
idx = mx.array([[(3 * t) % 8, (5 * t + 1) % 8] for t in range(64)])
grads = mx.grad(lambda p, q: (mx.gather_mm(p, q, None, idx) ** 2).sum(), argnums=(0, 1))(x, w)
print(" ".join(hashlib.sha256(as_bits(g)).hexdigest() for g in grads).replace(" ", "-"))
"""


@nuvec_only
@pytest.mark.skipif(IS_MLX, reason="nuvec only")
@pytest.mark.parametrize("isa", ["default", "portable"])
def test_same_bits_for_any_thread_count(isa):
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    if isa != "default":
        env["NUVEC_CPU_ISA"] = isa
    outs = {}
    for n in ("1", "2", "3"):
        r = subprocess.run(
            [sys.executable, "-c", script],
            env=dict(env, NUVEC_NUM_THREADS=n),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs[n] = r.stdout.split()
    assert len(outs["1"]) == 2 * len(MOE) + 1
    assert outs["1"] == outs["2"] == outs["3"]
