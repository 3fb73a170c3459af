"""nuvec.nn.layers.distributed and the data-parallel helpers of nuvec.nn.utils, on the one-process
group nuvec has until issue 19: the sharded linear layers compute exactly what nn.Linear does with
the same weights; shard_linear / shard_inplace / FullyShardedModule cut weights as MLX's do (names,
shapes and values, compared with mlx.nn.layers.distributed; for groups larger than one process
through a stand-in group that only answers size() and rank(), which is all the sharding asks);
average_gradients and clip_grad_norm_sharded against NumPy and MLX."""

import numpy as np
import pytest

import nuvec as nx
import nuvec.nn as nnx
from _impl import IS_MLX
from nuvec.nn.layers import distributed as dx
from nuvec.nn.utils import _buckets, _reduce_in_buckets
from nuvec.utils import tree_flatten, tree_unflatten

if IS_MLX:
    pytest.skip("nuvec's nn against MLX's", allow_module_level=True)


class StandIn:
    """A group as the sharding code sees it: its size and this process's rank."""

    def __init__(self, size, rank):
        self._size, self._rank = size, rank

    def size(self):
        return self._size

    def rank(self):
        return self._rank


def _mlx():
    return pytest.importorskip("mlx.core"), pytest.importorskip("mlx.nn")


def _flat(module):
    return {k: np.array(v) for k, v in tree_flatten(module.parameters())}


def _mlx_flat(module):
    from mlx.utils import tree_flatten as mlx_flatten

    return {k: np.array(v) for k, v in mlx_flatten(module.parameters())}


def _copy_into_mlx(module, mlx_module):
    """``mlx_module`` given ``module``'s weights."""
    mx, _ = _mlx()
    from mlx.utils import tree_unflatten as mlx_unflatten

    mlx_module.update(mlx_unflatten([(k, mx.array(v)) for k, v in _flat(module).items()]))
    return mlx_module


def model_params(flat):
    """A nuvec parameter tree from ``{path: numpy array}``."""
    return tree_unflatten([(k, nx.array(v)) for k, v in flat.items()])


def _same_flat(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].shape == b[k].shape, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("sharding", ["all-to-sharded", "sharded-to-all"])
@pytest.mark.parametrize("bias", [True, False])
def test_sharded_linear_is_linear_on_one_process(sharding, bias):
    lin = nnx.Linear(6, 4, bias=bias)
    sharded = dx.shard_linear(lin, sharding)
    assert type(sharded) is (
        dx.AllToShardedLinear if sharding == "all-to-sharded" else dx.ShardedToAllLinear
    )
    _same_flat(_flat(sharded), _flat(lin))
    x = nx.random.normal((2, 3, 6))
    np.testing.assert_array_equal(np.array(sharded(x)), np.array(lin(x)))
    # NumPy float64: y = x W^T + b.
    p = _flat(lin)
    want = np.array(x).astype(np.float64) @ p["weight"].T.astype(np.float64)
    want += p.get("bias", 0.0)
    np.testing.assert_allclose(np.array(sharded(x)), want, rtol=1e-5, atol=1e-6)

    # The same gradients with respect to the parameters and the input.
    def grads(m):
        loss = lambda x: (m(x) * nx.arange(4.0)).sum()  # noqa: E731
        _, g = nnx.value_and_grad(m, loss)(x)
        return {k: np.array(v) for k, v in tree_flatten(g)}, np.array(nx.grad(loss)(x))

    (gs, gxs), (gl, gxl) = grads(sharded), grads(lin)
    _same_flat(gs, gl)
    np.testing.assert_array_equal(gxs, gxl)


def test_sharded_linear_wrong_input_names_the_layer():
    for cls in (dx.AllToShardedLinear, dx.ShardedToAllLinear):
        with pytest.raises(nx.OpError, match=cls.__name__):
            cls(5, 4)(nx.ones((2, 3)))


SHARDINGS = [
    ("all-to-sharded", 1),
    ("sharded-to-all", 1),
    ("all-to-sharded", 3),
    ("sharded-to-all", 3),
    ("all-to-sharded", [4, 8]),
    ("sharded-to-all", [0.25, 0.5]),
]


def _np_shard(w, n, rank, axis, segments):
    """NumPy reference of one process's shard of ``w``."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        parts = np.split(w, segments, axis=axis)
    else:
        parts = np.split(w, [int(f * w.shape[axis]) for f in segments], axis=axis)
    return np.concatenate([np.split(p, n, axis=axis)[rank] for p in parts], axis=axis)


@pytest.mark.parametrize("sharding,segments", SHARDINGS)
@pytest.mark.parametrize("n,rank", [(1, 0), (2, 1), (4, 2)])
def test_shard_linear_cuts_like_mlx(sharding, segments, n, rank):
    lin = nnx.Linear(48, 24)
    group = StandIn(n, rank)
    got = dx.shard_linear(lin, sharding, segments=segments, group=group)
    p, flat = _flat(lin), _flat(got)
    to_sharded = sharding == "all-to-sharded"
    np.testing.assert_array_equal(
        flat["weight"], _np_shard(p["weight"], n, rank, 1 - to_sharded, segments)
    )
    want_bias = _np_shard(p["bias"], n, rank, 0, segments) if to_sharded else p["bias"]
    np.testing.assert_array_equal(flat["bias"], want_bias)
    out, inp = (24, 48 // n) if not to_sharded else (24 // n, 48)
    assert flat["weight"].shape == (out, inp)
    assert repr(got) == f"{type(got).__name__}(input_dims=48, output_dims=24, bias=True)"

    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    want = mdx.shard_linear(
        _copy_into_mlx(lin, nn.Linear(48, 24)), sharding, segments=segments, group=group
    )
    assert type(want).__name__ == type(got).__name__
    _same_flat(flat, _mlx_flat(want))
    assert repr(got) == repr(want)


@pytest.mark.parametrize("sharding,segments", SHARDINGS + [("custom", 1)])
def test_shard_inplace_like_mlx(sharding, segments):
    def build(nn):
        return nn.Sequential(nn.Linear(48, 24), nn.Linear(24, 48, bias=False), nn.Embedding(24, 24))

    # A custom rule: split every matrix along axis 0 in 2 segments, keep vectors whole.
    rule = (lambda path, w: (0, 2) if w.ndim == 2 else None) if sharding == "custom" else sharding
    model = build(nnx)
    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    twin = _copy_into_mlx(model, build(nn))
    group = StandIn(2, 1)
    assert dx.shard_inplace(model, rule, segments=segments, group=group) is None
    mdx.shard_inplace(twin, rule, segments=segments, group=group)
    _same_flat(_flat(model), _mlx_flat(twin))


def test_shard_inplace_on_one_process_keeps_every_weight():
    model = nnx.Sequential(nnx.Linear(6, 4), nnx.Linear(4, 2))
    before = _flat(model)
    dx.shard_inplace(model, "all-to-sharded", segments=2)
    _same_flat(_flat(model), before)


def test_sharding_errors_as_mlx():
    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    group = StandIn(4, 0)
    for lib, nn_lib in ((dx, nnx), (mdx, nn)):
        with pytest.raises(ValueError, match="not supported"):
            lib.shard_linear(nn_lib.Linear(4, 4), "row")
        with pytest.raises(ValueError, match="not supported"):
            lib.shard_inplace(nn_lib.Linear(4, 4), "row")
        with pytest.raises(ValueError, match="should return int or tuple"):
            lib.shard_inplace(nn_lib.Linear(4, 4), lambda p, w: [0])
        with pytest.raises(ValueError, match="Cannot shard the output of size 6 across 4"):
            lib.AllToShardedLinear(8, 6, group=group)
        with pytest.raises(ValueError, match="input of size 6 cannot be sharded across 4"):
            lib.ShardedToAllLinear(6, 8, group=group)


def test_sharded_layer_parameters_like_mlx():
    """Constructed directly: the same names and shapes as MLX's (the values are random)."""
    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    group = StandIn(2, 0)
    for name in ("AllToShardedLinear", "ShardedToAllLinear"):
        for bias in (True, False):
            got = getattr(dx, name)(8, 6, bias=bias, group=group)
            want = getattr(mdx, name)(8, 6, bias=bias, group=group)
            shapes = {k: v.shape for k, v in _flat(got).items()}
            assert shapes == {k: v.shape for k, v in _mlx_flat(want).items()}
            assert repr(got) == repr(want)


def test_sum_gradients_on_one_process_is_the_identity():
    g = nx.distributed.init()
    x = nx.ones(3)
    assert dx.sum_gradients(g)(x) is x
    assert dx.sum_gradients(g) is dx.sum_gradients(g)


class Net(nnx.Module):
    def __init__(self):
        super().__init__()
        self.emb = nnx.Embedding(6, 4)
        self.layers = [nnx.Linear(4, 8), nnx.Linear(8, 2)]

    def __call__(self, ids):
        x = self.emb(ids)
        for layer in self.layers:
            x = nx.maximum(layer(x), 0.0)
        return x


def test_fully_sharded_module_on_one_process():
    net = Net()
    ids = nx.array([[0, 5, 2], [3, 3, 1]])
    want = np.array(net(ids))
    loss = lambda m: lambda ids: (m(ids) ** 2).sum()  # noqa: E731
    _, want_g = nnx.value_and_grad(net, loss(net))(ids)
    before = _flat(net)
    wrapped = dx.FullyShardedModule(net)
    assert repr(wrapped).startswith("FullyShardedModule(num_sharded_params=5")
    _same_flat(_flat(wrapped), {f"module.{k}": v for k, v in before.items()})
    np.testing.assert_array_equal(np.array(wrapped(ids)), want)
    _, got_g = nnx.value_and_grad(wrapped, loss(wrapped))(ids)
    _same_flat(
        {k: np.array(v) for k, v in tree_flatten(got_g)},
        {f"module.{k}": np.array(v) for k, v in tree_flatten(want_g)},
    )
    _same_flat(_flat(wrapped), {f"module.{k}": v for k, v in before.items()})  # shards restored
    emb = dx.FullyShardedModule(nnx.Embedding(6, 4))
    x = nx.ones((2, 4))
    np.testing.assert_array_equal(np.array(emb.as_linear(x)), np.array(emb.module.as_linear(x)))
    # With compute_dtype the whole parameters are cast for the call.
    half = dx.FullyShardedModule(nnx.Linear(4, 2), compute_dtype=nx.float16)
    assert half(nx.ones((1, 4), nx.float16)).dtype == nx.float16
    assert half.module.weight.dtype == nx.float32


def test_fully_shard_returns_the_module_on_one_process():
    net = Net()
    assert dx.fully_shard(net) is net
    wrapped = dx.FullyShardedModule(net)
    assert dx.fully_shard(wrapped, group=StandIn(2, 0)) is wrapped


def test_fully_sharded_module_cuts_like_mlx():
    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    group = StandIn(2, 1)
    net = Net()
    twin = _copy_into_mlx(net, _mlx_net(nn))
    got = dx.FullyShardedModule(net, group=group)
    want = mdx.FullyShardedModule(twin, group=group)
    _same_flat(_flat(got), _mlx_flat(want))
    assert repr(got).splitlines()[0] == repr(want).splitlines()[0]


def _mlx_net(nn):
    class MlxNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(6, 4)
            self.layers = [nn.Linear(4, 8), nn.Linear(8, 2)]

    return MlxNet()


def test_fully_sharded_module_errors_as_mlx():
    mx, nn = _mlx()
    from mlx.nn.layers import distributed as mdx

    for lib, nn_lib, arr in ((dx, nnx, nx), (mdx, nn, mx)):
        m = nn_lib.Linear(3, 5)
        with pytest.raises(ValueError, match=r"'weight' with shape \(5, 3\) across 2 devices"):
            lib.FullyShardedModule(m, group=StandIn(2, 0))
        m = nn_lib.Linear(2, 2)
        m.scale = arr.array(2.0)
        with pytest.raises(ValueError, match="'scale' because it is a scalar"):
            lib.FullyShardedModule(m)


# -- average_gradients / clip_grad_norm_sharded ------------------------------------------------


def _grads():
    return {
        "a": nx.arange(6.0).reshape(2, 3),
        "b": [nx.ones((5,)), {"c": nx.full((4, 2), 3.0)}],
        "d": nx.array(7.0),
    }


def _np_tree(t):
    return {k: np.array(v) for k, v in tree_flatten(t)}


def test_average_gradients_on_one_process_is_the_tree():
    g = _grads()
    assert nnx.average_gradients(g) is g
    assert nnx.utils.average_gradients(g, nx.distributed.init(), 0) is g
    mx, nn = _mlx()
    mg = {"a": mx.ones(3)}
    assert nn.average_gradients(mg) is mg


@pytest.mark.parametrize("limit", [0, -1, 1, 20, 24, 25, 64, 1 << 20])
def test_bucketed_reduction_keeps_values_and_structure(limit):
    g = _grads()
    calls = []

    def reduce(x):
        calls.append(x.shape)
        return nx.distributed.all_sum(x) / nx.distributed.init().size()

    out = _reduce_in_buckets(g, reduce, limit)
    assert isinstance(out["b"], list) and set(out) == set(g)
    _same_flat(_np_tree(out), _np_tree(g))
    nbytes = [x.nbytes for _, x in tree_flatten(g)]
    if limit <= 0:
        assert len(calls) == len(nbytes)
    else:
        runs = _buckets(nbytes, limit)
        assert [c[0] for c in calls] == [sum(nbytes[i] for i in r) // 4 for r in runs]


def test_bucketed_reduction_mixed_dtypes_goes_array_by_array():
    g = {"a": nx.ones((3,)), "b": nx.ones((2,), nx.float16)}
    calls = []
    out = _reduce_in_buckets(g, lambda x: calls.append(x.dtype) or x * 2, 1 << 20)
    assert calls == [nx.float32, nx.float16]
    np.testing.assert_array_equal(np.array(out["b"]), [2.0, 2.0])


@pytest.mark.parametrize(
    "nbytes,limit",
    [([24, 20, 4, 32], 24), ([24, 20, 4, 32], 25), ([8] * 7, 16), ([100], 1), ([1, 2, 3], 100)],
)
def test_buckets_as_mlx_groups(nbytes, limit):
    # NumPy-free reference: close a run when its running total reaches the limit.
    runs, run, total = [], [], 0
    for i, b in enumerate(nbytes):
        run, total = run + [i], total + b
        if total >= limit:
            runs, run, total = runs + [run], [], 0
    assert _buckets(nbytes, limit) == runs + ([run] if run else [])
    pytest.importorskip("mlx.nn")
    from mlx.nn.utils import _group_by_size

    keys = [str(i) for i in range(len(nbytes))]
    assert _buckets(nbytes, limit) == _group_by_size(keys, nbytes, 1, limit)


@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_sharded(max_norm):
    g = _grads()
    clipped, norm = nnx.utils.clip_grad_norm_sharded(g, max_norm)
    flat = _np_tree(g)
    want_norm = np.sqrt(sum((v.astype(np.float64) ** 2).sum() for v in flat.values()))
    np.testing.assert_allclose(float(norm), want_norm, rtol=1e-6)
    scale = min(max_norm / (want_norm + 1e-6), 1.0)
    for k, v in _np_tree(clipped).items():
        np.testing.assert_allclose(v, flat[k] * scale, rtol=1e-6)
    mx, nn = _mlx()
    from mlx.utils import tree_flatten as mlx_flatten
    from mlx.utils import tree_unflatten as mlx_unflatten

    mg = mlx_unflatten([(k, mx.array(v)) for k, v in flat.items()])
    mclipped, mnorm = nn.utils.clip_grad_norm_sharded(mg, max_norm)
    np.testing.assert_allclose(float(norm), float(mnorm), rtol=1e-6)
    for k, v in mlx_flatten(mclipped):
        np.testing.assert_allclose(_np_tree(clipped)[k], np.array(v), rtol=1e-6)


# -- the code paths of groups larger than one process, simulated -----------------------------


@pytest.fixture
def two_twins(monkeypatch):
    """Collectives of a group of two processes that hold the same arrays (twins): all_gather
    stacks two copies, all_sum doubles, sum_scatter doubles and keeps this rank's half. Enough to
    run the size-2 code paths in one process with known answers."""
    dist = dx.distributed
    rank = 1

    def sum_scatter(x, group=None, stream=None):
        half = x.shape[0] // 2
        return 2 * x[rank * half : (rank + 1) * half]

    monkeypatch.setattr(
        dist, "all_gather", lambda x, group=None, stream=None: nx.concatenate([x, x])
    )
    monkeypatch.setattr(dist, "all_sum", lambda x, group=None, stream=None: 2 * x)
    monkeypatch.setattr(dist, "sum_scatter", sum_scatter)
    return StandIn(2, rank)


def test_fully_sharded_module_of_two_processes(two_twins):
    # Whole parameters made of two equal halves along axis 0, so both processes' shards agree.
    net = Net()
    halves = {k: v[: v.shape[0] // 2] for k, v in _flat(net).items()}
    net.update(model_params({k: np.concatenate([v, v]) for k, v in halves.items()}))
    ids = nx.array([[0, 5, 2], [3, 3, 1]])
    loss = lambda m: lambda ids: (m(ids) ** 2).sum()  # noqa: E731
    want = np.array(net(ids))
    _, g = nnx.value_and_grad(net, loss(net))(ids)
    wrapped = dx.FullyShardedModule(net, group=two_twins)
    _same_flat(_flat(wrapped), {f"module.{k}": v for k, v in halves.items()})
    np.testing.assert_array_equal(np.array(wrapped(ids)), want)
    _, got = nnx.value_and_grad(wrapped, loss(wrapped))(ids)
    # Each shard's gradient: the mean over the two processes of the whole gradient's part of
    # this rank (rank 1: the second half along axis 0).
    want_g = {f"module.{k}": np.array(v)[v.shape[0] // 2 :] for k, v in tree_flatten(g)}
    got_g = {k: np.array(v) for k, v in tree_flatten(got)}
    assert got_g.keys() == want_g.keys()
    for k in want_g:
        np.testing.assert_allclose(got_g[k], want_g[k], rtol=1e-6, atol=1e-6, err_msg=k)


def test_sharded_linears_of_two_processes(two_twins):
    x = nx.random.normal((3, 8))
    lin = dx.AllToShardedLinear(8, 6, group=two_twins)
    gx = nx.grad(lambda x: lin(x).sum())(x)
    alone = nx.grad(lambda x: nx.addmm(lin.bias, x, lin.weight.T).sum())(x)
    np.testing.assert_allclose(np.array(gx), 2 * np.array(alone), rtol=1e-6)  # summed over 2
    lin = dx.ShardedToAllLinear(16, 6, group=two_twins)
    want = 2 * (np.array(x) @ np.array(lin.weight).T) + np.array(lin.bias)  # bias added once
    np.testing.assert_allclose(np.array(lin(x)), want, rtol=1e-5, atol=1e-6)


def test_average_gradients_of_two_processes(two_twins):
    g = _grads()
    for limit in (0, 24, 1 << 20):
        out = nnx.average_gradients(g, group=two_twins, all_reduce_size=limit)
        _same_flat(_np_tree(out), _np_tree(g))  # the mean of two equal trees
    norm = nnx.utils.clip_grad_norm_sharded(g, 1e9, group=two_twins)[1]
    want = np.sqrt(2 * sum((v.astype(np.float64) ** 2).sum() for v in _np_tree(g).values()))
    np.testing.assert_allclose(float(norm), want, rtol=1e-6)
