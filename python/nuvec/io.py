"""Loading and saving arrays: .npy, .npz, .safetensors and (reading) .gguf, as MLX's functions.

The readers and writers are C++ (csrc/io/); this module holds the argument handling and the
npz reader's zip walk. Reading maps the file: arrays from an uncompressed file share its pages
(no copy) and are read by the OS when first touched; a bad file raises ``OpError`` naming the
file and the problem. Writing goes to a temporary file in the same folder that replaces the
target only when complete, so a failed save never leaves a half-written file where a good one
was.
"""

import os
import struct
import zipfile
import zlib
from typing import Any

from . import _core
from . import _typing as _t
from ._errors import op_error

__all__ = ["load", "save", "savez", "savez_compressed", "save_safetensors"]

_FORMATS = ("npy", "npz", "safetensors", "gguf")


def _path(file, op):
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    raise op_error(op, f"expected a file path, got {type(file).__name__}")


def save(file: _t.File, arr: _t.ArrayLike) -> None:
    """Saves one array as .npy (adding the suffix when missing), as MLX's ``save``."""
    _core._save_npy(_path(file, "save"), arr)


def _savez(file, args, kwargs, compressed, op):
    path = _path(file, op)
    arrays = {f"arr_{i}": a for i, a in enumerate(args)}
    for k, v in kwargs.items():
        if k in arrays:
            raise op_error(op, f"cannot use un-named variables and keyword {k}")
        arrays[k] = v
    _core._save_npz(path, list(arrays.items()), compressed)


def savez(file: _t.File, *args: _t.ArrayLike, **kwargs: _t.ArrayLike) -> None:
    """Saves arrays to an uncompressed .npz (positional ones as ``arr_0``, ``arr_1``, ...)."""
    _savez(file, args, kwargs, False, "savez")


def savez_compressed(file: _t.File, *args: _t.ArrayLike, **kwargs: _t.ArrayLike) -> None:
    """Saves arrays to a deflate-compressed .npz."""
    _savez(file, args, kwargs, True, "savez_compressed")


def _load_npz(path):
    out = {}
    try:
        with zipfile.ZipFile(path) as z, open(path, "rb") as raw:
            for info in z.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if info.compress_type == zipfile.ZIP_STORED:
                    # Map the member in place: its data follows the local header.
                    raw.seek(info.header_offset)
                    local = raw.read(30)
                    if len(local) < 30 or local[:4] != b"PK\x03\x04":
                        raise zipfile.BadZipFile(f"member {info.filename} has no local header")
                    n, extra = struct.unpack("<HH", local[26:30])
                    out[name] = _core._load_npy(
                        path, info.header_offset + 30 + n + extra, info.file_size
                    )
                else:
                    out[name] = _core._load_npy_bytes(z.read(info), f"{path}:{info.filename}")
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        EOFError,
        NotImplementedError,
        OSError,
    ) as e:
        raise op_error("load", f"{path}: not a readable npz archive ({e})") from None
    return out


def save_safetensors(
    file: _t.File, arrays: dict[str, _core.array], metadata: dict[str, str] | None = None
) -> None:
    """Saves a dict of arrays as .safetensors, with an optional dict of string metadata."""
    path = _path(file, "save_safetensors")
    if not isinstance(arrays, dict):
        raise op_error("save_safetensors", "arrays must be a dict of name -> array")
    metadata = dict(metadata) if metadata else {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise op_error("save_safetensors", "metadata must map strings to strings")
    named = {str(k): v for k, v in arrays.items()}
    _core._save_safetensors(path, list(named.items()), list(metadata.items()))


# --- load ---------------------------------------------------------------------------------------


def load(
    file: _t.File,
    format: str | None = None,
    return_metadata: bool = False,
    stream: _t.StreamLike | None = None,
) -> Any:
    """Loads .npy (an array), .npz, .safetensors or .gguf (a dict of arrays) by suffix or ``format``.

    With ``return_metadata`` (safetensors and GGUF), returns ``(arrays, metadata)``.
    """
    path = _path(file, "load")
    fmt = format or os.path.splitext(path)[1][1:]
    if fmt not in _FORMATS:
        raise op_error(
            "load", f"{path}: unknown format {fmt!r}; give format= one of {', '.join(_FORMATS)}"
        )
    if return_metadata and fmt not in ("safetensors", "gguf"):
        raise op_error(
            "load", f"{path}: metadata can only be returned for safetensors and gguf files"
        )
    if fmt == "npy":
        return _core._load_npy(path)
    if fmt == "npz":
        return _load_npz(path)
    arrays, meta = _core._load_safetensors(path) if fmt == "safetensors" else _core._load_gguf(path)
    return (arrays, meta) if return_metadata else arrays
