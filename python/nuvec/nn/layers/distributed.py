"""Layers split across a group of processes, as MLX's ``mlx.nn.layers.distributed``: tensor
parallel linear layers (``AllToShardedLinear``, ``ShardedToAllLinear``, ``shard_linear``,
``shard_inplace``) and fully sharded modules (``FullyShardedModule``, ``fully_shard``).

Until distributed training lands (issue 19) every group holds one process, where sharding keeps
the whole weight and the collectives are copies; the code is written for any group size. The
quantized sharded layers come with quantization (issue 15).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from ... import _core as mx
from ... import distributed, random
from ..._transforms import custom_function
from ...utils import tree_flatten, tree_map_with_path, tree_unflatten
from ._checks import check_features
from .base import Module
from .linear import Linear

# How a fused weight is made of parts: a count of equal parts, split indices, or fractions of
# the axis (e.g. [1/3, 2/3] for three equal parts given as boundaries).
Segments = int | Sequence[int] | Sequence[float]
# A sharding rule: (path, weight) -> None (keep whole), an axis, or (axis, segments).
ShardingFn = Callable[[str, Any], None | int | tuple[int, Segments]]


@functools.lru_cache
def sum_gradients(group: distributed.Group) -> Callable[[Any], Any]:
    """The identity whose gradient is summed over ``group`` (so each process's input receives the
    gradient of every process's shard); the plain identity on a group of one process."""
    if group.size() == 1:
        return lambda x: x

    @custom_function
    def identity(x: Any) -> Any:
        return x

    @identity.vjp
    def identity_vjp(x: Any, dx: Any, _: Any) -> Any:
        return distributed.all_sum(dx, group=group)

    return identity


def _parts(weight: Any, segments: Segments, axis: int) -> list[Any]:
    """``weight`` split along ``axis`` into ``segments`` (a count, indices or fractions)."""
    if isinstance(segments, int) or isinstance(segments[0], int):
        return mx.split(weight, segments, axis=axis)
    n = weight.shape[axis]
    return mx.split(weight, [int(f * n) for f in segments], axis=axis)


def _shard(parameters: dict, rule: ShardingFn, group: distributed.Group | None) -> dict:
    """``parameters`` with each array that ``rule`` names cut to this process's shard: every
    segment is split into ``group.size()`` pieces along the axis and this rank's pieces are
    joined again (so a fused weight such as QKV keeps its layout within the shard)."""
    group = group or distributed.init()
    n, rank = group.size(), group.rank()

    def one(path: str, weight: Any) -> Any:
        if not isinstance(weight, mx.array):
            return weight
        how = rule(path, weight)
        if how is None:
            return weight
        if isinstance(how, int):
            axis, segments = how, 1
        elif isinstance(how, tuple):
            axis, segments = how
        else:
            raise ValueError("The sharding function should return int or tuple[int, list]")
        mine = [mx.split(part, n, axis=axis)[rank] for part in _parts(weight, segments, axis)]
        return mx.contiguous(mx.concatenate(mine, axis=axis))

    return tree_map_with_path(one, parameters)


def _all_to_sharded(segments: Segments) -> ShardingFn:
    """Split the outputs: the weight's output axis and the bias."""
    return lambda path, w: (-1 if path.endswith("bias") else max(w.ndim - 2, 0), segments)


def _sharded_to_all(segments: Segments) -> ShardingFn:
    """Split the inputs: the weight's input axis; the bias stays whole (added once)."""
    return lambda path, w: None if path.endswith("bias") else (-1, segments)


_RULES = {"all-to-sharded": _all_to_sharded, "sharded-to-all": _sharded_to_all}


def _rule(sharding: str, segments: Segments) -> ShardingFn:
    if sharding not in _RULES:
        raise ValueError(
            f"Sharding type {sharding=} not supported, "
            "choose one of 'all-to-sharded' or 'sharded-to-all'"
        )
    return _RULES[sharding](segments)


def shard_inplace(
    module: Module,
    sharding: str | ShardingFn,
    *,
    segments: Segments = 1,
    group: distributed.Group | None = None,
) -> None:
    """Replace ``module``'s parameters by this process's shards, in place. ``sharding`` is
    "all-to-sharded", "sharded-to-all" or a rule ``(path, weight) -> axis | (axis, segments) |
    None``; the module's computation is unchanged (it must communicate by itself)."""
    rule = _rule(sharding, segments) if isinstance(sharding, str) else sharding
    module.update(_shard(module.parameters(), rule, group))


def shard_linear(
    module: Module,
    sharding: str,
    *,
    segments: Segments = 1,
    group: distributed.Group | None = None,
) -> Module:
    """A new sharded layer made from the ``Linear`` ``module`` ("all-to-sharded" gives an
    ``AllToShardedLinear``, "sharded-to-all" a ``ShardedToAllLinear``); ``module`` is unchanged."""
    _rule(sharding, segments)
    if not isinstance(module, Linear):
        raise TypeError(
            f"shard_linear: expected a Linear layer, got {type(module).__name__} (the quantized "
            "sharded layers come with quantization)"
        )
    cls = AllToShardedLinear if sharding == "all-to-sharded" else ShardedToAllLinear
    return cls.from_linear(module, segments=segments, group=group)


class _ShardedLinear(Module):
    """The shared part of the two sharded linear layers: a weight of shape ``(out, in)`` where
    one of the two is divided by the group size, and a bias; drawn as ``Linear``'s."""

    _split_input: bool  # which dimension is divided among the processes
    _sharding: Callable[[Segments], ShardingFn]  # the rule that cuts a whole layer's weights

    def __init__(
        self,
        input_dims: int,
        output_dims: int,
        bias: bool = True,
        group: distributed.Group | None = None,
    ) -> None:
        super().__init__()
        self.group = group or distributed.init()
        n = self.group.size()
        scale = math.sqrt(1.0 / input_dims)
        if self._split_input:
            if input_dims % n:
                raise ValueError(
                    f"The input of size {input_dims} cannot be sharded across {n} devices."
                )
            shape, bias_dims = (output_dims, input_dims // n), output_dims
        else:
            if output_dims % n:
                raise ValueError(
                    f"Cannot shard the output of size {output_dims} across {n} devices."
                )
            shape, bias_dims = (output_dims // n, input_dims), output_dims // n
        self.weight = random.uniform(low=-scale, high=scale, shape=shape)
        if bias:
            self.bias = random.uniform(low=-scale, high=scale, shape=(bias_dims,))

    def _extra_repr(self) -> str:
        out, inp = self.weight.shape
        n = self.group.size()
        out, inp = (out, inp * n) if self._split_input else (out * n, inp)
        return f"input_dims={inp}, output_dims={out}, bias={'bias' in self}"

    @classmethod
    def from_linear(
        cls,
        linear_layer: Module,
        *,
        segments: Segments = 1,
        group: distributed.Group | None = None,
    ) -> Module:
        """This process's shard of ``linear_layer`` (a ``Linear``) as a new layer."""
        group = group or distributed.init()
        out, inp = linear_layer.weight.shape
        layer = cls(inp, out, "bias" in linear_layer, group)
        layer.update(_shard(linear_layer.parameters(), cls._sharding(segments), group))
        return layer


class AllToShardedLinear(_ShardedLinear):
    """A ``Linear`` whose outputs are divided among the group's processes: each computes its
    slice of the outputs from the whole input (gradients of the input are summed over the group).
    """

    _split_input = False
    _sharding = staticmethod(_all_to_sharded)

    def __call__(self, x: Any) -> Any:
        w = self["weight"]
        check_features("AllToShardedLinear", x, w.shape[1])
        x = sum_gradients(self.group)(x)
        if "bias" in self:
            return mx.addmm(self["bias"], x, w.T)
        return x @ w.T


class ShardedToAllLinear(_ShardedLinear):
    """A ``Linear`` whose inputs are divided among the group's processes: each multiplies its
    slice of the input by its slice of the weight and the partial products are summed over the
    group, so every process gets the whole output."""

    _split_input = True
    _sharding = staticmethod(_sharded_to_all)

    def __call__(self, x: Any) -> Any:
        w = self["weight"]
        check_features("ShardedToAllLinear", x, w.shape[1])
        y = distributed.all_sum(x @ w.T, group=self.group)
        return y + self["bias"] if "bias" in self else y


def _gatherer(
    group: distributed.Group, full_shapes: list[tuple[int, ...]], compute_dtype: Any
) -> custom_function:
    """A function from the shards of the listed parameters (as positional arguments) to the whole
    parameters: one all_gather of the shards flattened side by side. Its vjp sums each whole
    gradient over the group and keeps this process's shard of it, divided by the group size (the
    mean over the processes, as in data-parallel training)."""
    n = group.size()
    shard_shapes = [(s[0] // n, *s[1:]) for s in full_shapes]
    sizes = [math.prod(s) for s in shard_shapes]
    cuts = list(itertools.accumulate(sizes))[:-1]

    def cast(x: Any, dtype: Any) -> Any:
        return x if dtype is None or x.dtype == dtype else x.astype(dtype)

    @custom_function
    def gather(*shards: Any) -> list[Any]:
        row = mx.concatenate([cast(s.reshape(1, -1), compute_dtype) for s in shards], axis=1)
        whole = distributed.all_gather(row, group=group)  # (n, sum(sizes)), in rank order
        return [p.reshape(s) for p, s in zip(mx.split(whole, cuts, axis=1), full_shapes)]

    @gather.vjp
    def gather_vjp(shards: Any, cotangents: list[Any], _: Any) -> tuple[Any, ...]:
        shards = shards if isinstance(shards, tuple) else (shards,)  # one argument comes bare
        rows = mx.concatenate([c.reshape(n, -1) for c in cotangents], axis=1)
        mine = distributed.sum_scatter(rows, group=group) / n
        parts = mx.split(mine, cuts, axis=1)
        return tuple(cast(p.reshape(s), x.dtype) for p, s, x in zip(parts, shard_shapes, shards))

    return gather


def _shardable(module: Module, key: str, value: Any) -> bool:
    """Parameters, except those of an inner ``FullyShardedModule`` (sharded already)."""
    return not isinstance(value, FullyShardedModule) and Module.valid_parameter_filter(
        module, key, value
    )


class FullyShardedModule(Module):
    """Wraps a module so that each process of the group keeps only a shard (along axis 0) of
    each of its parameters: the whole parameters are gathered for each call and their gradients
    reduced to the shards. Use ``fully_shard`` to wrap a module."""

    def __init__(
        self,
        module: Module,
        group: distributed.Group | None = None,
        compute_dtype: mx.Dtype | None = None,
    ) -> None:
        super().__init__()
        group = group or distributed.init()
        n = group.size()
        shardable = module.filter_and_map(_shardable)
        flat = tree_flatten(shardable)
        for path, a in flat:
            if a.ndim == 0:
                raise ValueError(f"Cannot shard parameter '{path}' because it is a scalar.")
            if a.shape[0] % n:
                raise ValueError(
                    f"Cannot shard parameter '{path}' with shape {a.shape} across {n} devices: "
                    f"axis 0 must be divisible by {n}."
                )
        # A plain attribute, not an entry: a list entry would be taken for a parameter list.
        object.__setattr__(self, "_paths", [k for k, _ in flat])
        module.update(_shard(shardable, lambda p, w: 0, group))
        self.module = module
        self._gather = _gatherer(group, [a.shape for _, a in flat], compute_dtype)

    def _extra_repr(self) -> str:
        return f"num_sharded_params={len(self._paths)}"

    def _with_whole_parameters(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        shards = self.module.filter_and_map(_shardable)
        whole = self._gather(*(a for _, a in tree_flatten(shards)))
        self.module.update(tree_unflatten(list(zip(self._paths, whole))))
        try:
            return fn(*args, **kwargs)
        finally:
            self.module.update(shards)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._with_whole_parameters(self.module, *args, **kwargs)

    def as_linear(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped module's ``as_linear`` (an ``Embedding``'s) with the whole parameters."""
        return self._with_whole_parameters(self.module.as_linear, *args, **kwargs)


def fully_shard(
    module: Module,
    *,
    group: distributed.Group | None = None,
    compute_dtype: mx.Dtype | None = None,
) -> Module:
    """``module`` wrapped in a ``FullyShardedModule``; ``module`` itself when the group holds one
    process, when it is wrapped already, or when it has no parameter to shard."""
    group = group or distributed.init()
    if group.size() == 1 or isinstance(module, FullyShardedModule):
        return module
    wrapped = FullyShardedModule(module, group=group, compute_dtype=compute_dtype)
    return wrapped if wrapped._paths else module
