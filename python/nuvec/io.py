"""Loading and saving arrays: .npy, .npz, .safetensors and .gguf, as MLX's functions.

The readers and writers are C++ (csrc/io/); this module holds the argument handling and the
npz reader's zip walk. Reading a path maps the file: arrays from an uncompressed file share its
pages (no copy) and are read by the OS when first touched. Writing a path goes to a temporary
file in the same folder that replaces the target only when complete, so a failed save never
leaves a half-written file where a good one was. As in MLX, every function but the GGUF ones
also takes a binary file object (``io.BytesIO``, an open file): it is read from, or written at,
its current position. A file that cannot be read raises ``LoadError``.
"""

import os
import shutil
import struct
import tempfile
import zipfile
import zlib
from typing import Any

from . import _core
from . import _typing as _t
from ._core import OpError
from ._errors import op_error

__all__ = [
    "LoadError",
    "load",
    "save",
    "savez",
    "savez_compressed",
    "save_safetensors",
    "save_gguf",
]

_FORMATS = ("npy", "npz", "safetensors", "gguf")


class LoadError(OpError, RuntimeError):
    """A file that cannot be read (missing, truncated, corrupt): an ``OpError`` naming the file,
    and also the ``RuntimeError`` MLX raises there."""


def _load_error(e):
    """The LoadError for an OpError a file reader raised: same op, reason and caller's line."""
    err = LoadError(str(e))
    err.op_name, err.reason, err.filename, err.lineno = e.op_name, e.reason, e.filename, e.lineno
    return err


def _is_path(file):
    return isinstance(file, (str, os.PathLike))


def _is_reader(file):  # MLX's test for a readable file object
    return all(hasattr(file, a) for a in ("readinto", "seek", "tell", "closed"))


def _is_writer(file):  # MLX's test for a writable file object
    return all(hasattr(file, a) for a in ("write", "seek", "tell", "closed"))


def _saving(file, op, suffix, write):
    """Runs ``write(path)`` on the path, or on a temporary file copied into the file object."""
    if _is_path(file):
        write(os.fspath(file))
    elif _is_writer(file):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "a." + suffix)
            write(path)
            with open(path, "rb") as f:
                shutil.copyfileobj(f, file)
    else:
        raise op_error(
            op, f"expected a file path or a binary file object, got {type(file).__name__}"
        )


def save(file: _t.File, arr: _t.ArrayLike) -> None:
    """Saves one array as .npy (adding the suffix to a path without it), as MLX's ``save``."""
    _saving(file, "save", "npy", lambda p: _core._save_npy(p, arr))


def _savez(file, args, kwargs, compressed, op):
    arrays = {f"arr_{i}": a for i, a in enumerate(args)}
    for k, v in kwargs.items():
        if k in arrays:
            raise op_error(op, f"cannot use un-named variables and keyword {k}")
        arrays[k] = v
    _saving(file, op, "npz", lambda p: _core._save_npz(p, list(arrays.items()), compressed))


def savez(file: _t.File, *args: _t.ArrayLike, **kwargs: _t.ArrayLike) -> None:
    """Saves arrays to an uncompressed .npz (positional ones as ``arr_0``, ``arr_1``, ...)."""
    _savez(file, args, kwargs, False, "savez")


def savez_compressed(file: _t.File, *args: _t.ArrayLike, **kwargs: _t.ArrayLike) -> None:
    """Saves arrays to a deflate-compressed .npz."""
    _savez(file, args, kwargs, True, "savez_compressed")


def _named(arrays, op):
    if not isinstance(arrays, dict):
        raise op_error(op, "arrays must be a dict of name -> array")
    return [(str(k), v) for k, v in arrays.items()]


def save_safetensors(
    file: _t.File, arrays: dict[str, _core.array], metadata: dict[str, str] | None = None
) -> None:
    """Saves a dict of arrays as .safetensors, with an optional dict of string metadata."""
    items = _named(arrays, "save_safetensors")
    metadata = dict(metadata) if metadata else {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise op_error("save_safetensors", "metadata must map strings to strings")
    _saving(
        file,
        "save_safetensors",
        "safetensors",
        lambda p: _core._save_safetensors(p, items, list(metadata.items())),
    )


def save_gguf(
    file: _t.File, arrays: dict[str, _core.array], metadata: dict[str, Any] | None = None
) -> None:
    """Saves a dict of arrays as .gguf, as MLX's ``save_gguf``: float32, float16, int8, int16 and
    int32 tensors; metadata values are strings, lists of strings, or 0-d or 1-d arrays."""
    if not _is_path(file):
        raise op_error("save_gguf", f"expected a file path (as MLX), got {type(file).__name__}")
    items = _named(arrays, "save_gguf")
    metadata = dict(metadata) if metadata else {}
    if not all(isinstance(k, str) for k in metadata):
        raise op_error("save_gguf", "metadata keys must be strings")
    _core._save_gguf(os.fspath(file), items, list(metadata.items()))


# --- load ---------------------------------------------------------------------------------------


def _load_npz(file, name):
    """The members of an npz: a path's stored members mapped in place, the others read."""
    out = {}
    path = os.fspath(file) if _is_path(file) else None
    start = None if path else file.tell()
    try:
        with zipfile.ZipFile(path or file) as z:
            for info in z.infolist():
                key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if path and info.compress_type == zipfile.ZIP_STORED:
                    out[key] = _core._load_npy(path, _member_offset(path, info), info.file_size)
                else:
                    out[key] = _core._load_npy(z.read(info), name=f"{name}:{info.filename}")
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        EOFError,
        NotImplementedError,
        OSError,
    ) as e:
        raise op_error("load", f"{name}: not a readable npz archive ({e})") from None
    finally:
        if start is not None:
            file.seek(start)  # MLX leaves a file object where it was
    return out


def _member_offset(path, info):
    """Where a stored member's data starts: after its local header."""
    with open(path, "rb") as raw:
        raw.seek(info.header_offset)
        local = raw.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"member {info.filename} has no local header")
    n, extra = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + n + extra


def _read(file, fmt):
    """The arrays (and metadata) of a path or a file object, or a LoadError."""
    name = os.fspath(file) if _is_path(file) else "<file object>"
    try:
        if fmt == "npz":
            return _load_npz(file, name), None
        if fmt == "gguf":
            return _core._load_gguf(name)
        src = name if _is_path(file) else file.read()
        if fmt == "npy":
            return _core._load_npy(src), None
        return _core._load_safetensors(src)
    except LoadError:
        raise
    except OpError as e:
        raise _load_error(e) from None


def load(
    file: _t.File,
    /,
    format: str | None = None,
    return_metadata: bool = False,
    *,
    stream: _t.StreamLike | None = None,
) -> Any:
    """Loads .npy (an array), .npz, .safetensors or .gguf (a dict of arrays) by suffix or ``format``.

    ``file`` is a path or a binary file object (whose ``name`` gives the suffix when ``format`` is
    None). With ``return_metadata`` (safetensors and GGUF), returns ``(arrays, metadata)``.
    """
    if not _is_path(file) and not _is_reader(file):
        raise op_error(
            "load", f"expected a file path or a binary file object, got {type(file).__name__}"
        )
    fmt = format
    if fmt is None:
        name = os.fspath(file) if _is_path(file) else getattr(file, "name", None)
        if not isinstance(name, str) or "." not in os.path.basename(name):
            raise op_error("load", "cannot infer the format from the file name: give format=")
        fmt = os.path.splitext(name)[1][1:]
    if fmt not in _FORMATS:
        raise op_error("load", f"unknown format {fmt!r}; give format= one of {', '.join(_FORMATS)}")
    if return_metadata and fmt not in ("safetensors", "gguf"):
        raise op_error("load", f"metadata can only be returned for safetensors and gguf, not {fmt}")
    if fmt == "gguf" and not _is_path(file):
        raise op_error("load", "GGUF can only be read from a file path (as MLX)")
    arrays, meta = _read(file, fmt)
    return (arrays, meta) if return_metadata else arrays
