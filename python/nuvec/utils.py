"""Trees of arrays, as MLX's ``mlx.utils``: lists, tuples (namedtuples included), dicts and
dataclass instances are nodes; None is an empty node (it has no leaves, as in JAX); anything
else is a leaf. A leaf's path joins the keys and indices on its way with dots:
``layers.0.weight``.

``save_tree`` and ``load_into`` write and read the array leaves of a tree as safetensors keyed
by those paths.
"""

import copy
import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import Any

from . import _core
from . import _typing as _t
from ._errors import op_error

__all__ = [
    "tree_flatten",
    "tree_unflatten",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_merge",
    "save_tree",
    "load_into",
]


def _is_dataclass(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def _children(tree):
    """(key, child) pairs of a node, or None for a leaf."""
    if tree is None:
        return []
    if isinstance(tree, (list, tuple)):
        return list(enumerate(tree))
    if isinstance(tree, dict):
        return list(tree.items())
    if _is_dataclass(tree):
        return [(f.name, getattr(tree, f.name)) for f in dataclasses.fields(tree)]
    return None


def _rebuild(tree, values):
    """A node like ``tree`` holding ``values`` (in _children's order)."""
    if tree is None:
        return None
    if isinstance(tree, (list, tuple)):
        return type(tree)(*values) if hasattr(tree, "_fields") else type(tree)(values)
    if isinstance(tree, dict):
        return dict(zip(tree.keys(), values))
    out = copy.copy(tree)  # a dataclass: works for frozen ones and fields without init
    for f, v in zip(dataclasses.fields(tree), values):
        object.__setattr__(out, f.name, v)
    return out


def tree_flatten(
    tree: _t.Tree,
    prefix: str = "",
    is_leaf: Callable[[Any], bool] | None = None,
    destination: list[Any] | dict[str, Any] | None = None,
) -> Any:
    """The leaves of ``tree`` as a list of ``(path, leaf)`` (or into ``destination``, a list or
    dict). ``prefix`` is prepended to every path and starts with the separator: ``".model"``."""
    if destination is None:
        destination = []
    if not isinstance(destination, (list, dict)):
        raise ValueError("tree_flatten: destination must be a list, a dict or None")
    add = destination.extend if isinstance(destination, list) else destination.update
    kids = None if is_leaf is not None and is_leaf(tree) else _children(tree)
    if kids is None:
        add([(prefix[1:], tree)])
    else:
        for k, child in kids:
            tree_flatten(child, f"{prefix}.{k}", is_leaf, destination)
    return destination


def tree_unflatten(tree: Sequence[tuple[str, Any]] | dict[str, Any]) -> _t.Tree:
    """The tree whose ``tree_flatten`` is ``tree`` (a list of pairs or a dict); numeric keys make
    lists."""
    items = list(tree.items()) if isinstance(tree, dict) else list(tree)
    if len(items) == 1 and items[0][0] == "":
        return items[0][1]
    children = defaultdict(list)
    for key, value in items:
        head, _, rest = key.partition(".")
        children[head].append((rest, value))
    # A list when every key is an integer as int() reads it and no two ("1", "01") collide.
    try:
        indices = {int(k): k for k in children}
    except ValueError:
        indices = None
    if indices is None or len(indices) != len(children):
        return {k: tree_unflatten(v) for k, v in children.items()}
    out = []
    for i, k in sorted(indices.items()):
        out.extend({} for _ in range(i - len(out)))  # holes, as MLX fills them
        out.append(tree_unflatten(children[k]))
    return out


def tree_map(
    fn: Callable[..., Any],
    tree: _t.Tree,
    *rest: _t.Tree,
    is_leaf: Callable[[Any], bool] | None = None,
) -> _t.Tree:
    """Applies ``fn`` to the leaves of ``tree`` (and the matching leaves of the ``rest``)."""
    return tree_map_with_path(lambda _, *xs: fn(*xs), tree, *rest, is_leaf=is_leaf)


def tree_map_with_path(
    fn: Callable[..., Any],
    tree: _t.Tree,
    *rest: _t.Tree,
    is_leaf: Callable[[Any], bool] | None = None,
    path: str | None = None,
) -> _t.Tree:
    """As ``tree_map``, calling ``fn(path, leaf, *rest_leaves)``."""
    kids = None if is_leaf is not None and is_leaf(tree) else _children(tree)
    if kids is None:
        return fn(path, tree, *rest)
    values = [
        tree_map_with_path(
            fn,
            child,
            *(getattr(r, k) if _is_dataclass(r) else r[k] for r in rest),
            is_leaf=is_leaf,
            path=f"{path}.{k}" if path else str(k),
        )
        for k, child in kids
    ]
    return _rebuild(tree, values)


def tree_reduce(
    fn: Callable[[Any, Any], Any],
    tree: _t.Tree,
    initializer: Any = None,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Folds ``fn(accumulator, leaf)`` over the leaves (the first leaf starts without an initializer)."""
    kids = None if is_leaf is not None and is_leaf(tree) else _children(tree)
    if kids is None:
        return tree if initializer is None else fn(initializer, tree)
    acc = initializer
    for _, child in kids:
        acc = tree_reduce(fn, child, acc, is_leaf)
    return acc


def tree_merge(
    tree_a: _t.Tree, tree_b: _t.Tree, merge_fn: Callable[[Any, Any], Any] | None = None
) -> _t.Tree:
    """Merges two trees; where both have a leaf at one place, ``merge_fn(a, b)`` decides."""
    empty_a = isinstance(tree_a, (dict, list, tuple)) and len(tree_a) == 0
    empty_b = isinstance(tree_b, (dict, list, tuple)) and len(tree_b) == 0
    if empty_a and empty_b:
        if type(tree_a) is not type(tree_b):
            raise ValueError(f"Cannot merge {type(tree_a).__name__} with {type(tree_b).__name__}")
        return type(tree_a)()
    tree_a = None if empty_a else tree_a
    tree_b = None if empty_b else tree_b
    if tree_a is None or tree_b is None:
        return tree_b if tree_a is None else tree_a
    if isinstance(tree_a, (list, tuple)) and isinstance(tree_b, (list, tuple)):
        merged = [tree_merge(a, b, merge_fn) for a, b in zip_longest(tree_a, tree_b)]
        return _rebuild(tree_a, merged)
    if isinstance(tree_a, dict) and isinstance(tree_b, dict):
        keys = list(tree_a) + [k for k in tree_b if k not in tree_a]
        return {k: tree_merge(tree_a.get(k), tree_b.get(k), merge_fn) for k in keys}
    if merge_fn is None:
        raise ValueError("trees hold leaves at the same place and no merge_fn was given")
    return merge_fn(tree_a, tree_b)


def _array_leaves(tree):
    return [(p, x) for p, x in tree_flatten(tree) if isinstance(x, _core.array)]


def save_tree(path: _t.File, tree: _t.Tree, metadata: dict[str, str] | None = None) -> None:
    """Writes the array leaves of ``tree`` to a safetensors file keyed by their paths."""
    from .io import save_safetensors

    save_safetensors(path, dict(_array_leaves(tree)), metadata)


def _assign(tree, loaded, path):
    """``tree`` with each array leaf replaced by loaded[path]; lists, dicts and non-frozen
    dataclasses are updated in place, tuples and frozen dataclasses are rebuilt."""
    kids = _children(tree)
    if kids is None:
        return loaded[path] if isinstance(tree, _core.array) else tree
    values = [
        _assign(child, loaded, str(k) if path is None else f"{path}.{k}") for k, child in kids
    ]
    if isinstance(tree, (list, dict)):
        for (k, _), v in zip(kids, values):
            tree[k] = v
        return tree
    if _is_dataclass(tree) and not type(tree).__dataclass_params__.frozen:
        for (k, _), v in zip(kids, values):
            setattr(tree, k, v)
        return tree
    return _rebuild(tree, values)


def load_into(tree: _t.Tree, path: _t.File) -> _t.Tree:
    """Loads a safetensors file into the array leaves of ``tree``, strictly: every leaf must be
    in the file with its shape and the file must hold nothing else. On any problem it raises
    one error listing every problem, and the tree is unchanged. Returns the tree."""
    from .io import load

    arrays = load(path, format="safetensors")
    leaves = dict(_array_leaves(tree))
    problems = [
        f"missing {k} (shape {tuple(v.shape)})" for k, v in leaves.items() if k not in arrays
    ]
    problems += [
        f"{k} has shape {tuple(arrays[k].shape)} in the file, {tuple(v.shape)} in the tree"
        for k, v in leaves.items()
        if k in arrays and tuple(arrays[k].shape) != tuple(v.shape)
    ]
    problems += [f"unexpected {k} (not in the tree)" for k in arrays if k not in leaves]
    if problems:
        raise op_error("load_into", f"{path}: " + "; ".join(problems))
    return _assign(tree, arrays, None)
