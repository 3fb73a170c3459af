"""`StreamContext` and `stream`: make a stream (or a device's default stream) the default in a block."""

from . import _core
from . import _typing as _t

_STREAMLIKE = (_core.Stream, _core.ThreadLocalStream, _core.Device, _core.DeviceType)


class StreamContext:
    """A context manager that sets the default device and stream, as MLX's (see `stream`)."""

    def __init__(self, s: _t.StreamLike | _core.ThreadLocalStream) -> None:
        if not isinstance(s, _STREAMLIKE):
            raise TypeError(
                f"StreamContext: expected a Stream, a ThreadLocalStream, a Device or a DeviceType, "
                f"not {type(s).__name__}"
            )
        self._s = s
        self._saved = []  # one entry per active `with` (a context may be entered again)

    def __enter__(self) -> None:
        s = self._s
        if isinstance(s, _core.ThreadLocalStream):
            s = s._stream()  # the entering thread's stream
        elif not isinstance(s, _core.Stream):
            s = _core.default_stream(s)
        self._saved.append((_core.default_device(), _core.default_stream(s.device)))
        _core.set_default_device(s.device)
        _core.set_default_stream(s)

    def __exit__(self, *exc: object) -> None:
        device, old = self._saved.pop()
        _core.set_default_stream(old)
        _core.set_default_device(device)


def stream(s: _t.StreamLike | _core.ThreadLocalStream) -> StreamContext:
    """A context manager running the ops of its block on stream `s` (or a device's default stream)."""
    return StreamContext(s)
