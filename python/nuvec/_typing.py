"""The types nuvec's signatures name: python/nuvec's annotations and the compiled module's stub
(_core.pyi, written by tools/type_stubs.py) both use these."""

import os
from collections.abc import Sequence
from types import EllipsisType
from typing import Any, BinaryIO, Protocol, TypeAlias

from . import _core


class SupportsArray(Protocol):
    """A NumPy array or anything else that converts to one."""

    def __array__(self) -> Any: ...


Scalar: TypeAlias = bool | int | float | complex
ArrayLike: TypeAlias = _core.array | Scalar | SupportsArray
Shape: TypeAlias = int | Sequence[int]
Axis: TypeAlias = int | Sequence[int]
StreamLike: TypeAlias = _core.Stream | _core.Device | _core.DeviceType
IndexItem: TypeAlias = int | slice | _core.array | EllipsisType | Sequence[int] | None
Index: TypeAlias = IndexItem | tuple[IndexItem, ...]
Tree: TypeAlias = Any  # nested lists, tuples, dicts and dataclasses of arrays and other leaves
File: TypeAlias = str | os.PathLike[str] | BinaryIO  # a path, or a binary file object
