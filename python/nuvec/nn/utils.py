"""Transforms over a module's trainable parameters (``value_and_grad``, ``checkpoint``) and the
helpers of data-parallel training over a group of processes (``average_gradients``,
``clip_grad_norm_sharded``), as MLX's ``mlx.nn.utils``."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from .. import _core, _transforms, distributed
from .._typing import StreamLike
from ..utils import tree_flatten, tree_map, tree_reduce
from .layers.base import Module


def _over_parameters(
    model: Module, fn: Callable[..., Any], transform: Callable
) -> Callable[..., Any]:
    """``transform`` applied to ``fn`` seen as a function of ``model``'s trainable parameters
    (put into the model for the call) followed by ``fn``'s own arguments."""

    def inner(params: Any, *args: Any, **kwargs: Any) -> Any:
        model.update(params)
        return fn(*args, **kwargs)

    transformed = transform(inner)

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return transformed(model.trainable_parameters(), *args, **kwargs)

    return wrapped


def value_and_grad(model: Module, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``'s value and its gradient with respect to ``model.trainable_parameters()`` (a tree
    of the same structure), as ``value, grads = step(*args)``."""
    return _over_parameters(model, fn, _transforms.value_and_grad)


def checkpoint(module: Module, fn: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """``fn`` (default: the module itself) recomputed in the backward pass instead of keeping
    its intermediate values, with respect to the module's trainable parameters and inputs."""
    return _over_parameters(module, module if fn is None else fn, _transforms.checkpoint)


def _buckets(nbytes: list[int], limit: int) -> list[list[int]]:
    """Consecutive runs of indices; a run ends as soon as its bytes reach ``limit``."""
    runs, run, size = [], [], 0
    for i, b in enumerate(nbytes):
        run.append(i)
        size += b
        if size >= limit:
            runs.append(run)
            run, size = [], 0
    return runs + [run] if run else runs


def _reduce_in_buckets(tree: Any, reduce: Callable[[Any], Any], bucket_bytes: int) -> Any:
    """``reduce`` applied to every array of ``tree`` (the tree keeps its structure). When
    ``bucket_bytes`` > 0 and all arrays share one dtype, consecutive arrays are flattened and
    joined into buckets of at least ``bucket_bytes`` (the last may be smaller), one ``reduce``
    call per bucket: fewer, larger messages."""
    leaves = [x for _, x in tree_flatten(tree)]
    if bucket_bytes <= 0 or len({x.dtype for x in leaves}) > 1:
        return tree_map(reduce, tree)
    out = []
    for run in _buckets([x.nbytes for x in leaves], bucket_bytes):
        joined = reduce(_core.concatenate([leaves[i].reshape(-1) for i in run]))
        cuts = list(itertools.accumulate(leaves[i].size for i in run))[:-1]
        out += [p.reshape(leaves[i].shape) for p, i in zip(_core.split(joined, cuts), run)]
    results = iter(out)
    return tree_map(lambda _: next(results), tree)


def average_gradients(
    gradients: Any,
    group: distributed.Group | None = None,
    all_reduce_size: int = 32 * 1024**2,
    communication_stream: StreamLike | None = None,
) -> Any:
    """The mean of ``gradients`` (a tree of arrays, the same structure on every process) over the
    processes of ``group`` (the global group when None). Arrays are sent in buckets of about
    ``all_reduce_size`` bytes (each array alone when it is <= 0). On one process: ``gradients``
    itself."""
    group = group or distributed.init()
    n = group.size()
    if n == 1:
        return gradients

    def mean(x: Any) -> Any:
        return distributed.all_sum(x, group=group, stream=communication_stream) / n

    return _reduce_in_buckets(gradients, mean, all_reduce_size)


def clip_grad_norm_sharded(
    gradients: Any, max_norm: float, group: distributed.Group | None = None
) -> tuple[Any, Any]:
    """``gradients`` (this process's shard of them) scaled so that the norm of the whole gradient,
    over every process of ``group``, is at most ``max_norm``; and that norm. The sharded version
    of ``optimizers.clip_grad_norm``, for modules wrapped by ``fully_shard``."""
    local = tree_reduce(lambda acc, g: acc + g.square().sum(), gradients, 0.0)
    norm = _core.sqrt(distributed.all_sum(local, group=group))
    scale = _core.minimum(max_norm / (norm + 1e-6), 1.0)
    return tree_map(lambda g: g * scale, gradients), norm
