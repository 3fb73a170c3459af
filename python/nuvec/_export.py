"""MLX's function export: ``export_function`` traces a function on example arrays and saves the
graph of primitives (with the arrays it captured) to a file; ``import_function`` loads it back as
a callable; ``exporter`` adds several traces to one file. docs/export.md gives the file format."""

import os
from collections.abc import Callable
from typing import Any

from . import _core
from ._errors import op_error
from .io import LoadError, _load_error

__all__ = ["FunctionExporter", "export_function", "exporter", "import_function"]

_INPUTS = (
    "Inputs can either be a variable number of positional and keyword arrays or a single tuple "
    "and/or dictionary of arrays."
)


def _inputs(args, kwargs, op):
    """(positional arrays, sorted keyword names, their arrays) as MLX takes them: arrays as
    ``*args``/``**kwargs``, or one tuple (or list) and/or one dict of arrays."""
    if not kwargs and 1 <= len(args) <= 2 and isinstance(args[-1], dict):
        args, kwargs = (args[:-1], args[-1])
        if args and isinstance(args[0], (tuple, list)):
            args = tuple(args[0])
    elif not kwargs and len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    names = sorted(kwargs)
    arrays = list(args) + [kwargs[k] for k in names]
    if not all(isinstance(a, _core.array) for a in arrays) or not all(
        isinstance(k, str) for k in names
    ):
        raise ValueError(f"[{op}] {_INPUTS}")
    return list(args), names, arrays


def _trace(fun, args, kwargs, shapeless):
    positional, names, arrays = _inputs(args, kwargs, "export_function")

    def flat(xs):
        out = fun(*xs[: len(positional)], **dict(zip(names, xs[len(positional) :])))
        outs = [out] if isinstance(out, _core.array) else out
        if not isinstance(outs, (tuple, list)) or not all(isinstance(o, _core.array) for o in outs):
            raise ValueError(
                "[export_function] Outputs can be either a single array, a tuple, or a list of arrays."
            )
        return list(outs)

    return _core._trace_function(flat, arrays, len(positional), names, shapeless)


def _path(file, op):
    if not isinstance(file, (str, os.PathLike)):
        raise op_error(
            op, f"expected a file path, got {type(file).__name__} (nuvec exports to files only)"
        )
    return os.fspath(file)


def _save(path, traces, metadata):
    try:
        _core._save_function(path, traces, metadata)
    except OSError as e:  # MLX's exception type for a file it cannot write
        raise RuntimeError(f"[export_function] Failed to open {path}") from e


def export_function(
    file: str | os.PathLike[str],
    fun: Callable[..., Any],
    *args: Any,
    shapeless: bool = False,
    metadata: str | None = None,
    **kwargs: _core.array,
) -> None:
    """Traces ``fun`` on the example arrays ``args`` and ``kwargs`` and saves the trace to ``file``.
    With ``shapeless`` the imported function accepts other shapes of the same ranks and dtypes."""
    path = _path(file, "export_function")
    if not callable(fun):
        raise TypeError(f"export_function: fun must be callable, got {type(fun).__name__}")
    _save(path, [_trace(fun, args, kwargs, shapeless)], metadata or "")


class FunctionExporter:
    """Adds traces of one function to one file (``exporter``): each call traces the function on
    its arguments and rewrites the file with every trace so far."""

    def __init__(
        self, file: str | os.PathLike[str], fun: Callable[..., Any], shapeless: bool, metadata: str
    ):
        self._path, self._fun, self._shapeless, self._metadata = file, fun, shapeless, metadata
        self._traces: list[Any] = []
        self._closed = False
        _save(file, self._traces, metadata)

    def __call__(self, *args: Any, **kwargs: _core.array) -> None:
        if self._closed:
            raise RuntimeError("[export_function] Attempting to write after exporting is closed.")
        self._traces.append(_trace(self._fun, args, kwargs, self._shapeless))
        _save(self._path, self._traces, self._metadata)

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> "FunctionExporter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def exporter(
    file: str | os.PathLike[str],
    fun: Callable[..., Any],
    *,
    shapeless: bool = False,
    metadata: str | None = None,
) -> FunctionExporter:
    """A context manager whose calls add traces of ``fun`` to ``file``."""
    return FunctionExporter(_path(file, "exporter"), fun, shapeless, metadata or "")


def _describe(positional, names, specs):
    lines = [f"Function with {positional} positional inputs and {len(names)} keyword inputs:"]
    labels = [str(i + 1) for i in range(positional)] + [f'"{k}"' for k in names]
    for label, (shape, dtype) in zip(labels, specs):
        lines.append(f"   {label}: ({','.join(map(str, shape))}) {str(dtype).rsplit('.', 1)[-1]}")
    return "\n".join(lines)


class _ImportedFunction:
    """An imported function: call it as ``f(*args, **kwargs)`` or ``f(args_tuple, kwargs_dict)``;
    it returns a tuple of arrays."""

    def __init__(self, traces: list[Any]):
        self._traces = traces

    def _fits(self, t, n, names, arrays):
        if t.positional != n or t.keywords != names:
            return False
        for (shape, dtype), a in zip(t.inputs, arrays):
            if a.dtype != dtype or (
                len(shape) != a.ndim if t.shapeless else tuple(shape) != a.shape
            ):
                return False
        return True

    def __call__(self, *args: Any, **kwargs: _core.array) -> tuple[_core.array, ...]:
        positional, names, arrays = _inputs(args, kwargs, "import_function::call")
        for t in self._traces:
            if self._fits(t, len(positional), names, arrays):
                return tuple(t(arrays))
        options = "\n".join(
            f" {i + 1}. " + _describe(t.positional, t.keywords, t.inputs)
            for i, t in enumerate(self._traces)
        )
        called = _describe(len(positional), names, [(a.shape, a.dtype) for a in arrays])
        raise ValueError(
            "[import_function::call] No imported function found which matches the given positional "
            f"and keyword arguments. Possible functions include:\n{options}\n\nCalled with {called[14:]}"
        )


def import_function(
    file: str | os.PathLike[str], return_metadata: bool = False
) -> Callable[..., tuple[_core.array, ...]] | tuple[Callable[..., tuple[_core.array, ...]], str]:
    """The function saved in ``file`` (with its metadata string when ``return_metadata``)."""
    path = _path(file, "import_function")
    try:
        traces, metadata = _core._load_function(path)
    except LoadError:
        raise
    except _core.OpError as e:  # also MLX's RuntimeError, as for the other file readers
        raise _load_error(e) from None
    f = _ImportedFunction(traces)
    return (f, metadata) if return_metadata else f
