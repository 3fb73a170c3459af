"""``Sequential``: layers called one after another."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Module


class Sequential(Module):
    """Calls its ``layers`` (modules or plain callables) in order, each on the previous result."""

    def __init__(self, *modules: Module | Callable[[Any], Any]) -> None:
        super().__init__()
        self.layers = list(modules)

    def __call__(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x
