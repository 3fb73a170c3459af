"""Transforms over a module's trainable parameters: ``value_and_grad`` and ``checkpoint``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _transforms
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
