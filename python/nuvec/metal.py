"""mx.metal as MLX has it where Metal is absent: is_available() is False, and the deprecated
aliases of the memory functions call the top-level ones with MLX's deprecation message."""

import functools
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from . import _core, _devices

__all__ = [
    "is_available",
    "device_info",
    "set_wired_limit",
    "get_active_memory",
    "get_peak_memory",
    "reset_peak_memory",
    "get_cache_memory",
    "set_memory_limit",
    "set_cache_limit",
    "clear_cache",
]


def is_available() -> bool:
    """Whether Metal is available: never, nuvec runs on the CPU."""
    return False


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _deprecated(name: str, target: Callable[_P, _R]) -> Callable[_P, _R]:
    @functools.wraps(target)
    def alias(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        warnings.warn(
            f"mx.metal.{name} is deprecated and will be removed in a future version. "
            f"Use mx.{name} instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return target(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    return alias


def _gpu_info() -> dict[str, Any]:
    return _devices.device_info(_core.gpu)


device_info = _deprecated("device_info", _gpu_info)
set_wired_limit = _deprecated("set_wired_limit", _devices.set_wired_limit)
get_active_memory = _deprecated("get_active_memory", _core.get_active_memory)
get_peak_memory = _deprecated("get_peak_memory", _core.get_peak_memory)
reset_peak_memory = _deprecated("reset_peak_memory", _core.reset_peak_memory)
get_cache_memory = _deprecated("get_cache_memory", _core.get_cache_memory)
set_memory_limit = _deprecated("set_memory_limit", _core.set_memory_limit)
set_cache_limit = _deprecated("set_cache_limit", _core.set_cache_limit)
clear_cache = _deprecated("clear_cache", _core.clear_cache)
