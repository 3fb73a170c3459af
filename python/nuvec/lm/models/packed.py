"""Float weights laid out in one buffer (nuvec's own).

A decode step streams every weight of the model from memory once. The weights of a float model
made by ``dequantize_model`` came from one allocation each, and the allocator asks for huge pages
only for whole 2 MiB spans of a block: SmolLM2's 1.3 MiB output projections and the tails of its
other projections sat on 4 KiB pages, where the hardware prefetchers stop at every page boundary.
``pack_weights`` copies the float matrices of a model's linear layers and embeddings into one
buffer per dtype and gives each layer a view of its part (no other copy: the layers keep their
names and arithmetic, the same bits), a fused group's members one after another, so that the
group (``fused.py``) is a view of their run instead of a concatenated copy: SmolLM2's float32
decode step ran 2% faster (docs/lm.md, "Packed float weights").

Packing holds the old weights and the new buffer at once: the float matrices' bytes twice.
"""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ..._dtypes import floating, issubdtype
from ...nn.layers.embedding import Embedding
from ...nn.layers.linear import Linear
from .fused import GROUPS, FusedProjections, groupable

__all__ = ["pack_weights"]


def _is_matrix(w: Any) -> bool:
    return w.ndim == 2 and issubdtype(w.dtype, floating)


def _order(model: Any) -> tuple[list, list]:
    """The layers whose weights to pack, each float group's members one after another, and the
    groups as (module, names, first layer's index)."""
    layers, groups, seen = [], [], set()
    for m in model.modules():
        for names in GROUPS:
            members = [m.get(n) for n in names]
            if groupable(members) and type(members[0]) is Linear and _is_matrix(members[0].weight):
                groups.append((m, names, len(layers)))
                layers += members
                seen.update(id(x) for x in members)
    for m in model.modules():
        if type(m) in (Linear, Embedding) and id(m) not in seen and _is_matrix(m.weight):
            layers.append(m)
            seen.add(id(m))
    return layers, groups


def pack_weights(model: Any) -> int:
    """Lays the float matrices of ``model``'s linear layers and embeddings out in one buffer per
    dtype, each layer holding a view of its part, and fuses the float q/k/v and gate/up groups
    (``fused.py``) as views of their members' run; returns the bytes packed."""
    for m in model.modules():  # float groups held the old weights: made again below
        fused = vars(m).get("fused", {})
        for names in [n for n, g in fused.items() if "scales" not in g.fused]:
            del fused[names]
    layers, groups = _order(model)
    # Each matrix once, however many layers hold it (tied weights stay tied).
    matrices = list({id(layer.weight): layer.weight for layer in layers}.values())
    by_dtype: dict = {}
    for w in matrices:
        by_dtype.setdefault(w.dtype, []).append(w)
    at, views, packed = {}, {}, 0  # by an old matrix's id: (its buffer, its part's start), its view
    for ws in by_dtype.values():
        buffer = mx.concatenate([w.reshape(-1) for w in ws])
        mx.eval(buffer)
        start = 0
        for w in ws:
            at[id(w)] = (buffer, start)
            views[id(w)] = buffer[start : start + w.size].reshape(w.shape)
            start += w.size
        packed += buffer.nbytes
    firsts = [at[id(layers[first].weight)] for _, _, first in groups]
    for layer in layers:
        layer.weight = views[id(layer.weight)]
    for (module, names, _), (buffer, start) in zip(groups, firsts):
        rows = sum(module[n].weight.shape[0] for n in names)
        cols = module[names[0]].weight.shape[1]
        span = buffer[start : start + rows * cols].reshape(rows, cols)
        vars(module).setdefault("fused", {})[names] = FusedProjections(module, names, weight=span)
    mx.eval(model.parameters())
    return packed
