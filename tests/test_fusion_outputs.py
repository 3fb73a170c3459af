"""Fused groups with several stored results (a producer also asked for or held from Python) and
outputs written into a dead input's buffer (donation): bit-identical to op-by-op evaluation, no
input anyone still holds is overwritten, and an Adam update runs in one pass, in place."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's evaluation")]

N = 1 << 17  # above the size under which nothing is fused
PIECE = 1 << 15  # below it: pieces of this size run op by op
F32 = np.float32


def arrays(count, seed=0, low=0.5, high=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, N).astype(F32) for _ in range(count)]


def adam_like(p, g, m, v, lr):
    """Adam's rule written as nuvec.optimizers.Adam writes it (MLX's ops in MLX's order)."""
    m = 0.9 * m + (1 - 0.9) * g
    v = 0.999 * v + (1 - 0.999) * mx.square(g)
    return p - lr * m / (mx.sqrt(v) + 1e-8), m, v


def adam_numpy(p, g, m, v, lr):
    """The same rule in float32 NumPy, operation by operation (each correctly rounded)."""
    m = F32(0.9) * m + F32(1 - 0.9) * g
    v = F32(0.999) * v + F32(1 - 0.999) * np.square(g)
    return p - lr * m / (np.sqrt(v) + F32(1e-8)), m, v


def op_by_op(fn, *xs):
    """fn's results computed on pieces too small to fuse, concatenated: the unfused bits."""
    parts = []
    for i in range(0, N, PIECE):
        outs = fn(*(x[i : i + PIECE] if x.size == N else x for x in xs))
        mx.eval(outs)
        parts.append(outs)
    return [np.asarray(mx.concatenate(list(col))) for col in zip(*parts)]


def test_stored_producers_equal_op_by_op_and_numpy():
    p, g, m, v = arrays(4)
    lr = mx.array(F32(0.01))
    got = adam_like(*(mx.array(x) for x in (p, g, m, v)), lr)
    mx.eval(got)
    plain = op_by_op(adam_like, *(mx.array(x) for x in (p, g, m, v)), lr)
    want = adam_numpy(p, g, m, v, F32(0.01))
    for a, b, c in zip(got, plain, want):
        assert np.array_equal(np.asarray(a), b)
        assert np.array_equal(b, c)


def test_held_producer_is_stored_when_only_its_user_is_asked_for():
    x, y = arrays(2, seed=1)
    a = mx.array(x) * 3.0 + mx.array(y)  # held here, used once by the chain below
    out = mx.exp(a * 0.25) - mx.array(y)
    mx.eval(out)
    a_ref = x * F32(3.0) + y
    assert np.array_equal(np.asarray(a), a_ref)
    assert np.array_equal(
        np.asarray(out),
        op_by_op(lambda a, y: [mx.exp(a * 0.25) - y], mx.array(a_ref), mx.array(y))[0],
    )


def test_stored_results_in_several_dtypes():
    x, y = arrays(2, seed=2)
    for dtype in (mx.float64, mx.float16, mx.int32):
        a, b = mx.array(x * 10).astype(dtype), mx.array(y * 10).astype(dtype)
        mx.eval(a, b)

        def chain(a, b):
            s = a * b + a
            d = s - b
            return [s, d, d * 2 + s - s]

        got = chain(a, b)
        mx.eval(got)
        for out, ref in zip(got, op_by_op(chain, a, b)):
            assert np.array_equal(
                np.asarray(out.astype(mx.float32)), ref.astype(np.float32), equal_nan=True
            )


def test_dead_inputs_are_overwritten_in_place():
    p, g, m, v = arrays(4, seed=3)
    P, G, M, V = (mx.array(x) for x in (p, g, m, v))
    lr = mx.array(F32(0.01))
    mx.eval(P, G, M, V, lr)
    outs = adam_like(P, G, M, V, lr)
    del P, M, V  # only the graph holds them now: their buffers may take the new values
    mx.reset_peak_memory()
    before = mx.get_active_memory()
    mx.eval(outs)
    assert mx.get_peak_memory() == before  # nothing new was allocated
    for a, b in zip(outs, adam_numpy(p, g, m, v, F32(0.01))):
        assert np.array_equal(np.asarray(a), b)


def test_held_inputs_are_never_overwritten():
    p, g, m, v = arrays(4, seed=4)
    P, G, M, V = (mx.array(x) for x in (p, g, m, v))
    outs = adam_like(P, G, M, V, mx.array(F32(0.01)))
    mx.eval(outs)
    for held, original in zip((P, G, M, V), (p, g, m, v)):
        assert np.array_equal(np.asarray(held), original)
    for a, b in zip(outs, adam_numpy(p, g, m, v, F32(0.01))):
        assert np.array_equal(np.asarray(a), b)


@pytest.mark.parametrize("first", [True, False])
def test_an_input_read_after_a_stored_step_keeps_its_values_until_read(first):
    # `a` is stored at the group's first step; `d` dies with this evaluation but is read only
    # by a later step, so `a` must not take d's buffer (the later read would see a's values).
    x, y, z = arrays(3, seed=5)
    X = mx.array(x)
    D, E = mx.array(y), mx.array(z)
    mx.eval(X, D, E)
    a = X * 2.0
    t = D * 3.0 + E
    out = (t + a) if first else (a - t)
    del D, E
    mx.eval(out, a)
    a_ref = x * F32(2.0)
    t_ref = y * F32(3.0) + z
    assert np.array_equal(np.asarray(a), a_ref)
    assert np.array_equal(np.asarray(out), (t_ref + a_ref) if first else (a_ref - t_ref))
    assert np.array_equal(np.asarray(X), x)


def test_broadcast_and_strided_dead_inputs_are_not_taken():
    x, y = arrays(2, seed=6)
    X = mx.array(x.reshape(256, 512))
    row = mx.array(y[:512].reshape(1, 512))  # broadcast along the rows
    one = mx.array(F32(1.5))
    tr = mx.array(y.reshape(512, 256)).T  # a strided view of the same shape
    mx.eval(X, row, one, tr)
    a = X * one + row
    b = a * 0.5 - tr
    c = mx.exp(b * 0.1) * one
    del row, one, tr
    mx.eval(a, c)
    a_ref = x.reshape(256, 512) * F32(1.5) + y[:512].reshape(1, 512)
    b_ref = a_ref * F32(0.5) - y.reshape(512, 256).T
    assert np.array_equal(np.asarray(a), a_ref)
    want = np.asarray(mx.exp(mx.array(b_ref[:32]) * 0.1) * 1.5)  # a piece below the fusion size
    assert np.array_equal(np.asarray(c)[:32], want)
    assert np.array_equal(np.asarray(X), x.reshape(256, 512))


def test_same_bits_for_any_thread_count():
    p, g, m, v = arrays(4, seed=7)
    before = mx.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            mx.set_num_threads(threads)
            outs = adam_like(*(mx.array(x) for x in (p, g, m, v)), mx.array(F32(0.01)))
            mx.eval(outs)
            results.append([np.asarray(o).tobytes() for o in outs])
    finally:
        mx.set_num_threads(before)
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize(
    ("name", "kw"),
    [("Adam", {}), ("Adam", {"bias_correction": True}), ("AdamW", {"weight_decay": 0.1})],
)
def test_large_optimizer_steps_match_mlx_bit_for_bit(name, kw):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    import nuvec.optimizers as optim

    rng = np.random.default_rng(8)
    shapes = {"w": (384, 256), "b": (N,)}  # both above the fusion size
    params = {k: rng.standard_normal(s).astype(F32) for k, s in shapes.items()}
    grads = [{k: rng.standard_normal(s).astype(F32) for k, s in shapes.items()} for _ in range(3)]
    ours, theirs = (
        getattr(optim, name)(learning_rate=0.01, **kw),
        getattr(mlx_optim, name)(learning_rate=0.01, **kw),
    )
    p_ours = {k: mx.array(v) for k, v in params.items()}
    p_theirs = {k: mlx.array(v) for k, v in params.items()}
    for g in grads:
        p_ours = ours.apply_gradients({k: mx.array(v) for k, v in g.items()}, p_ours)
        p_theirs = theirs.apply_gradients({k: mlx.array(v) for k, v in g.items()}, p_theirs)
        mx.eval(p_ours, ours.state)
        mlx.eval(p_theirs, theirs.state)
        for k in shapes:
            assert np.array_equal(np.asarray(p_ours[k]), np.asarray(p_theirs[k])), k
            for s in ("m", "v"):
                assert np.array_equal(
                    np.asarray(ours.state[k][s]), np.asarray(theirs.state[k][s])
                ), (k, s)
