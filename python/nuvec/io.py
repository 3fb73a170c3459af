"""Loading and saving arrays: .npy, .npz, .safetensors and (reading) .gguf, as MLX's functions.

Reading maps the file: arrays from an uncompressed file share its pages (no copy) and are read
by the OS when first touched. The header parsing of untrusted files is in C++ (csrc/io/); a bad
file raises ``OpError`` naming the file and the problem. Writing goes to a temporary file in the
same folder that replaces the target only when complete, so a failed save never leaves a
half-written file where a good one was.
"""
import json
import os
import struct
import tempfile
import zipfile
import zlib

import numpy as np

from . import _core
from ._errors import op_error

__all__ = ["load", "save", "savez", "savez_compressed", "save_safetensors"]

_FORMATS = ("npy", "npz", "safetensors", "gguf")

# dtype -> (safetensors name, npy descr); bfloat16 has no NumPy dtype.
_NAMES = {
    _core.bool_: ("BOOL", "|b1"), _core.uint8: ("U8", "|u1"), _core.uint16: ("U16", "<u2"),
    _core.uint32: ("U32", "<u4"), _core.uint64: ("U64", "<u8"), _core.int8: ("I8", "|i1"),
    _core.int16: ("I16", "<i2"), _core.int32: ("I32", "<i4"), _core.int64: ("I64", "<i8"),
    _core.float16: ("F16", "<f2"), _core.float32: ("F32", "<f4"), _core.float64: ("F64", "<f8"),
    _core.bfloat16: ("BF16", None), _core.complex64: ("C64", "<c8"),
}


def _path(file, op):
    if isinstance(file, (str, os.PathLike)):
        return os.fspath(file)
    raise op_error(op, f"expected a file path, got {type(file).__name__}")


def _bytes_of(a):
    """The array's elements in row-major order, as a NumPy array of bytes-compatible dtype."""
    if a.dtype == _core.bfloat16:
        a = _core.view(a, _core.uint16)
    return np.ascontiguousarray(np.asarray(a))


def _atomic_write(path, write):
    """Calls write(f) on a temporary in path's folder, then renames it over path."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".nuvec-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _with_suffix(path, suffix):
    return path if path.endswith("." + suffix) else path + "." + suffix


# --- .npy ---------------------------------------------------------------------------------------

def _npy_header(a):
    descr = _NAMES[a.dtype][1]
    if descr is None:
        raise op_error("save", "the .npy format has no bfloat16 (NumPy lacks it); use save_safetensors")
    shape = "(" + "".join(f"{d}, " for d in a.shape)[:-2] + ("," if a.ndim == 1 else "") + ")"
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    # Padded with spaces and a newline so the data starts 64-byte aligned (NumPy's layout).
    pad = -(len(text) + 1 + 10) % 64
    text = (text + " " * pad + "\n").encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


def _write_npy(f, a):
    f.write(_npy_header(a))
    f.write(_bytes_of(a).data)


def save(file, arr):
    """Saves one array as .npy (adding the suffix when missing), as MLX's ``save``."""
    path = _with_suffix(_path(file, "save"), "npy")
    a = _core.array(arr)
    header = _npy_header(a)  # checks the dtype before anything is written
    _atomic_write(path, lambda f: (f.write(header), f.write(_bytes_of(a).data)))


# --- .npz ---------------------------------------------------------------------------------------

def _align_extra(offset, name_len):
    """A zip extra field (zipalign's id 0xD935) that puts a stored member's data, and so its
    64-byte aligned npy data, on a 64-byte boundary of the file: loads can then map it."""
    fixed = offset + 30 + name_len + 4 + 20  # local header, name, this field's header, zip64 field
    pad = -fixed % 64
    return struct.pack("<HH", 0xD935, pad) + b"\0" * pad


def _savez(file, args, kwargs, compression, op):
    path = _with_suffix(_path(file, op), "npz")
    arrays = {f"arr_{i}": a for i, a in enumerate(args)}
    for k, v in kwargs.items():
        if k in arrays:
            raise op_error(op, f"cannot use un-named variables and keyword {k}")
        arrays[k] = v
    arrays = {k: _core.array(v) for k, v in arrays.items()}
    for a in arrays.values():
        _npy_header(a)

    def write(f):
        with zipfile.ZipFile(f, "w", compression=compression, allowZip64=True) as z:
            for k, a in arrays.items():
                info = zipfile.ZipInfo(k + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = compression
                if compression == zipfile.ZIP_STORED:
                    info.extra = _align_extra(f.tell(), len(info.filename.encode()))
                with z.open(info, "w", force_zip64=True) as m:
                    _write_npy(m, a)

    _atomic_write(path, write)


def savez(file, *args, **kwargs):
    """Saves arrays to an uncompressed .npz (positional ones as ``arr_0``, ``arr_1``, ...)."""
    _savez(file, args, kwargs, zipfile.ZIP_STORED, "savez")


def savez_compressed(file, *args, **kwargs):
    """Saves arrays to a deflate-compressed .npz."""
    _savez(file, args, kwargs, zipfile.ZIP_DEFLATED, "savez_compressed")


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
                    out[name] = _core._load_npy(path, info.header_offset + 30 + n + extra, info.file_size)
                else:
                    out[name] = _core._load_npy_bytes(z.read(info), f"{path}:{info.filename}")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, OSError) as e:
        raise op_error("load", f"{path}: not a readable npz archive ({e})") from None
    return out


# --- .safetensors -------------------------------------------------------------------------------

def save_safetensors(file, arrays, metadata=None):
    """Saves a dict of arrays as .safetensors, with an optional dict of string metadata."""
    path = _with_suffix(_path(file, "save_safetensors"), "safetensors")
    if not isinstance(arrays, dict):
        raise op_error("save_safetensors", "arrays must be a dict of name -> array")
    header = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise op_error("save_safetensors", "metadata must map strings to strings")
        header["__metadata__"] = dict(metadata)
    arrays = {str(k): _core.array(v) for k, v in arrays.items()}
    offset = 0
    for k, a in arrays.items():
        header[k] = {"dtype": _NAMES[a.dtype][0], "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # data 8-byte aligned, as the safetensors package writes

    def write(f):
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for a in arrays.values():
            f.write(_bytes_of(a).data)

    _atomic_write(path, write)


# --- load ---------------------------------------------------------------------------------------

def load(file, format=None, return_metadata=False, stream=None):
    """Loads .npy (an array), .npz, .safetensors or .gguf (a dict of arrays) by suffix or ``format``.

    With ``return_metadata`` (safetensors and GGUF), returns ``(arrays, metadata)``.
    """
    path = _path(file, "load")
    fmt = format or os.path.splitext(path)[1][1:]
    if fmt not in _FORMATS:
        raise op_error("load", f"{path}: unknown format {fmt!r}; give format= one of {', '.join(_FORMATS)}")
    if return_metadata and fmt not in ("safetensors", "gguf"):
        raise op_error("load", f"{path}: metadata can only be returned for safetensors and gguf files")
    if fmt == "npy":
        return _core._load_npy(path)
    if fmt == "npz":
        return _load_npz(path)
    arrays, meta = _core._load_safetensors(path) if fmt == "safetensors" else _core._load_gguf(path)
    return (arrays, meta) if return_metadata else arrays
