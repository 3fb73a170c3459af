"""nn.QuantizedLinear, nn.QuantizedEmbedding, Linear/Embedding.to_quantized and nn.quantize as
mlx.nn 0.32.4's: parameters, frozen packed weights, trainable parameters, state keys, reprs, the
class_predicate forms, and differential checks against mlx.nn with copied weights (quantized
weights bit-exact, outputs within rounding)."""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng

if IS_MLX:
    import mlx.nn as nn
    from mlx.utils import tree_flatten
else:
    import nuvec.nn as nn
    from nuvec.utils import tree_flatten


def keys(tree):
    return sorted(k for k, _ in tree_flatten(tree))


def bits_of(x):
    return np.array(x.view(mx.uint16) if x.dtype in (mx.float16, mx.bfloat16) else x).tobytes()


def test_quantized_linear_parameters():
    q = nn.QuantizedLinear(64, 8)
    assert keys(q.parameters()) == ["bias", "biases", "scales", "weight"]
    assert keys(q.trainable_parameters()) == []
    assert q.weight.dtype == mx.uint32 and q.weight.shape == (8, 8)
    assert q.scales.shape == (8, 1) and q.biases.shape == (8, 1)
    assert (q.group_size, q.bits, q.mode) == (64, 4, "affine")
    assert (
        repr(q)
        == "QuantizedLinear(input_dims=64, output_dims=8, bias=True, group_size=64, bits=4, mode=affine)"
    )
    q = nn.QuantizedLinear(128, 4, bias=False, group_size=32, bits=8)
    assert keys(q.parameters()) == ["biases", "scales", "weight"] and q.weight.shape == (4, 32)
    q.unfreeze()
    assert keys(q.trainable_parameters()) == ["biases", "scales", "weight"]


def test_from_linear_keeps_the_bias_trainable():
    lin = nn.Linear(64, 8)
    q = nn.QuantizedLinear.from_linear(lin, bits=8)
    assert keys(q.parameters()) == ["bias", "biases", "scales", "weight"]
    assert keys(q.trainable_parameters()) == ["bias"]  # set after the layer froze, as MLX does
    assert q.bias is lin.bias
    assert isinstance(lin.to_quantized(group_size=32), nn.QuantizedLinear)
    assert keys(nn.QuantizedLinear.from_linear(nn.Linear(64, 8, bias=False)).parameters()) == [
        "biases",
        "scales",
        "weight",
    ]


def test_quantized_embedding_parameters_and_lookup():
    e = nn.QuantizedEmbedding(10, 64, group_size=32, bits=8)
    assert (
        keys(e.parameters()) == ["biases", "scales", "weight"]
        and keys(e.trainable_parameters()) == []
    )
    assert repr(e) == "QuantizedEmbedding(10, 64, group_size=32, bits=8, mode=affine)"
    assert (e.num_embeddings, e.dims) == (10, 64)
    ids = mx.array([[3, 0], [9, 3]])
    out = e(ids)
    table = mx.dequantize(e.weight, e.scales, e.biases, group_size=32, bits=8)
    assert out.shape == (2, 2, 64)
    assert bits_of(out) == bits_of(table[ids])
    emb = nn.Embedding(7, 128)
    q = emb.to_quantized(bits=4)
    assert isinstance(q, nn.QuantizedEmbedding) and q.weight.shape == (7, 16)


def test_bad_modes_and_quantized_inputs_raise():
    with pytest.raises(ValueError):
        nn.QuantizedLinear(64, 8, mode="fp3")
    with pytest.raises(ValueError):
        nn.Linear(64, 8).to_quantized(quantize_input=True)
    with pytest.raises(ValueError):
        nn.Embedding(4, 64).to_quantized(quantize_input=True)
    with pytest.raises(ValueError):
        nn.QuantizedLinear(48, 8)  # 48 is not a multiple of the group size 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 64)
        self.layers = [nn.Linear(64, 128), nn.Linear(128, 64, bias=False)]
        self.norm = nn.LayerNorm(64)
        self.head = nn.Linear(64, 32)


def test_quantize_swaps_every_layer_with_to_quantized():
    m = Model()
    nn.quantize(m, group_size=32, bits=8)
    assert isinstance(m.embed, nn.QuantizedEmbedding)
    assert all(isinstance(layer, nn.QuantizedLinear) for layer in m.layers)
    assert isinstance(m.norm, nn.LayerNorm) and isinstance(m.head, nn.QuantizedLinear)
    assert (m.head.group_size, m.head.bits) == (32, 8)
    assert keys(m.parameters()) == [
        "embed.biases",
        "embed.scales",
        "embed.weight",
        "head.bias",
        "head.biases",
        "head.scales",
        "head.weight",
        "layers.0.bias",
        "layers.0.biases",
        "layers.0.scales",
        "layers.0.weight",
        "layers.1.biases",
        "layers.1.scales",
        "layers.1.weight",
        "norm.bias",
        "norm.weight",
    ]
    assert keys(m.trainable_parameters()) == [
        "head.bias",
        "layers.0.bias",
        "norm.bias",
        "norm.weight",
    ]


def test_class_predicate_forms():
    m = Model()
    seen = []

    def predicate(path, module):
        seen.append(path)
        if path == "head":
            return {"group_size": 32, "bits": 2}
        return isinstance(module, nn.Linear) and path != "layers.1"

    nn.quantize(m, class_predicate=predicate)
    assert sorted(seen) == ["embed", "head", "layers.0", "layers.1", "norm"]
    assert isinstance(m.embed, nn.Embedding) and isinstance(m.layers[1], nn.Linear)
    assert isinstance(m.layers[0], nn.QuantizedLinear) and (
        m.layers[0].group_size,
        m.layers[0].bits,
    ) == (64, 4)
    assert (m.head.group_size, m.head.bits) == (32, 2)
    # A dict with quantize_input False drops it before to_quantized.
    m2 = Model()
    nn.quantize(
        m2,
        class_predicate=lambda p, mod: (
            {"bits": 8, "quantize_input": False} if p == "head" else False
        ),
    )
    assert isinstance(m2.head, nn.QuantizedLinear) and m2.head.bits == 8
    with pytest.raises(ValueError):  # selected, but LayerNorm has no to_quantized
        nn.quantize(Model(), class_predicate=lambda p, mod: p == "norm")
    with pytest.raises(ValueError):  # neither a bool nor a dict
        nn.quantize(Model(), class_predicate=lambda p, mod: 1 if p == "head" else False)


# ----------------------------------------------------------------------------- against mlx.nn
@pytest.mark.parametrize("group_size,bits", [(32, 2), (64, 4), (128, 8), (64, 3), (32, 6), (64, 5)])
def test_same_quantized_weights_as_mlx(group_size, bits):
    if IS_MLX:
        pytest.skip("compares nuvec with MLX")
    mlx = pytest.importorskip("mlx.core")
    mnn = pytest.importorskip("mlx.nn")
    mlx_utils = pytest.importorskip("mlx.utils")
    rng = seeded_rng("qlinear", group_size, bits)
    w = rng.standard_normal((24, 256)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    ours, theirs = nn.Linear(256, 24), mnn.Linear(256, 24)
    ours.update({"weight": mx.array(w), "bias": mx.array(b)})
    theirs.update({"weight": mlx.array(w), "bias": mlx.array(b)})
    q1 = ours.to_quantized(group_size=group_size, bits=bits)
    q2 = theirs.to_quantized(group_size=group_size, bits=bits)
    assert keys(q1.parameters()) == sorted(k for k, _ in mlx_utils.tree_flatten(q2.parameters()))
    for k in ("weight", "scales", "biases", "bias"):
        assert np.array(q1[k]).tobytes() == np.array(q2[k]).tobytes(), k
    e1, e2 = nn.Embedding(24, 256), mnn.Embedding(24, 256)
    e1.update({"weight": mx.array(w)})
    e2.update({"weight": mlx.array(w)})
    qe1, qe2 = e1.to_quantized(group_size, bits), e2.to_quantized(group_size, bits)
    ids = np.array([[0, 23, 5], [5, 5, 1]])
    for k in ("weight", "scales", "biases"):
        assert np.array(qe1[k]).tobytes() == np.array(qe2[k]).tobytes(), k
    np.testing.assert_array_equal(np.array(qe1(mx.array(ids))), np.array(qe2(mlx.array(ids))))


@pytest.mark.parametrize("group_size,bits", [(64, 4), (32, 8), (128, 2)])
def test_outputs_against_mlx(group_size, bits):
    if IS_MLX:
        pytest.skip("compares nuvec with MLX")
    mlx = pytest.importorskip("mlx.core")
    mnn = pytest.importorskip("mlx.nn")
    rng = seeded_rng("qlinear out", group_size, bits)
    w = rng.standard_normal((40, 256)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    x = rng.standard_normal((3, 5, 256)).astype(np.float32)
    ours, theirs = nn.Linear(256, 40), mnn.Linear(256, 40)
    ours.update({"weight": mx.array(w), "bias": mx.array(b)})
    theirs.update({"weight": mlx.array(w), "bias": mlx.array(b)})
    q1, q2 = ours.to_quantized(group_size, bits), theirs.to_quantized(group_size, bits)
    np.testing.assert_allclose(
        np.array(q1(mx.array(x))), np.array(q2(mlx.array(x))), rtol=1e-5, atol=1e-4
    )
    e1, e2 = nn.Embedding(40, 256), mnn.Embedding(40, 256)
    e1.update({"weight": mx.array(w)})
    e2.update({"weight": mlx.array(w)})
    qe1, qe2 = e1.to_quantized(group_size, bits), e2.to_quantized(group_size, bits)
    got, want = np.array(qe1.as_linear(mx.array(x))), np.array(qe2.as_linear(mlx.array(x)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_quantized_linear_against_dequantized_weights():
    # NumPy float64 reference: x @ dequantize(W)^T + b.
    rng = seeded_rng("qlinear ref")
    lin = nn.Linear(128, 16)
    q = lin.to_quantized(group_size=32, bits=4)
    x = rng.standard_normal((7, 128)).astype(np.float32)
    wd = np.array(mx.dequantize(q.weight, q.scales, q.biases, group_size=32, bits=4)).astype(
        np.float64
    )
    ref = x.astype(np.float64) @ wd.T + np.array(lin.bias)
    np.testing.assert_allclose(np.array(q(mx.array(x))), ref, rtol=1e-5, atol=1e-4)
    # Only the bias is trainable: gradients reach it, never the packed weights.
    loss = lambda params, xs: (q.update(params) or q)(xs).sum()  # noqa: E731
    grads = mx.grad(loss)(q.trainable_parameters(), mx.array(x))
    assert keys(grads) == ["bias"]
    np.testing.assert_allclose(np.array(grads["bias"]), np.full(16, 7.0))


def test_loads_a_quantized_mlx_checkpoint(tmp_path):
    if IS_MLX:
        pytest.skip("compares nuvec with MLX")
    mlx = pytest.importorskip("mlx.core")
    mnn = pytest.importorskip("mlx.nn")

    def model(n):
        return n.Sequential(
            n.Embedding(20, 64), n.Linear(64, 128), n.ReLU(), n.Linear(128, 64, bias=False)
        )

    theirs = model(mnn)
    mnn.quantize(theirs, group_size=32, bits=4)
    path = str(tmp_path / "q.safetensors")
    theirs.save_weights(path)
    ours = model(nn)
    nn.quantize(ours, group_size=32, bits=4)
    ours.load_weights(path)
    ids = np.array([[1, 19, 4], [0, 0, 7]])
    got, want = ours(mx.array(ids)), theirs(mlx.array(ids))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-5)
    assert (
        isinstance(ours.layers[1], nn.QuantizedLinear) and ours.layers[1].weight.dtype == mx.uint32
    )
