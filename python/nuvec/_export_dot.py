"""`export_to_dot`: the lazy graph behind some arrays as Graphviz DOT text, as MLX's."""

import os
from typing import Any

from . import _core
from . import _typing as _t
from .utils import tree_flatten


def _arrays(tree):
    leaves = [x for _, x in tree_flatten(tree)]
    if not all(isinstance(x, _core.array) for x in leaves):
        raise ValueError("export_to_dot: the arguments must hold only arrays")
    return leaves


def export_to_dot(file: _t.File, *args: Any, **kwargs: Any) -> None:
    """Writes the graph of the unevaluated arrays `args` (arrays or trees of them) depend on to
    `file` (a path or a text file object), naming the arrays given as keywords."""
    outputs = _arrays(list(args))
    names = {k: _arrays(v)[0] for k, v in kwargs.items()}
    if not isinstance(file, (str, os.PathLike)) and not hasattr(file, "write"):
        raise ValueError("export_to_dot: file must be a path or a file object")
    text = _core._graph_to_dot(outputs, names)
    if hasattr(file, "write"):
        file.write(text)
        return
    with open(file, "w", encoding="utf-8") as f:
        f.write(text)
