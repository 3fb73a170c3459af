"""The `stream` context manager."""

import contextlib
from collections.abc import Iterator

from . import _core
from . import _typing as _t


@contextlib.contextmanager
def stream(s: _t.StreamLike) -> Iterator[_core.Stream]:
    """Runs ops in the block on stream `s` (or on a device's default stream)."""
    if isinstance(s, _core.DeviceType):
        s = _core.Device(s)
    if isinstance(s, _core.Device):
        s = _core.default_stream(s)
    old = _core.default_stream(s.device)
    old_device = _core.default_device()
    _core.set_default_device(s.device)
    _core.set_default_stream(s)
    try:
        yield s
    finally:
        _core.set_default_stream(old)
        _core.set_default_device(old_device)
