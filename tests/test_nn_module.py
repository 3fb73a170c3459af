"""nuvec.nn.Module and the basic layers against mlx.nn: the same snippet runs on both frameworks
(each builds its own model; weights are copied from the nuvec one), and the results must match."""

import numpy as np
import pytest

import nuvec as nx
import nuvec.nn as nnx
from nuvec.utils import tree_flatten, tree_unflatten


def _mlx():
    return pytest.importorskip("mlx.core"), pytest.importorskip("mlx.nn")


def _model(mx, nn):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.extra = {"scale": mx.ones((3,)), "_hidden": mx.zeros((1,))}
            self.stack = [nn.Linear(3, 3, bias=False), nn.Identity()]
            self.name = "block"  # not an array: an ordinary attribute
            self._private = mx.zeros((2,))  # underscore: state, not a parameter

        def __call__(self, x):
            x = self.lin(x) * self.extra["scale"]
            for layer in self.stack:
                x = layer(x)
            return x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = [Block(), Block()]
            self.head = nn.Sequential(nn.Linear(4 - 1, 2), nn.Identity())
            self.emb = nn.Embedding(5, 4)

        def __call__(self, ids):
            x = self.emb(ids)
            x = self.blocks[0](x)
            return self.head(x)

    return Net()


def _paths(tree):
    return [k for k, _ in tree_flatten(tree)] if tree is not None else None


def _unflat(mx_mod, flat):
    return tree_unflatten([(k, mx_mod.array(np.asarray(v))) for k, v in flat])


def test_parameter_paths_match_mlx():
    mx, nn = _mlx()
    a, b = _model(nx, nnx), _model(mx, nn)
    for method in ("parameters", "trainable_parameters"):
        pa = tree_flatten(getattr(a, method)())
        pb = tree_flatten(getattr(b, method)())
        assert [k for k, _ in pa] == [k for k, _ in pb]
        assert [tuple(v.shape) for _, v in pa] == [tuple(v.shape) for _, v in pb]
    flat = dict(tree_flatten(a.parameters()))
    assert "blocks.0._private" not in flat and "blocks.0.extra._hidden" in flat  # MLX's rule
    assert a.blocks[0].name == "block" and "name" not in a.blocks[0]


def test_module_walks_match_mlx():
    mx, nn = _mlx()
    a, b = _model(nx, nnx), _model(mx, nn)
    assert [k for k, _ in a.named_modules()] == [k for k, _ in b.named_modules()]
    assert [type(m).__name__ for m in a.modules()] == [type(m).__name__ for m in b.modules()]
    leaf = lambda m: [
        k for k, _ in tree_flatten(m.leaf_modules(), is_leaf=lambda v: hasattr(v, "parameters"))
    ]
    assert leaf(a) == leaf(b)
    kids = lambda m: [
        k for k, _ in tree_flatten(m.children(), is_leaf=lambda v: hasattr(v, "parameters"))
    ]
    assert kids(a) == kids(b)
    assert repr(a.head) == repr(b.head)
    assert repr(a.blocks[0]).replace("nuvec", "mlx") == repr(b.blocks[0])


@pytest.mark.parametrize(
    "how",
    [
        dict(),
        dict(keys="bias"),
        dict(keys=["weight"], recurse=True),
        dict(recurse=False),
        dict(keys="extra", strict=True),
    ],
)
def test_freeze_unfreeze_match_mlx(how):
    mx, nn = _mlx()
    a, b = _model(nx, nnx), _model(mx, nn)
    a.freeze(**how)
    b.freeze(**how)
    assert _paths(a.trainable_parameters()) == _paths(b.trainable_parameters())
    a.unfreeze(keys="weight")
    b.unfreeze(keys="weight")
    assert _paths(a.trainable_parameters()) == _paths(b.trainable_parameters())
    a.unfreeze()
    b.unfreeze()
    assert _paths(a.trainable_parameters()) == _paths(a.parameters())


def test_freeze_strict_unknown_key():
    mx, nn = _mlx()
    for m in (_model(nx, nnx), _model(mx, nn)):
        with pytest.raises(KeyError):
            m.freeze(keys="nonexistent", strict=True)
        with pytest.raises(KeyError):
            m.head.freeze(keys="bias", strict=True, recurse=False)
        m.freeze(keys="nonexistent")  # not strict: no error


@pytest.mark.parametrize(
    "bad, error",
    [
        ({"nope": 1}, ValueError),
        ({"head": {"layers": [{"weight": 3}]}}, ValueError),
        ({"blocks": [{}, {}, {}]}, ValueError),
        ([1], KeyError),
    ],
)
def test_update_strict_errors_match_mlx(bad, error):
    mx, nn = _mlx()
    for m in (_model(nx, nnx), _model(mx, nn)):
        with pytest.raises(error):
            m.update(bad)
        m.update(bad if isinstance(bad, dict) else {}, strict=False)


def test_update_and_update_modules():
    m = _model(nx, nnx)
    w = nx.full((2, 3), 7.0)
    m.update({"head": {"layers": [{"weight": w}]}})
    assert m.head.layers[0].weight is w
    new = nnx.Linear(3, 2, bias=False)
    m.update_modules({"head": {"layers": [new]}})
    assert m.head.layers[0] is new
    with pytest.raises(ValueError):
        m.update_modules({"nothing": new})
    with pytest.raises(ValueError):
        m.update_modules({"blocks": [{"lin": 3}]})


def test_apply_and_set_dtype_match_mlx():
    mx, nn = _mlx()
    a, b = _model(nx, nnx), _model(mx, nn)
    for m, dt in ((a, nx.float16), (b, mx.float16)):
        m.set_dtype(dt)
        m.update({"emb": {"weight": m.emb.weight.astype(dt)}})
    assert {str(v.dtype).split(".")[-1] for _, v in tree_flatten(a.parameters())} == {"float16"}
    a.apply(lambda x: x * 0 + 1, lambda mod, k, v: k == "bias" or isinstance(v, (nnx.Module, list)))
    assert all(float(v.min()) == 1 for k, v in tree_flatten(a.parameters()) if k.endswith("bias"))
    i = nnx.Embedding(3, 2)
    i.update({"weight": nx.zeros((3, 2), nx.int32)})
    i.set_dtype(nx.float16)  # integers are kept by the default predicate
    assert i.weight.dtype == nx.int32
    i.set_dtype(nx.float16, predicate=None)
    assert i.weight.dtype == nx.float16


def test_train_eval():
    m = _model(nx, nnx)
    assert all(x.training for x in m.modules())
    m.eval()
    assert not any(x.training for x in m.modules())
    m.train()
    assert m.blocks[1].stack[0].training


def test_setattr_semantics_match_mlx():
    mx, nn = _mlx()
    for mod, m in ((nx, nnx.Module()), (mx, nn.Module())):
        m.x = 3
        m.x = mod.ones((2,))
        assert "x" in m and isinstance(m.x, mod.array)
        m.x = 4
        assert "x" not in m and m.x == 4
        m.y = [mod.ones((1,))]
        del m.y
        assert "y" not in m
        with pytest.raises(AttributeError):
            _ = m.missing


@pytest.mark.parametrize("ext", ["npz", "safetensors"])
def test_save_load_roundtrip_and_mlx_checkpoint(tmp_path, ext):
    mx, nn = _mlx()
    a = _model(nx, nnx)
    f = str(tmp_path / f"w.{ext}")
    a.save_weights(f)
    b = _model(mx, nn)
    b.load_weights(f)  # a nuvec checkpoint loads into the MLX model ...
    g = str(tmp_path / f"m.{ext}")
    b2 = _model(mx, nn)
    b2.save_weights(g)
    c = _model(nx, nnx)
    c.load_weights(g)  # ... and an MLX checkpoint into the nuvec model, same outputs
    ids = [[0, 4, 2], [1, 1, 3]]
    np.testing.assert_allclose(
        np.asarray(c(nx.array(ids))), np.asarray(b2(mx.array(ids))), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(b(mx.array(ids))), np.asarray(a(nx.array(ids))), rtol=1e-6, atol=1e-6
    )


def test_load_weights_lists_every_problem_and_changes_nothing():
    m = nnx.Sequential(nnx.Linear(2, 3), nnx.Linear(3, 1))
    before = {k: np.asarray(v) for k, v in tree_flatten(m.parameters())}
    bad = [
        ("layers.0.weight", nx.zeros((3, 2))),  # fine
        ("layers.0.bias", nx.zeros((4,))),  # mis-shaped
        ("layers.1.weight", 5),  # not an array
        ("layers.7.weight", nx.zeros((1,))),  # unexpected
    ]  # layers.1.bias missing
    with pytest.raises(ValueError) as e:
        m.load_weights(bad)
    text = str(e.value)
    for piece in (
        "layers.0.bias",
        "layers.1.weight",
        "layers.7.weight",
        "layers.1.bias",
        "Missing 1",
        "not in model",
    ):
        assert piece in text
    for k, v in tree_flatten(m.parameters()):
        np.testing.assert_array_equal(np.asarray(v), before[k])
    m.load_weights(bad[:1], strict=False)
    assert float(m.layers[0].weight.sum()) == 0
    with pytest.raises(ValueError):
        m.save_weights("weights.bin")


def test_layers_match_mlx_with_copied_weights():
    mx, nn = _mlx()
    rng = np.random.default_rng(0)
    cases = [
        (lambda n: n.Linear(5, 3), [rng.standard_normal((2, 4, 5))]),
        (lambda n: n.Linear(5, 3, bias=False), [rng.standard_normal((5,))]),
        (lambda n: n.Bilinear(4, 3, 2), [rng.standard_normal((6, 4)), rng.standard_normal((6, 3))]),
        (
            lambda n: n.Bilinear(4, 3, 2, bias=False),
            [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 3))],
        ),
        (lambda n: n.Identity(1, k=2), [rng.standard_normal((3,))]),
        (lambda n: n.Sequential(n.Linear(3, 4), n.Linear(4, 2)), [rng.standard_normal((7, 3))]),
    ]
    for make, inputs in cases:
        a, b = make(nnx), make(nn)
        assert _paths(a.parameters()) == _paths(b.parameters())
        b.update(_unflat(mx, tree_flatten(a.parameters())))
        xa = [nx.array(v.astype(np.float32)) for v in inputs]
        xb = [mx.array(v.astype(np.float32)) for v in inputs]
        np.testing.assert_allclose(np.asarray(a(*xa)), np.asarray(b(*xb)), rtol=1e-5, atol=1e-6)
        assert repr(a) == repr(b)


def test_linear_bilinear_against_numpy():
    rng = np.random.default_rng(1)
    lin = nnx.Linear(4, 3)
    x = rng.standard_normal((5, 4))
    w, bias = np.asarray(lin.weight, np.float64), np.asarray(lin.bias, np.float64)
    np.testing.assert_allclose(
        np.asarray(lin(nx.array(x.astype(np.float32)))), x @ w.T + bias, rtol=1e-5, atol=1e-5
    )
    bl = nnx.Bilinear(4, 2, 3)
    x1, x2 = rng.standard_normal((6, 4)), rng.standard_normal((6, 2))
    W = np.asarray(bl.weight, np.float64)
    ref = np.einsum("ni,oji,nj->no", x1, W, x2) + np.asarray(bl.bias, np.float64)
    got = bl(nx.array(x1.astype(np.float32)), nx.array(x2.astype(np.float32)))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-5)
    assert float(abs(lin.weight).max()) <= 0.5 and float(abs(bl.weight).max()) <= 0.5


def test_embedding_and_as_linear():
    e = nnx.Embedding(6, 3)
    ids = nx.array([[5, 0], [2, 2]])
    W = np.asarray(e.weight)
    np.testing.assert_array_equal(np.asarray(e(ids)), W[np.asarray(ids)])
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(np.asarray(e.as_linear(nx.array(x))), x @ W.T, rtol=1e-6)
    big = nnx.Embedding(2000, 16)
    assert abs(float(nx.std(big.weight)) - 0.25) < 0.01


def test_random_init_is_mlx_bits():
    mx, nn = _mlx()
    for make in (
        lambda n: n.Linear(7, 5),
        lambda n: n.Embedding(4, 3),
        lambda n: n.Bilinear(2, 3, 4),
    ):
        nx.random.seed(3)
        mx.random.seed(3)
        a, b = make(nnx), make(nn)
        for (ka, va), (kb, vb) in zip(tree_flatten(a.parameters()), tree_flatten(b.parameters())):
            assert ka == kb
            np.testing.assert_array_equal(np.asarray(va), np.asarray(vb))


def test_layer_errors_name_layer_and_line():
    lin = nnx.Linear(4, 2)
    with pytest.raises(nx.OpError) as e:
        lin(nx.ones((3, 5)))
    assert "Linear" in str(e.value) and e.value.filename == __file__
    with pytest.raises(nx.OpError, match="Bilinear"):
        nnx.Bilinear(2, 3, 1)(nx.ones((1, 2)), nx.ones((1, 2)))


def _loss(model, ids, t):
    return ((model(ids) - t) ** 2).mean()


def test_value_and_grad_matches_mlx_and_respects_freeze():
    mx, nn = _mlx()
    a, b = _model(nx, nnx), _model(mx, nn)
    b.update(_unflat(mx, tree_flatten(a.parameters())))
    ids, t = [[0, 1, 4]], np.linspace(-1, 1, 6, dtype=np.float32).reshape(1, 3, 2)
    for m in (a, b):
        m.freeze(keys="bias")
    la, ga = nnx.value_and_grad(a, _loss)(a, nx.array(ids), nx.array(t))
    lb, gb = nn.value_and_grad(b, _loss)(b, mx.array(ids), mx.array(t))
    np.testing.assert_allclose(float(la), float(lb), rtol=1e-6)
    fa, fb = tree_flatten(ga), tree_flatten(gb)
    assert [k for k, _ in fa] == [k for k, _ in fb] and not any(k.endswith("bias") for k, _ in fa)
    for (k, va), (_, vb) in zip(fa, fb):
        np.testing.assert_allclose(np.asarray(va), np.asarray(vb), rtol=1e-5, atol=1e-6, err_msg=k)
    # the model keeps usable parameters after the transform
    np.testing.assert_allclose(
        np.asarray(a(nx.array(ids))), np.asarray(b(mx.array(ids))), rtol=1e-6, atol=1e-6
    )


def test_value_and_grad_against_finite_differences():
    m = nnx.Sequential(nnx.Linear(3, 4), nnx.Linear(4, 1))
    x = nx.array(np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32))
    loss = lambda model, x: (model(x) ** 2).sum()
    _, g = nnx.value_and_grad(m, loss)(m, x)
    w = m.layers[0].weight
    base = np.asarray(w, np.float64)
    for idx in [(0, 0), (3, 2), (1, 1)]:
        eps = 1e-2
        vals = []
        for s in (1, -1):
            p = base.copy()
            p[idx] += s * eps
            m.layers[0].weight = nx.array(p.astype(np.float32))
            vals.append(float(loss(m, x)))
        m.layers[0].weight = w
        fd = (vals[0] - vals[1]) / (2 * eps)
        assert abs(fd - float(g["layers"][0]["weight"][idx])) < 2e-2 * max(1, abs(fd))


def test_checkpoint_matches_plain_gradient():
    m = nnx.Sequential(nnx.Linear(3, 4), nnx.Linear(4, 2))
    x = nx.array(np.ones((2, 3), np.float32))
    ck = nnx.checkpoint(m)
    g1 = nx.grad(lambda x: ck(x).sum())(x)
    g2 = nx.grad(lambda x: m(x).sum())(x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-6)


def test_parameters_through_save_tree_and_load_into(tmp_path):
    a, b = _model(nx, nnx), _model(nx, nnx)
    f = str(tmp_path / "tree.safetensors")
    nx.save_tree(f, a.parameters())
    b.update(nx.load_into(b.parameters(), f))
    for (ka, va), (kb, vb) in zip(tree_flatten(a.parameters()), tree_flatten(b.parameters())):
        assert ka == kb
        np.testing.assert_array_equal(np.asarray(va), np.asarray(vb))
    assert set(nx.load(f)) == {k for k, _ in tree_flatten(a.parameters())}


def test_linear_weight_gradient_is_row_major_and_exact():
    """The gradient of x @ w.T with respect to w (computed as (g^T x)^T so that it comes back in
    w's own row-major layout): the same bits as through a contiguous copy of w.T."""
    rng = np.random.default_rng(4)
    x = nx.array(rng.standard_normal((6, 3)).astype(np.float32))
    w = nx.array(rng.standard_normal((4, 3)).astype(np.float32))
    g = nx.grad(lambda w: nx.sin(x @ w.T).sum())(w)
    ref = nx.grad(lambda w: nx.sin(x @ nx.contiguous(w.T)).sum())(w)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(ref))
    xn, wn = np.asarray(x, np.float64), np.asarray(w, np.float64)
    np.testing.assert_allclose(np.asarray(g), (np.cos(xn @ wn.T)).T @ xn, rtol=1e-5, atol=1e-6)
