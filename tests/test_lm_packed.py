"""Packed float weights (nuvec.lm.models.packed): a float model's matrices laid out in one buffer
per dtype, each layer holding a view of its part and each fused group a view of its members' run,
with the same logits bit for bit and no second copy left behind."""

import gc

import numpy as np
import pytest

import nuvec as mx
import nuvec.nn as nn
from lm_arch_models import tiny
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.models.fused import fuse_projections
from nuvec.lm.models.packed import pack_weights

pytestmark = pytest.mark.nuvec_only


def _address(a):
    return np.asarray(memoryview(a)).__array_interface__["data"][0]


def _logits(model, prompt, steps):
    cache = make_prompt_cache(model)
    out = [model(mx.array([prompt]), cache=cache)]
    for _ in range(steps):
        out.append(model(mx.argmax(out[-1][:, -1, :], axis=-1)[None], cache=cache))
    mx.eval(out)
    return [np.array(o) for o in out]


def _matrices(model, dtype=None):
    """The float matrices of the model's Linear and Embedding layers, in module order."""
    return [
        m.weight
        for m in model.modules()
        if type(m) in (nn.Linear, nn.Embedding)
        and m.weight.ndim == 2
        and (dtype is None or m.weight.dtype == dtype)
    ]


def _groups(model):
    return [g for m in model.modules() for g in vars(m).get("fused", {}).values()]


def _one_run(arrays):
    """Whether the arrays lie one after another in memory, in some order."""
    spans = sorted((_address(a), a.nbytes) for a in arrays)
    return all(a + n == b for (a, n), (b, _) in zip(spans, spans[1:]))


@pytest.mark.parametrize("fused_first", [False, True])
@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_packed_weights_are_views_of_one_buffer_with_the_same_logits(name, fused_first):
    model = tiny(name)
    if fused_first:  # groups made by fuse_projections are made again over the buffer
        fuse_projections(model)
    prompt = [1, 5, 9, 2, 7]
    before = _logits(model, prompt, 3)
    matrices = sum(w.nbytes for w in _matrices(model))
    gc.collect()
    mx.clear_cache()
    active = mx.get_active_memory()
    assert pack_weights(model) == matrices
    gc.collect()
    mx.clear_cache()
    # The old matrices went (a second copy would add `matrices`; blocks round up a little).
    assert mx.get_active_memory() - active < matrices // 16
    assert _one_run(_matrices(model))
    groups = _groups(model)
    assert len(groups) == 2 * len(model.layers)
    for g in groups:  # each group is its members' run, not a copy
        assert _address(g.fused["weight"]) == _address(g.layers[0].weight)
        assert g.fused["weight"].nbytes == sum(layer.weight.nbytes for layer in g.layers)
        assert g.usable(mx.zeros((1, 1, g.layers[0].weight.shape[1])))
    for a, b in zip(before, _logits(model, prompt, 3)):
        np.testing.assert_array_equal(a, b)


def test_one_buffer_per_dtype_and_quantized_layers_left_alone():
    model = tiny("llama")
    nn.quantize(model.layers[1], group_size=32, bits=4)
    model.layers[0].mlp.down_proj.weight = model.layers[0].mlp.down_proj.weight.astype(mx.float16)
    mx.eval(model.parameters())
    fuse_projections(model)
    quantized = vars(model.layers[1].self_attn)["fused"][("q_proj", "k_proj", "v_proj")]
    prompt = [3, 1, 4, 1, 5]
    before = _logits(model, prompt, 2)
    pack_weights(model)
    assert _one_run(_matrices(model, mx.float32))
    assert len(_matrices(model, mx.float16)) == 1
    assert isinstance(model.layers[1].mlp.down_proj, nn.QuantizedLinear)
    assert vars(model.layers[1].self_attn)["fused"][("q_proj", "k_proj", "v_proj")] is quantized
    for a, b in zip(before, _logits(model, prompt, 2)):
        np.testing.assert_array_equal(a, b)


def test_tied_weights_stay_tied():
    model = tiny("llama")
    model.lm_head.weight = model.model.embed_tokens.weight  # one matrix, two layers
    mx.eval(model.parameters())
    prompt = [2, 7, 1, 8]
    before = _logits(model, prompt, 2)
    unique = {id(w): w for w in _matrices(model)}.values()
    assert pack_weights(model) == sum(w.nbytes for w in unique)
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert _one_run(list({id(w): w for w in _matrices(model)}.values()))
    for a, b in zip(before, _logits(model, prompt, 2)):
        np.testing.assert_array_equal(a, b)
