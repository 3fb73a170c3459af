"""``Module``: the base of every layer, a dict whose entries are its parameters and children.

A module keeps arrays, dicts, lists, tuples and other modules as dict entries (so a model is a
tree that ``tree_flatten`` walks, with MLX's dotted paths) and everything else as ordinary
attributes. The tree walks below follow mlx.nn's rules: a filter decides per (module, key, value)
what is kept, a filtered-out entry of a dict or list stays in place as ``{}`` so list indices
and paths do not shift.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from ... import _core, _dtypes
from ...utils import tree_flatten, tree_unflatten

_Filter = Callable[["Module", str, Any], bool]


class Module(dict):
    """The base class of layers and models (MLX's ``mlx.nn.Module``).

    Subclasses call ``super().__init__()`` and then assign their parameters and sub-modules as
    attributes; ``__call__`` computes the forward pass."""

    __call__: Callable[..., Any]

    def __init__(self) -> None:
        self._no_grad: set[str] = set()
        self._training = True

    @property
    def training(self) -> bool:
        """Whether the module is in training mode (see ``train`` and ``eval``)."""
        return self._training

    @property
    def state(self) -> Module:
        """The module itself: every entry, parameters and other state alike, by reference."""
        return self

    def _extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = tree_flatten(self.children(), is_leaf=self.is_module)
        text = f"{type(self).__name__}({self._extra_repr()}"
        for k, v in children:
            text += "\n" + textwrap.indent(f"({k}): {v!r}", "  ")
        return text + ("\n)" if children else ")")

    def __getattr__(self, key: str) -> Any:
        value = self.get(key)
        if value is not None:
            return value
        return super().__getattribute__(key)

    def __setattr__(self, key: str, value: Any) -> None:
        if isinstance(value, (_core.array, dict, list, tuple)):
            # An ordinary attribute of the same name would hide the entry from __getattr__.
            if key in self.__dict__:
                object.__delattr__(self, key)
            self[key] = value
        else:
            super().__setattr__(key, value)
            self.pop(key, None)

    def __delattr__(self, key: str) -> None:
        if self.get(key) is not None:
            del self[key]
        else:
            super().__delattr__(key)

    # -- filters ---------------------------------------------------------------------------
    @staticmethod
    def is_module(value: Any) -> bool:
        return isinstance(value, Module)

    @staticmethod
    def valid_child_filter(module: Module, key: str, value: Any) -> bool:
        return isinstance(value, (dict, list))

    @staticmethod
    def valid_parameter_filter(module: Module, key: str, value: Any) -> bool:
        return isinstance(value, (dict, list, _core.array)) and not key.startswith("_")

    @staticmethod
    def trainable_parameter_filter(module: Module, key: str, value: Any) -> bool:
        return Module.valid_parameter_filter(module, key, value) and key not in module._no_grad

    def filter_and_map(
        self,
        filter_fn: _Filter,
        map_fn: Callable[[Any], Any] | None = None,
        is_leaf_fn: _Filter | None = None,
    ) -> dict[str, Any]:
        """The entries ``filter_fn(module, key, value)`` keeps, recursively, as dicts and lists,
        with ``map_fn`` applied to each leaf (a value that is not a module, dict or list, or one
        ``is_leaf_fn`` calls a leaf)."""
        map_fn = map_fn or (lambda x: x)
        is_leaf_fn = is_leaf_fn or (lambda m, k, v: not isinstance(v, (Module, dict, list)))
        return _walk_module(self, filter_fn, map_fn, is_leaf_fn)

    def parameters(self) -> dict[str, Any]:
        """Every array of the module and its children, as a tree of dicts and lists."""
        return self.filter_and_map(self.valid_parameter_filter)

    def trainable_parameters(self) -> dict[str, Any]:
        """The arrays of ``parameters`` that are not frozen."""
        return self.filter_and_map(self.trainable_parameter_filter)

    def children(self) -> dict[str, Any]:
        """The modules directly inside this one (in dicts and lists as they are held)."""
        return self.filter_and_map(
            self.valid_child_filter, is_leaf_fn=lambda m, k, v: isinstance(v, Module)
        )

    def leaf_modules(self) -> dict[str, Any]:
        """The sub-modules that hold no other module."""

        def is_leaf(m: Module, k: str, v: Any) -> bool:
            return isinstance(v, Module) and not tree_flatten(v.children())

        return self.filter_and_map(self.valid_child_filter, is_leaf_fn=is_leaf)

    # -- updates ---------------------------------------------------------------------------
    def update(self, parameters: dict[str, Any], strict: bool = True) -> Module:
        """Replace the arrays at the places ``parameters`` (a full or partial tree like
        ``parameters()``) names. With ``strict``, a place the module lacks or a non-array where
        an array is raises ValueError."""
        _update_arrays(self, parameters, strict)
        return self

    def update_modules(self, modules: dict[str, Any], strict: bool = True) -> Module:
        """Replace the sub-modules at the places ``modules`` (a tree like ``children()``)
        names."""
        _update_children(self, modules, strict)
        return self

    def apply(self, map_fn: Callable[[Any], Any], filter_fn: _Filter | None = None) -> Module:
        """Replace every parameter (or every array ``filter_fn`` keeps) by ``map_fn`` of it."""
        self.update(self.filter_and_map(filter_fn or Module.valid_parameter_filter, map_fn))
        return self

    def apply_to_modules(self, apply_fn: Callable[[str, Module], Any]) -> Module:
        """Call ``apply_fn(path, module)`` on this module and every sub-module."""
        stack: list[tuple[str, Module]] = [("", self)]
        while stack:
            path, module = stack.pop()
            apply_fn(path, module)
            prefix = "." + path if path else ""
            stack.extend(tree_flatten(module.children(), prefix=prefix, is_leaf=self.is_module))
        return self

    def modules(self) -> list[Module]:
        """This module and every sub-module."""
        found: list[Module] = []
        self.apply_to_modules(lambda _, m: found.append(m))
        return found

    def named_modules(self) -> list[tuple[str, Module]]:
        """``(path, module)`` for this module (path ``""``) and every sub-module."""
        found: list[tuple[str, Module]] = []
        self.apply_to_modules(lambda k, m: found.append((k, m)))
        return found

    # -- freezing and modes ----------------------------------------------------------------
    def _local_keys(self, keys: str | list[str] | None, strict: bool) -> list[str]:
        if keys is None:
            own = self.filter_and_map(
                lambda m, k, v: not isinstance(v, Module) and m.valid_parameter_filter(m, k, v)
            )
            return [k for k, _ in tree_flatten(own)]
        keys = keys if isinstance(keys, list) else [keys]
        if strict:
            for k in keys:
                if k not in self:
                    raise KeyError(f"Module doesn't contain member {k}.")
        return keys

    def _set_frozen(self, frozen: bool, recurse: bool, keys: Any, strict: bool) -> Module:
        if recurse and strict and keys is not None:
            everywhere = self.modules()
            for k in keys if isinstance(keys, list) else [keys]:
                if not any(k in m for m in everywhere):
                    raise KeyError(f"Module doesn't contain member {k}.")
            strict = False

        def one(_: str, m: Module) -> None:
            if frozen:
                m._no_grad.update(m._local_keys(keys, strict))
            elif keys is None:
                m._no_grad.clear()
            else:
                m._no_grad.difference_update(m._local_keys(keys, strict))

        if recurse:
            self.apply_to_modules(one)
        else:
            one("", self)
        return self

    def freeze(
        self, *, recurse: bool = True, keys: str | list[str] | None = None, strict: bool = False
    ) -> Module:
        """Exclude parameters (all, or those named ``keys``) from ``trainable_parameters``."""
        return self._set_frozen(True, recurse, keys, strict)

    def unfreeze(
        self, *, recurse: bool = True, keys: str | list[str] | None = None, strict: bool = False
    ) -> Module:
        """Undo ``freeze`` for all parameters or those named ``keys``."""
        return self._set_frozen(False, recurse, keys, strict)

    def _set_training_mode(self, mode: bool) -> None:
        self._training = mode

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=False``: evaluation mode) on every module."""
        self.apply_to_modules(lambda _, m: m._set_training_mode(mode))
        return self

    def eval(self) -> Module:
        """Set evaluation mode on every module."""
        return self.train(False)

    def set_dtype(
        self,
        dtype: _core.Dtype,
        predicate: Callable[[_core.Dtype], bool] | None = lambda t: _dtypes.issubdtype(
            t, _dtypes.floating
        ),
    ) -> None:
        """Cast the parameters whose dtype ``predicate`` accepts (by default the floating
        ones; ``None``: all) to ``dtype``."""
        keep = predicate or (lambda _: True)
        self.apply(lambda x: x.astype(dtype) if keep(x.dtype) else x)

    # -- files -----------------------------------------------------------------------------
    def load_weights(
        self, file_or_weights: str | list[tuple[str, Any]], strict: bool = True
    ) -> Module:
        """Set parameters from a ``.npz`` or ``.safetensors`` file or a list of ``(path,
        array)``. With ``strict``, the weights must match the parameters exactly; every missing,
        unexpected, mis-typed or mis-shaped key is listed in one ValueError and the model is left
        unchanged."""
        from ._weights import read_weights, weight_problems

        weights = read_weights(file_or_weights)
        if strict:
            problems = weight_problems(
                dict(weights), tree_flatten(self.parameters(), destination={})
            )
            if problems:
                raise ValueError(problems)
        if weights:
            self.update(tree_unflatten(weights), strict=False)
        return self

    def save_weights(self, file: str) -> None:
        """Write the parameters to ``file``: ``.npz`` or ``.safetensors`` by its extension."""
        from ._weights import write_weights

        write_weights(file, tree_flatten(self.parameters(), destination={}))


def _walk_module(module: Module, keep: _Filter, map_fn: Callable, is_leaf: _Filter) -> dict:
    return {
        k: _walk(module, k, v, keep, map_fn, is_leaf)
        for k, v in module.items()
        if keep(module, k, v)
    }


def _walk(
    owner: Module, key: str, value: Any, keep: _Filter, map_fn: Callable, is_leaf: _Filter
) -> Any:
    if is_leaf(owner, key, value):
        return map_fn(value)
    if isinstance(value, Module):
        return _walk_module(value, keep, map_fn, is_leaf)
    if isinstance(value, (dict, list)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        out = {
            k: _walk(owner, f"{key}.{k}", v, keep, map_fn, is_leaf)
            if keep(owner, f"{key}.{k}", v)
            else {}
            for k, v in items
        }
        return out if isinstance(value, dict) else list(out.values())
    raise RuntimeError(f"Module tree: unexpected leaf {type(value).__name__} at {key!r}")


def _places(dst: Any, src: Any, strict: bool, what: str):
    """Pairs (container, key) of ``dst`` that ``src`` (a dict or list tree) names, with the
    new value; a place ``dst`` lacks raises under ``strict`` and is skipped otherwise."""
    if isinstance(src, dict):
        for k, new in src.items():
            if k in dst:
                yield k, new
            elif strict:
                raise ValueError(f'Module does not have {what} named "{k}".')
    elif isinstance(src, list):
        for i, new in enumerate(src):
            if i < len(dst):
                yield i, new
            elif strict:
                raise ValueError(
                    f"List index {i} is out of bounds for destination of length {len(dst)}."
                )
    elif strict:
        raise ValueError(f"Received invalid type: {type(src).__name__}.")


def _update_arrays(dst: Any, src: Any, strict: bool) -> None:
    for k, new in _places(dst, src, strict, "parameter"):
        if isinstance(dst[k], _core.array):
            if strict and not isinstance(new, _core.array):
                raise ValueError(f"Received invalid type: {type(new).__name__}.")
            dst[k] = new
        else:
            _update_arrays(dst[k], new, strict)


def _update_children(dst: Any, src: Any, strict: bool) -> None:
    for k, new in _places(dst, src, strict, "sub-module"):
        current = dst[k]
        if isinstance(current, Module) and isinstance(new, Module):
            dst[k] = new
        elif isinstance(current, (dict, list)):
            _update_children(current, new, strict)
        elif strict and new != {}:
            raise ValueError(f"Received invalid type: {type(new).__name__}.")
