"""Float weights laid out in one buffer (nuvec's own).

A decode step streams every weight of the model from memory once. The weights of a float model
made by ``dequantize_model`` came from one allocation each, and the allocator asks for huge pages
only for whole 2 MiB spans of a block: SmolLM2's 1.3 MiB output projections and the tails of its
other projections sat on 4 KiB pages, where the hardware prefetchers stop at every page boundary.
``pack_weights`` copies the float matrices of a model's linear layers and embeddings (and of
their fused groups, ``fused.py``) into one buffer per dtype and gives each layer a view of its
part (no other copy: the layers keep their names and arithmetic, the same bits): SmolLM2's float32
decode step ran 2% faster (docs/lm.md, "Packed float weights").

Packing holds the old weights and the new buffer at once: the float matrices' bytes twice.
"""

from __future__ import annotations

from typing import Any

from ... import _core as mx
from ..._dtypes import floating, issubdtype
from ...nn.layers.embedding import Embedding
from ...nn.layers.linear import Linear

__all__ = ["pack_weights"]


def _slots(model: Any) -> list:
    """(matrix, setter) of every float matrix to pack: each float fused group's weight, and the
    weight of every ``Linear`` / ``Embedding`` outside such a group."""
    slots, grouped = [], set()
    for m in model.modules():
        for group in vars(m).get("fused", {}).values():
            if "scales" not in group.fused:
                slots.append((group.fused["weight"], group.rebase))
                grouped.update(id(layer) for layer in group.layers)
    for m in model.modules():
        if type(m) in (Linear, Embedding) and id(m) not in grouped:
            slots.append((m.weight, lambda v, m=m: setattr(m, "weight", v)))
    return [(w, set_) for w, set_ in slots if w.ndim == 2 and issubdtype(w.dtype, floating)]


def pack_weights(model: Any) -> int:
    """Lays the float matrices of ``model``'s linear layers, embeddings and fused groups out in one
    buffer per dtype, each layer holding a view of its part; returns the bytes packed."""
    by_dtype: dict = {}
    for w, set_ in _slots(model):
        by_dtype.setdefault(w.dtype, []).append((w, set_))
    packed = 0
    for slots in by_dtype.values():
        buffer = mx.concatenate([w.reshape(-1) for w, _ in slots])
        mx.eval(buffer)
        start = 0
        for w, set_ in slots:
            set_(buffer[start : start + w.size].reshape(w.shape))
            start += w.size
        packed += buffer.nbytes
    mx.eval(model.parameters())
    return packed
