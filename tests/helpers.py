"""Shared helpers: dtype tables, conversions between the framework and NumPy, and the one
assertion helper every test uses (`assert_array_equal_np`)."""

import zlib

import numpy as np

from _impl import mx

# The fourteen dtypes, in COMPAT.md's order.
DTYPE_NAMES = (
    "bool",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
    "complex64",
)
UINTS = ("uint8", "uint16", "uint32", "uint64")
SINTS = ("int8", "int16", "int32", "int64")
INTS = UINTS + SINTS
FLOATS = ("float16", "float32", "float64", "bfloat16")
COMPLEX = ("complex64",)
INEXACT = FLOATS + COMPLEX
ALL = DTYPE_NAMES
BOOL_INT = ("bool",) + INTS
NO_COMPLEX = tuple(d for d in ALL if d not in COMPLEX)
REAL_NUMERIC = INTS + FLOATS

MX = {
    "bool": mx.bool_,
    "uint8": mx.uint8,
    "uint16": mx.uint16,
    "uint32": mx.uint32,
    "uint64": mx.uint64,
    "int8": mx.int8,
    "int16": mx.int16,
    "int32": mx.int32,
    "int64": mx.int64,
    "float16": mx.float16,
    "float32": mx.float32,
    "float64": mx.float64,
    "bfloat16": mx.bfloat16,
    "complex64": mx.complex64,
}

# NumPy dtype that holds a dtype's values (NumPy has no bfloat16: float32 holds them exactly).
NP = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "bfloat16": np.float32,
    "complex64": np.complex64,
}

ITEMSIZE = {
    "bool": 1,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float16": 2,
    "float32": 4,
    "float64": 8,
    "bfloat16": 2,
    "complex64": 8,
}

# Largest finite value of each floating dtype.
FMAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": float(np.finfo(np.float32).max),
    "float64": float(np.finfo(np.float64).max),
}

# COMPAT.md promotion table (symmetric; rows/cols in DTYPE_NAMES order).
_ABBR = {
    "b": "bool",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "bf": "bfloat16",
    "c": "complex64",
}
_TABLE_TEXT = """
b     b    u8   u16  u32  u64  i8   i16  i32  i64  f16  f32  f64  bf   c
u8    u8   u8   u16  u32  u64  i16  i16  i32  i64  f16  f32  f64  bf   c
u16   u16  u16  u16  u32  u64  i32  i32  i32  i64  f16  f32  f64  bf   c
u32   u32  u32  u32  u32  u64  i64  i64  i64  i64  f16  f32  f64  bf   c
u64   u64  u64  u64  u64  u64  f32  f32  f32  f32  f16  f32  f64  bf   c
i8    i8   i16  i32  i64  f32  i8   i16  i32  i64  f16  f32  f64  bf   c
i16   i16  i16  i32  i64  f32  i16  i16  i32  i64  f16  f32  f64  bf   c
i32   i32  i32  i32  i64  f32  i32  i32  i32  i64  f16  f32  f64  bf   c
i64   i64  i64  i64  i64  f32  i64  i64  i64  i64  f16  f32  f64  bf   c
f16   f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f64  f32  c
f32   f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  f32  c
f64   f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c
bf    bf   bf   bf   bf   bf   bf   bf   bf   bf   f32  f32  f64  bf   c
c     c    c    c    c    c    c    c    c    c    c    c    c    c    c
"""
PROMOTE = {}
for _line in _TABLE_TEXT.strip().splitlines():
    _row, *_cells = _line.split()
    assert len(_cells) == 14, _line
    for _col, _cell in zip(DTYPE_NAMES, _cells):
        PROMOTE[(_ABBR[_row], _col)] = _ABBR[_cell]


def promote(*names):
    out = names[0]
    for n in names[1:]:
        out = PROMOTE[(out, n)]
    return out


def at_least_float(name):
    """MLX's rule for transcendental ops and true division: ints and bool compute in float32."""
    return name if name in INEXACT else "float32"


def dtype_name(d):
    """The name ('float32', ...) of a framework dtype, found by equality (not by repr)."""
    for name, md in MX.items():
        if d == md:
            return name
    raise AssertionError(f"unknown dtype {d!r}")


def seeded_rng(*parts):
    """A NumPy generator seeded from a stable hash of `parts` (test id, dtype, ...)."""
    return np.random.default_rng(zlib.crc32(repr(parts).encode()))


def round_to_bf16(x):
    """Round float values to the nearest bfloat16 (ties to even), returned as float32."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32).copy()
    out[np.isnan(x)] = np.nan
    return out


def np_values(values, name):
    """Values cast to what dtype `name` can hold, as a NumPy array (bfloat16 -> float32)."""
    if name == "bfloat16":
        return round_to_bf16(np.asarray(values, dtype=np.float64).astype(np.float32))
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(NP[name])


def to_mx(a, name):
    """A framework array holding the NumPy array `a` (exactly representable) as dtype `name`."""
    a = np.asarray(a)
    return mx.array(a, dtype=MX[name])


def to_np(x):
    """A framework array as NumPy (bfloat16 goes through float32, which holds it exactly)."""
    if x.dtype == mx.bfloat16:
        x = x.astype(mx.float32)
    return np.array(x)


def _kind(name):
    if name == "bool":
        return "b"
    if name in INTS:
        return "i"
    if name in FLOATS:
        return "f"
    return "c"


def assert_array_equal_np(got, expected, rtol=0.0, atol=0.0, dtype=None, err_msg=""):
    """Check a framework array against a NumPy reference: shape, then dtype, then values.

    `dtype` is the expected dtype's name (or a framework dtype); by default it is the name of
    `expected`'s NumPy dtype. Integer and bool results must match exactly; floating and complex
    results within `rtol`/`atol`, with NaNs matching NaNs and infinities of the same sign.
    """
    expected = np.asarray(expected)
    if not hasattr(got, "dtype") or isinstance(got, np.ndarray):
        raise AssertionError(f"{err_msg}: expected a framework array, got {type(got)!r}")
    got_shape = tuple(got.shape)
    assert got_shape == expected.shape, f"{err_msg}: shape {got_shape} != expected {expected.shape}"
    if dtype is None:
        dtype = np.dtype(expected.dtype).name
    elif not isinstance(dtype, str):
        dtype = dtype_name(dtype)
    got_dtype = dtype_name(got.dtype)
    assert got_dtype == dtype, f"{err_msg}: dtype {got_dtype} != expected {dtype}"
    got_np = to_np(got)
    assert got_np.shape == expected.shape, f"{err_msg}: exported shape {got_np.shape}"
    if _kind(dtype) in "bi" and rtol == 0 and atol == 0:
        exp = expected.astype(NP[dtype]) if expected.dtype != NP[dtype] else expected
        np.testing.assert_array_equal(got_np, exp, err_msg=err_msg, strict=False)
        return
    ref_t = np.complex128 if _kind(dtype) == "c" or np.iscomplexobj(expected) else np.float64
    np.testing.assert_allclose(
        got_np.astype(ref_t),
        expected.astype(ref_t),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        err_msg=err_msg,
    )


def run_script(script, **env):
    """The JSON a Python script prints, run in a subprocess with `env` added to the environment
    (NUVEC_CPU_ISA=..., NUVEC_NUM_THREADS=...): a kernel build or thread count chosen at start."""
    import json
    import os
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)
