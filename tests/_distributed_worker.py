"""The checks one rank of an MPI job runs for tests/test_distributed_mpi.py (run by mpirun, not
collected by pytest). Every rank makes every rank's inputs from their seeds, so each checks its
own results against NumPy. Prints "rank R/N: K checks passed" at the end.

    mpirun -n 4 python tests/_distributed_worker.py collectives
    mpirun -n 2 python tests/_distributed_worker.py stuck     # rank 1 never joins the all_sum
    mpirun -n 2 python tests/_distributed_worker.py killed    # rank 1 dies before it
"""

import os
import signal
import sys
import tempfile
import time

import numpy as np

import nuvec as mx
import nuvec.nn as nn
from nuvec.utils import tree_flatten

dist = mx.distributed
g = dist.init(strict=True)
R, N = g.rank(), g.size()
checks = 0

DTYPES = ["float32", "float64", "int32", "int64", "int8", "uint8", "uint16", "bool_"]
DTYPES += ["float16", "bfloat16", "complex64"]


def data(rank, shape, dtype, seed=0):
    """Rank ``rank``'s input: small integers (exact sums in any dtype), in float64 NumPy."""
    rng = np.random.default_rng(1000 * seed + rank)
    if dtype == "bool_":
        return rng.integers(0, 2, shape).astype(np.float64)
    lo = 0 if dtype.startswith("u") else -4
    v = rng.integers(lo, 5, shape).astype(np.float64)
    return v + 1j * rng.integers(-4, 5, shape) if dtype == "complex64" else v


def as_nuvec(v, dtype):
    if dtype == "complex64":
        return mx.array(v.astype(np.complex64))
    return mx.array(v.astype(np.float32)).astype(getattr(mx, dtype))


def check(got, want, dtype="float32", what=""):
    global checks
    got = np.array(got.astype(mx.float32) if dtype == "bfloat16" else got)
    ref = want.astype(np.bool_) if dtype == "bool_" else want
    assert got.shape == ref.shape, (what, got.shape, ref.shape)
    np.testing.assert_allclose(got.astype(np.complex128), ref, rtol=1e-6, err_msg=what)
    checks += 1


def collectives():
    everyone = lambda shape, dtype, seed=0: [data(r, shape, dtype, seed) for r in range(N)]  # noqa: E731
    for dtype in DTYPES:
        for shape in [(5, 3), (), (0, 2)]:
            xs = everyone(shape, dtype)
            x = as_nuvec(xs[R], dtype)
            check(dist.all_sum(x), sum(xs) if dtype != "bool_" else np.max(xs, 0), dtype, "sum")
            # 0-d arrays gather to a vector; over one process every collective is a copy (MLX)
            gathered = xs[0] if N == 1 else np.stack(xs) if shape == () else np.concatenate(xs)
            check(dist.all_gather(x), gathered, dtype, "gather")
            if dtype != "complex64":
                check(dist.all_max(x), np.max(xs, 0), dtype, "max")
                check(dist.all_min(x), np.min(xs, 0), dtype, "min")
        xs = everyone((2 * N, 3), dtype, seed=1)
        total = sum(xs) if dtype != "bool_" else np.max(xs, 0)
        got = dist.sum_scatter(as_nuvec(xs[R], dtype))
        check(got, total[2 * R : 2 * R + 2], dtype, "sum_scatter")
    # A strided view, a 3-d array, a Python scalar.
    xs = everyone((4, 6), "float32", seed=2)
    check(dist.all_sum(mx.array(xs[R].astype(np.float32)).T), sum(xs).T)
    check(dist.all_gather(mx.array(xs[R].astype(np.float32)).reshape(2, 3, 4)),
          np.concatenate([x.reshape(2, 3, 4) for x in xs]))  # fmt: skip
    check(dist.all_sum(2.5), np.array(2.5 * N))
    # Every rank gets the same bits of a float sum (small and large messages take different
    # algorithms), close to NumPy's float64 sum.
    for n in (1000, 1 << 18):
        xs = [np.random.default_rng(r).standard_normal(n).astype(np.float32) for r in range(N)]
        s = dist.all_sum(mx.array(xs[R]))
        seen = np.array(dist.all_gather(s[None]).view(mx.uint32))
        assert (seen == seen[0]).all(), "ranks got different bits"
        np.testing.assert_allclose(
            np.array(s), np.sum(xs, 0, dtype=np.float64), rtol=1e-5, atol=1e-5
        )
        globals()["checks"] += 1
    if N == 1:
        return
    # Point to point: a ring, then recv_like.
    right, left = (R + 1) % N, (R - 1) % N
    mine = mx.array(data(R, (3, 2), "float32", seed=3).astype(np.float32))
    sent = dist.send(mine, right)
    if R % 2 == 0:  # even ranks send first: no rank waits on a send nobody receives
        mx.eval(sent)
        got = dist.recv((3, 2), mx.float32, left)
    else:
        got = dist.recv_like(mine, left)
        mx.eval(got)
        mx.eval(sent)
    check(got, data(left, (3, 2), "float32", seed=3), what="ring")
    check(sent, data(R, (3, 2), "float32", seed=3), what="send returns x")
    # Subgroups: even and odd ranks, in reverse rank order.
    sub = g.split(R % 2, key=N - R)
    members = [r for r in range(N) if r % 2 == R % 2]
    assert sub.size() == len(members) and sub.rank() == sorted(members, reverse=True).index(R)
    xs = everyone((3,), "float32", seed=4)
    check(dist.all_sum(mx.array(xs[R].astype(np.float32)), group=sub), sum(xs[r] for r in members))


def transforms():
    """vjp, jvp, vmap and compile through the collectives."""
    if N == 1:
        return
    xs = [data(r, (2, 3), "float32", seed=5).astype(np.float32) for r in range(N)]
    x = mx.array(xs[R])
    w = mx.array(np.arange(2 * N * 3, dtype=np.float32).reshape(2 * N, 3))
    # d/dx sum(all_gather(x) * w): this rank's block of w (MLX's rule).
    gx = mx.grad(lambda x: (dist.all_gather(x) * w).sum())(x)
    check(gx, np.array(w)[2 * R : 2 * R + 2])
    # all_sum's vjp passes the cotangent through (MLX's rule), so grad(sum(all_sum(x)^2)) is
    # 2 * all_sum(x) on each rank.
    check(mx.grad(lambda x: (dist.all_sum(x) ** 2).sum())(x), 2 * sum(xs))
    check(mx.grad(lambda x: (dist.sum_scatter(mx.concatenate([x] * N)) * 1.0).sum())(x),
          np.full((2, 3), float(N)))  # fmt: skip
    _, tangent = mx.jvp(dist.all_sum, [x], [mx.ones_like(x)])
    check(tangent[0], np.full((2, 3), float(N)))
    batched = mx.vmap(dist.all_sum)(x)
    check(batched, sum(xs))
    check(mx.vmap(dist.all_gather, in_axes=1, out_axes=1)(x), np.concatenate(xs))
    check(mx.vmap(dist.all_gather)(x), np.concatenate(xs, 1))  # a batch of rows, each gathered
    check(mx.compile(lambda x: dist.all_sum(x * 2) + 1)(x), 2 * sum(xs) + 1)


def averaged_gradients():
    """nn.average_gradients over shards of a batch = the gradient of the whole batch."""
    mx.random.seed(7)  # the same model on every rank
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    rng = np.random.default_rng(8)
    bx = mx.array(rng.standard_normal((4 * N, 5)).astype(np.float32))
    by = mx.array(rng.integers(0, 3, 4 * N).astype(np.int32))
    loss = lambda m, x, y: nn.losses.cross_entropy(m(x), y, reduction="mean")  # noqa: E731
    step = nn.value_and_grad(model, loss)
    _, full = step(model, bx, by)
    _, shard = step(model, bx[4 * R : 4 * R + 4], by[4 * R : 4 * R + 4])
    for bucket in (0, 64, 32 * 1024**2):  # each array alone, small buckets, one bucket
        avg = nn.average_gradients(shard, all_reduce_size=bucket)
        for (k, a), (_, b) in zip(tree_flatten(avg), tree_flatten(full)):
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6, err_msg=k)
            globals()["checks"] += 1


def errors():
    """Bad calls raise at the call; a mismatched collective raises on every rank, and the group
    stays usable."""
    global checks
    if N == 1:
        return
    for call in (lambda: dist.send(mx.ones(2), N), lambda: dist.recv((2,), mx.float32, R)):
        try:
            call()
        except ValueError:
            checks += 1
    try:
        mx.eval(dist.all_sum(mx.ones(4 if R == 0 else 5)))
        raise AssertionError("a mismatched all_sum ran")
    except RuntimeError as e:
        assert "called different collectives" in str(e), e
        checks += 1
    check(dist.all_sum(mx.ones(2)), np.full(2, float(N)), what="after a mismatch")
    # A function file cannot carry a communicator: export names the collective.
    with tempfile.TemporaryDirectory() as d:
        try:
            mx.export_function(os.path.join(d, "f.mlxfn"), dist.all_sum, mx.ones(2))
            raise AssertionError("exported an all_sum")
        except ValueError as e:
            assert "all_sum" in str(e), e
            checks += 1


def late_peer(how):
    """Rank 1 never joins rank 0's all_sum: it sleeps (stuck) or dies. Rank 0 must raise within
    NUVEC_DISTRIBUTED_TIMEOUT; then it exits, which aborts the job (rank 1 included)."""
    if R == 1:
        if how == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(120)
        return
    t = time.monotonic()
    try:
        mx.eval(dist.all_sum(mx.ones(3)))
    except RuntimeError as e:
        print(f"rank 0 raised after {time.monotonic() - t:.1f} s: {e}", flush=True)
        sys.exit(3)
    print("rank 0: the all_sum returned", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode in ("stuck", "killed"):
        late_peer(mode)
    else:
        for part in (collectives, transforms, averaged_gradients, errors):
            part()
        print(f"rank {R}/{N}: {checks} checks passed", flush=True)
