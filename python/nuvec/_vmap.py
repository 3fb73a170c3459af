"""vmap over trees, as MLX's ``mx.vmap``. in_axes and out_axes are an int, None, or a tree that is
a prefix of the arguments (a tuple, one entry per positional argument) or of the outputs: an int or
None there applies to the whole subtree below it. The compiled core maps flat lists of arrays; this
module matches the trees and names the argument or output at fault by its dotted path (the paths of
``tree_flatten``, with the argument's position first: ``1.layers.0.weight``)."""

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from . import _core
from ._core import OpError
from ._errors import op_error
from ._transforms import _replace
from .utils import _children, tree_flatten

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _is_array(x):
    return isinstance(x, _core.array)


def _is_axis(a):
    return a is None or isinstance(a, int)  # a bool is an int, as in MLX


def _where(path):
    return f"at '{path}'" if path else "at the top level"


def _match(tree, axes, what, path=""):
    """[(path, leaf, axis)] for the leaves of ``tree``, each with its axis from the prefix tree
    ``axes``."""
    if _is_axis(axes):
        prefix = f".{path}" if path else ""
        return [(p, leaf, axes) for p, leaf in tree_flatten(tree, prefix, is_leaf=_is_array)]
    kids, axis_kids = None if _is_array(tree) else _children(tree), _children(axes)
    if axis_kids is None:
        raise op_error(
            "vmap",
            f"{what} {_where(path)} must be an int, None or a tree of them, "
            f"not a {type(axes).__name__}",
        )
    axis_of = dict(axis_kids)
    if kids is None or set(axis_of) != {k for k, _ in kids}:
        raise op_error(
            "vmap",
            f"{what} do not match the tree {_where(path)}: "
            f"{_describe(axes)} against {_describe(tree)}",
        )
    out = []
    for k, child in kids:
        out += _match(child, axis_of[k], what, f"{path}.{k}" if path else str(k))
    return out


def _describe(x):
    kids = None if _is_array(x) else _children(x)
    if kids is None:
        return "an array" if _is_array(x) else f"a {type(x).__name__}"
    if isinstance(x, dict):
        return f"a dict with keys {list(x.keys())}"
    return f"a {type(x).__name__} of {len(kids)}"


def _match_prefix(tree, axes, what, path):
    """_match, where a one-element tuple or list of axes may also stand for its element: for an
    array (MLX accepts ``in_axes=(0,)`` for one array), and for the one argument's tree (in_axes
    given per argument)."""
    try:
        return _match(tree, axes, what, path)
    except OpError:
        one = isinstance(axes, (tuple, list)) and len(axes) == 1
        if one and (_is_array(tree) or what == "in_axes"):
            return _match(tree, axes[0], what, path)
        raise


def _input_axes(args, in_axes):
    """The array leaves of args and their normalized axes (-1: not mapped); the batch size."""
    if len(args) == 1:  # as MLX: in_axes is matched against the one argument itself
        leaves = _match_prefix(args[0], in_axes, "in_axes", "0")
    else:
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        leaves = _match(tuple(args), in_axes, "in_axes")
    arrays, axes, sizes = [], [], {}
    for path, leaf, axis in leaves:
        if not _is_array(leaf):
            if axis is not None and leaf is not None:
                raise op_error(
                    "vmap",
                    f"the argument {_where(path)} is a {type(leaf).__name__}, not an array: "
                    "only arrays can be mapped over (give it in_axes None)",
                )
            continue
        if axis is not None:
            if not -leaf.ndim <= axis < leaf.ndim:
                raise op_error(
                    "vmap",
                    f"in_axes {axis} is out of range for the argument {_where(path)} "
                    f"of shape {tuple(leaf.shape)}",
                    index=True,
                )
            axis %= leaf.ndim
            sizes[path] = leaf.shape[axis]
        arrays.append(leaf)
        axes.append(-1 if axis is None else axis)
    if not sizes:
        raise op_error(
            "vmap", "in_axes maps over no argument: at least one array must have an axis"
        )
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"'{p}' has {n}" for p, n in sizes.items())
        raise op_error("vmap", f"the mapped axes have different sizes: {detail}")
    return arrays, axes, next(iter(sizes.values()))


def _place(out, found, want, path, size):
    """The output ``out`` (batched along ``found``, or -1) with its batch axis at ``want``."""
    if want is None:
        if found >= 0:
            raise op_error(
                "vmap",
                f"out_axes is None for the output {_where(path)}, but it differs from example "
                "to example",
            )
        return out
    rank = out.ndim + (found < 0)
    if not -rank <= want < rank:
        raise op_error(
            "vmap",
            f"out_axes {want} is out of range for the output {_where(path)}, of rank {rank} "
            "with the batch axis",
            index=True,
        )
    want %= rank
    if found < 0:  # the same for every example
        shape = list(out.shape)
        shape.insert(want, size)
        return _core.broadcast_to(_core.expand_dims(out, want), shape)
    return out if found == want else _core.moveaxis(out, found, want)


def vmap(fun: Callable[_P, _R], in_axes: Any = 0, out_axes: Any = 0) -> Callable[_P, _R]:
    """fun vectorised over an axis of its arguments: ``vmap(fun)(xs)`` stacks ``fun(x)`` over
    the examples ``x`` of ``xs`` along axis 0, computed as one batched graph.

    in_axes: for the positional arguments, an int (the axis holding the examples, negative
    counting from the end), None (the argument is shared by every example) or a tuple with one
    such tree per argument. out_axes: the same for the outputs: where each output's examples go.
    Keyword arguments are shared by every example. ``vmap`` nests and composes with ``grad``,
    ``vjp`` and ``jvp`` either way (``vmap(grad(loss), in_axes=(None, 0))`` gives per-example
    gradients)."""

    if not callable(fun):
        raise TypeError(f"vmap: fun must be callable, not a {type(fun).__name__}")
    if in_axes is None:  # as MLX: it maps over nothing
        raise TypeError("vmap: in_axes must be an int or a tree of ints and None, not None")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        arrays, axes, size = _input_axes(args, in_axes)
        result = {}

        def flat_fun(xs):
            out = fun(*_replace(list(args), xs), **kwargs)
            leaves = tree_flatten(out, is_leaf=_is_array)
            for path, leaf in leaves:
                if not _is_array(leaf):
                    raise op_error(
                        "vmap",
                        f"the function's output {_where(path)} is a {type(leaf).__name__}, "
                        "not an array",
                    )
            result["out"] = out
            return [leaf for _, leaf in leaves]

        outs, found = _core._vmap_flat(flat_fun, arrays, axes)
        out = result["out"]
        wants = _match_prefix(out, out_axes, "out_axes", "")
        placed = [_place(o, f, w, p, size) for o, f, (p, _, w) in zip(outs, found, wants)]
        return _replace(out, placed)

    return wrapped
