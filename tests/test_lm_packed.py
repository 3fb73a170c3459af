"""Packed float weights (nuvec.lm.models.packed): a float model's matrices laid out in one buffer
per dtype, each layer holding a view of its part, with the same logits bit for bit and no second
copy left behind."""

import gc

import numpy as np
import pytest

import nuvec as mx
from lm_arch_models import tiny
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.models.fused import fuse_projections
from nuvec.lm.models.packed import _slots, pack_weights

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


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_packed_weights_are_views_of_one_buffer_with_the_same_logits(name):
    model = tiny(name)
    fuse_projections(model)
    prompt = [1, 5, 9, 2, 7]
    before = _logits(model, prompt, 3)
    count = len(_slots(model))
    matrices = sum(w.nbytes for w, _ in _slots(model))
    gc.collect()
    mx.clear_cache()
    active = mx.get_active_memory()
    assert pack_weights(model) == matrices
    gc.collect()
    mx.clear_cache()
    # The old matrices went (a second copy would add `matrices`; blocks round up a little).
    assert mx.get_active_memory() - active < matrices // 16
    packed = [w for w, _ in _slots(model)]
    assert len(packed) == count
    for w, nxt in zip(packed, packed[1:]):  # one run of memory, part after part
        assert _address(nxt) == _address(w) + w.nbytes
    groups = [g for m in model.modules() for g in vars(m).get("fused", {}).values()]
    assert groups and all(g.usable(mx.zeros((1, 1, g.layers[0].weight.shape[1]))) for g in groups)
    for a, b in zip(before, _logits(model, prompt, 3)):
        np.testing.assert_array_equal(a, b)


def test_one_buffer_per_dtype_and_quantized_layers_left_alone():
    import nuvec.nn as nn

    model = tiny("llama")
    nn.quantize(model.layers[1], group_size=32, bits=4)
    model.layers[0].mlp.down_proj.weight = model.layers[0].mlp.down_proj.weight.astype(mx.float16)
    mx.eval(model.parameters())
    fuse_projections(model)
    prompt = [3, 1, 4, 1, 5]
    before = _logits(model, prompt, 2)
    halves = [w for w, _ in _slots(model) if w.dtype == mx.float16]
    assert len(halves) == 1
    pack_weights(model)
    floats = [w for w, _ in _slots(model) if w.dtype == mx.float32]
    for w, nxt in zip(floats, floats[1:]):
        assert _address(nxt) == _address(w) + w.nbytes
    assert model.layers[0].mlp.down_proj.weight.dtype == mx.float16
    assert isinstance(model.layers[1].mlp.down_proj, nn.QuantizedLinear)
    for a, b in zip(before, _logits(model, prompt, 2)):
        np.testing.assert_array_equal(a, b)
