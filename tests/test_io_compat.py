"""load/save as MLX, run on both (tests/_impl.py): file objects, big-endian and Fortran npy,
float8 (e4m3) codes in safetensors and from_fp8/to_fp8, loaded buffers and no-op results, the
errors of truncated files, GGUF's K-quants and save_gguf."""

import io
import json
import struct

import ml_dtypes
import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import to_np

try:
    import mlx.core as mlx_core
except ImportError:  # pragma: no cover - depends on the environment
    mlx_core = None

gguf = pytest.importorskip("gguf")
from gguf.constants import GGML_QUANT_SIZES  # noqa: E402
from gguf.constants import GGMLQuantizationType as T  # noqa: E402

A = np.arange(12, dtype=np.float32).reshape(3, 4)

# --- file objects ------------------------------------------------------------------------------

SAVERS = {
    "npy": lambda f, a: mx.save(f, a),
    "npz": lambda f, a: mx.savez(f, a, b=a + 1),
    "npz_deflated": lambda f, a: mx.savez_compressed(f, x=a),
    "safetensors": lambda f, a: mx.save_safetensors(f, {"w": a}, {"k": "v"}),
}


def _values(loaded):
    if isinstance(loaded, dict):
        return {k: to_np(v).tolist() for k, v in loaded.items()}
    return to_np(loaded).tolist()


@pytest.mark.parametrize("kind", SAVERS)
def test_save_and_load_through_bytesio(kind):
    buf = io.BytesIO()
    SAVERS[kind](buf, mx.array(A))
    fmt = kind.split("_")[0]
    again = mx.load(io.BytesIO(buf.getvalue()), format=fmt)
    expected = {"npy": A.tolist(), "npz": {"arr_0": A.tolist(), "b": (A + 1).tolist()}}
    expected.update(npz_deflated={"x": A.tolist()}, safetensors={"w": A.tolist()})
    assert _values(again) == expected[kind if kind != "npz_deflated" else "npz_deflated"]


@pytest.mark.parametrize("kind", SAVERS)
def test_open_files_name_the_format(tmp_path, kind):
    fmt = kind.split("_")[0]
    path = tmp_path / f"f.{fmt}"
    with open(path, "wb") as f:
        SAVERS[kind](f, mx.array(A))
    with open(path, "rb") as f:
        by_name = _values(mx.load(f))
    assert by_name == _values(mx.load(str(path)))


def test_safetensors_metadata_from_a_file_object():
    buf = io.BytesIO()
    mx.save_safetensors(buf, {"w": mx.array(A)}, {"k": "v"})
    buf.seek(0)
    arrays, meta = mx.load(buf, format="safetensors", return_metadata=True)
    assert meta == {"k": "v"} and to_np(arrays["w"]).tolist() == A.tolist()


def test_file_objects_written_by_the_other_framework():
    if mlx_core is None or IS_MLX:
        pytest.skip("needs both nuvec and MLX")
    for save, load in [(mlx_core.save, mx.load), (mx.save, mlx_core.load)]:
        buf = io.BytesIO()
        save(buf, (mlx_core if save is mlx_core.save else mx).array(A))
        assert np.array(load(io.BytesIO(buf.getvalue()), format="npy")).tolist() == A.tolist()


def test_gguf_takes_only_paths():
    with pytest.raises(ValueError):
        mx.save_gguf(io.BytesIO(), {"a": mx.array(A)}, {})
    with pytest.raises(ValueError):
        mx.load(io.BytesIO(b"GGUF"), format="gguf")


def test_what_is_not_a_file():
    class WriteOnly:  # no seek, tell or closed: not a file object to MLX
        def write(self, b):
            return len(b)

    with pytest.raises(ValueError):
        mx.save(WriteOnly(), mx.array(A))
    with pytest.raises(ValueError):
        mx.save_safetensors(3, {"a": mx.array(A)})
    with pytest.raises(ValueError):
        mx.load(3)


def test_a_text_mode_file_raises_typeerror(tmp_path):
    with open(tmp_path / "t.npy", "w") as f, pytest.raises(TypeError):
        mx.save(f, mx.array(A))


@pytest.mark.nuvec_only  # MLX raises AttributeError (a BytesIO has no name)
def test_no_format_and_no_name_raises_operror():
    with pytest.raises(mx.OpError, match="format="):
        mx.load(io.BytesIO(b"x"))


# --- npy: byte order and Fortran order ------------------------------------------------------------


# MLX swaps a big-endian complex64 as one 8-byte word, exchanging the real and imaginary parts;
# nuvec swaps each part (docs/io.md).
BIG_COMPLEX = pytest.param(">c8", marks=pytest.mark.nuvec_only)


@pytest.mark.parametrize(
    "dt", [">f4", ">f8", ">f2", ">i2", ">i4", ">i8", ">u2", ">u4", ">u8", BIG_COMPLEX]
)
@pytest.mark.parametrize("fortran", [False, True])
def test_big_endian_npy(tmp_path, dt, fortran):
    x = (np.arange(24) - 7).reshape(2, 3, 4).astype(dt) * (1 if dt[1] == "u" else -1)
    if dt == ">c8":
        x = x + 1j * np.arange(24).reshape(2, 3, 4)
    x = np.asfortranarray(x.astype(dt)) if fortran else x.astype(dt)
    np.save(tmp_path / "b.npy", x)
    got = mx.load(str(tmp_path / "b.npy"))
    assert str(got.dtype).split(".")[-1] == x.dtype.newbyteorder("=").name
    np.testing.assert_array_equal(to_np(got), x)


def test_big_endian_in_npz_and_file_objects(tmp_path):
    x = np.arange(6, dtype=">i4").reshape(2, 3)
    np.savez(tmp_path / "b.npz", x=x)
    np.testing.assert_array_equal(to_np(mx.load(str(tmp_path / "b.npz"))["x"]), x)
    buf = io.BytesIO()
    np.save(buf, np.asfortranarray(x.astype(">f8")))
    np.testing.assert_array_equal(to_np(mx.load(io.BytesIO(buf.getvalue()), format="npy")), x)


# --- float8 (e4m3) ------------------------------------------------------------------------------

CODES = np.arange(256, dtype=np.uint8)
E4M3 = CODES.view(ml_dtypes.float8_e4m3fn).astype(np.float32)  # the format's values


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_from_fp8_decodes_every_code(dtype):
    got = mx.from_fp8(mx.array(CODES), getattr(mx, dtype))
    assert got.dtype == getattr(mx, dtype)
    np.testing.assert_array_equal(to_np(got.astype(mx.float32)), E4M3)  # NaN where NaN
    assert mx.from_fp8(mx.array(CODES)).dtype == mx.bfloat16


def _round_to_e4m3(x):
    """e4m3 rounding (ml_dtypes: to nearest, ties to even) with MLX's saturation at +-448."""
    sat = np.isnan(x) | (np.abs(x) > 448)
    near = np.where(sat, 0, x).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return np.where(sat, np.where(np.signbit(x), 0xFE, 0x7E), near).astype(np.uint8)


def test_to_fp8_rounds_to_nearest_even_and_saturates():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20000).astype(np.float32) * 10.0 ** rng.integers(-4, 4, 20000)
    mids = (E4M3[:126].astype(np.float64) + E4M3[1:127]) / 2  # exact ties between codes
    x = np.concatenate([x, mids, -mids, E4M3[:127], [448, 449, 480, 1e30, np.inf, -np.inf, np.nan]])
    x = x.astype(np.float32)
    for dtype in (mx.float32, mx.float16, mx.bfloat16):
        narrowed = to_np(mx.array(x).astype(dtype).astype(mx.float32))
        got = to_np(mx.to_fp8(mx.array(x).astype(dtype)))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, _round_to_e4m3(narrowed))


@pytest.mark.nuvec_only  # compares with MLX itself, bit for bit
@pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")
def test_fp8_bit_for_bit_as_mlx():
    for name, ubits in [("float16", "uint16"), ("bfloat16", "uint16"), ("float32", "uint32")]:
        ours = mx.from_fp8(mx.array(CODES), getattr(mx, name)).view(getattr(mx, ubits))
        theirs = mlx_core.from_fp8(mlx_core.array(CODES), getattr(mlx_core, name))
        np.testing.assert_array_equal(to_np(ours), np.array(theirs.view(getattr(mlx_core, ubits))))
    every_half = np.arange(65536, dtype=np.uint16)
    rng = np.random.default_rng(1)
    floats = rng.integers(0, 2**32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    for bits, name in [(every_half, "float16"), (every_half, "bfloat16"), (floats, "float32")]:
        ours = mx.to_fp8(mx.array(bits).view(getattr(mx, name)))
        theirs = mlx_core.to_fp8(mlx_core.array(bits).view(getattr(mlx_core, name)))
        np.testing.assert_array_equal(to_np(ours), np.array(theirs), err_msg=name)


@pytest.mark.nuvec_only  # MLX's float64 results are wrong (docs/io.md)
def test_fp8_float64():
    np.testing.assert_array_equal(to_np(mx.from_fp8(mx.array(CODES), mx.float64)), E4M3)
    x = np.array([1.0, 500, 0.3, -2.5e-3, 1e-300, np.nan, -np.inf])
    np.testing.assert_array_equal(to_np(mx.to_fp8(mx.array(x))), _round_to_e4m3(x))


def test_fp8_argument_errors():
    with pytest.raises(ValueError):
        mx.from_fp8(mx.array(CODES.astype(np.int8)))
    with pytest.raises(ValueError):
        mx.from_fp8(mx.array(CODES), mx.int32)
    with pytest.raises(ValueError):
        mx.to_fp8(mx.array([1, 2]))
    with pytest.raises(ValueError):
        mx.to_fp8(mx.array([1 + 1j]))
    with pytest.raises(TypeError):
        mx.to_fp8(1.5)


def _safetensors(path, dtype, data, shape):
    header = json.dumps({"w": {"dtype": dtype, "shape": shape, "data_offsets": [0, len(data)]}})
    header = header.encode() + b" " * ((8 - len(header) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return str(path)


def test_safetensors_float8_e4m3_loads_as_codes(tmp_path):
    path = _safetensors(tmp_path / "f8.safetensors", "F8_E4M3", CODES.tobytes(), [16, 16])
    w = mx.load(path)["w"]
    assert w.dtype == mx.uint8
    np.testing.assert_array_equal(to_np(mx.from_fp8(w, mx.float32)).ravel(), E4M3)
    path = _safetensors(tmp_path / "f5.safetensors", "F8_E5M2", bytes(4), [4])
    with pytest.raises(RuntimeError):
        mx.load(path)


# --- loaded buffers and no-op results -------------------------------------------------------------


@pytest.mark.nuvec_only  # memory counters: nuvec's allocator (MLX's counts differ)
def test_loaded_arrays_and_no_op_results_share_memory(tmp_path):
    big = np.arange(1 << 20, dtype=np.float32)  # 4 MiB
    np.save(tmp_path / "big.npy", big)
    mx.eval(mx.zeros(1))
    before = mx.get_active_memory()
    x = mx.load(str(tmp_path / "big.npy"))
    same = [x.astype(mx.float32), x.reshape(big.shape), x.reshape(1, -1)[0], x + 0]
    mx.eval(same[:3])
    assert mx.get_active_memory() - before < big.nbytes // 2  # mapped, not copied
    y = same[3] * 2  # the loaded buffer is an input like any other
    np.testing.assert_array_equal(to_np(y), big * 2)
    for s in same:
        np.testing.assert_array_equal(to_np(s).ravel(), big)


N_DONATED = 1 << 22  # float32: 16 MiB


def _peak_of(f):
    """The allocator's peak over what was active before ``f`` ran, in bytes."""
    mx.eval(mx.zeros(1))
    mx.reset_peak_memory()
    base = mx.get_active_memory()
    f()
    return mx.get_peak_memory() - base


NO_OPS = {
    "none": lambda x: x,
    "astype": lambda x: x.astype(mx.float32),
    "reshape": lambda x: x.reshape(N_DONATED),
    "reshape_2d": lambda x: x.reshape(2, -1),
    "flatten": lambda x: x.flatten(),
    "squeeze": lambda x: mx.squeeze(x),
}


@pytest.mark.parametrize("noop", NO_OPS)
def test_no_op_results_are_donated(noop):
    def chain():
        x = mx.ones((N_DONATED,))
        mx.eval(x)
        y = NO_OPS[noop](x)
        del x
        z = y * 2  # y's buffer (x's) becomes z's: one buffer at a time
        del y
        mx.eval(z)
        assert float(z.reshape(-1)[-1].item()) == 2.0

    assert _peak_of(chain) < 1.25 * 4 * N_DONATED


def test_loaded_arrays_cost_one_buffer(tmp_path):
    np.save(tmp_path / "big.npy", np.ones(N_DONATED, np.float32))

    def chain():
        x = mx.load(str(tmp_path / "big.npy"))
        mx.eval(x)
        z = x * 2  # MLX donates the loaded buffer; nuvec's is the file's pages (not counted)
        del x
        mx.eval(z)
        assert float(z[-1].item()) == 2.0

    assert _peak_of(chain) < 1.25 * 4 * N_DONATED


def test_loaded_arrays_can_be_updated_and_donated(tmp_path):
    np.save(tmp_path / "w.npy", A)
    w = mx.load(str(tmp_path / "w.npy"))
    w2 = mx.load(str(tmp_path / "w.npy"))
    w += 1  # updates the array, never the file
    out = (w2 * 2).astype(mx.float32).reshape(3, 4)
    np.testing.assert_array_equal(to_np(w), A + 1)
    np.testing.assert_array_equal(to_np(out), A * 2)
    np.testing.assert_array_equal(np.load(tmp_path / "w.npy"), A)
    np.testing.assert_array_equal(to_np(mx.load(str(tmp_path / "w.npy"))), A)


# --- truncated files ------------------------------------------------------------------------------


def _written(tmp_path, fmt):
    a = mx.array(np.arange(64, dtype=np.float32).reshape(8, 8))
    path = str(tmp_path / f"full.{fmt}")
    if fmt == "npy":
        mx.save(path, a)
    elif fmt == "npz":
        mx.savez(path, a=a, b=a)
    elif fmt == "safetensors":
        mx.save_safetensors(path, {"a": a, "b": a})
    else:
        mx.save_gguf(path, {"a": a, "b": a}, {"k": "v"})
    return open(path, "rb").read()


@pytest.mark.parametrize(
    "fmt,error",
    [
        ("npy", RuntimeError),
        ("npz", ValueError),
        ("safetensors", RuntimeError),
        ("gguf", RuntimeError),
    ],
)
def test_truncated_files_raise_as_mlx(tmp_path, fmt, error):
    data = _written(tmp_path, fmt)
    for cut in (0, 4, 9, 20, 60, len(data) // 2, len(data) - 1):
        (tmp_path / f"cut.{fmt}").write_bytes(data[:cut])
        with pytest.raises(error):  # MLX finds a short npy's data when it is evaluated
            mx.eval(mx.load(str(tmp_path / f"cut.{fmt}")))


@pytest.mark.nuvec_only  # MLX returns a short npy's array and fails when it is evaluated
@pytest.mark.parametrize("fmt", ["npy", "npz", "safetensors", "gguf"])
def test_truncated_files_raise_at_load(tmp_path, fmt):
    data = _written(tmp_path, fmt)
    for cut in range(0, len(data), 7):
        (tmp_path / f"cut.{fmt}").write_bytes(data[:cut])
        result = None
        with pytest.raises(mx.io.LoadError):
            result = mx.load(str(tmp_path / f"cut.{fmt}"))
        assert result is None  # nothing half-loaded


@pytest.mark.parametrize("fmt", ["npy", "safetensors"])
def test_truncated_file_objects_raise(tmp_path, fmt):
    data = _written(tmp_path, fmt)
    for cut in (0, 9, len(data) // 2, len(data) - 1):
        with pytest.raises(RuntimeError):
            mx.load(io.BytesIO(data[:cut]), format=fmt)


@pytest.mark.nuvec_only  # nuvec's LoadError is an OpError (naming the file) and a RuntimeError
def test_load_errors_are_operrors(tmp_path):
    (tmp_path / "cut.npy").write_bytes(_written(tmp_path, "npy")[:50])
    with pytest.raises(mx.io.LoadError, match="cut.npy") as e:
        mx.load(str(tmp_path / "cut.npy"))
    assert isinstance(e.value, mx.OpError) and isinstance(e.value, RuntimeError)
    with pytest.raises(RuntimeError):  # a missing file, as MLX
        mx.load(str(tmp_path / "missing.safetensors"))


# --- GGUF: K-quants -----------------------------------------------------------------------------


def _gguf_file(path, tensors, metadata=()):
    w = gguf.GGUFWriter(str(path), "llama")
    for key, value in metadata:
        w.add_string(key, value)
    for name, (raw, kind) in tensors.items():
        if kind in (T.F32, T.F16):
            w.add_tensor(name, raw)
        else:
            w.add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


def _random_blocks(kind, rows, cols, seed):
    """Random bytes as blocks of `kind`, their float16 scales made finite and small."""
    block, size = GGML_QUANT_SIZES[kind]
    raw = np.random.default_rng(seed).integers(0, 256, (rows * cols // block, size), dtype=np.uint8)
    halves = {  # byte offsets of each type's float16 fields
        T.Q2_K: (80, 82),
        T.Q3_K: (108,),
        T.Q4_K: (0, 2),
        T.Q5_K: (0, 2),
        T.Q6_K: (208,),
        T.Q5_0: (0,),
        T.Q5_1: (0, 2),
    }
    scales = np.random.default_rng(seed + 1).uniform(-0.01, 0.01, (len(raw), 2)).astype(np.float16)
    for i, off in enumerate(halves.get(kind, ())):
        raw[:, off : off + 2] = scales[:, i : i + 1].view(np.uint8)
    if kind == T.Q8_K:  # a float32 scale
        raw[:, 0:4] = scales[:, :1].astype(np.float32).view(np.uint8)
    return raw.reshape(rows, -1)


def _dequantized(raw, kind):
    if kind == T.Q8_K:  # the gguf package has no Q8_K: d * q, with d a float32
        b = raw.reshape(-1, GGML_QUANT_SIZES[kind][1])
        d = b[:, :4].copy().view(np.float32)
        return (d * b[:, 4:260].view(np.int8)).reshape(raw.shape[0], -1)
    return gguf.quants.dequantize(raw, kind)


# MLX reads Q2_K and Q6_K (as float16); its Q4_K values are wrong for half the elements, and it
# cannot read Q3_K, Q5_K, Q8_K, Q5_0 or Q5_1: nuvec reads them all (docs/io.md).
MLX_READS = (T.Q2_K, T.Q6_K)
KINDS = (T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_K, T.Q5_0, T.Q5_1)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_gguf_quantized_types_load_dequantized(tmp_path, kind):
    if IS_MLX and kind not in MLX_READS:
        pytest.skip(f"MLX cannot read {kind.name} correctly (docs/io.md)")
    raw = _random_blocks(kind, 3, 512, seed=int(kind))
    path = _gguf_file(tmp_path / "q.gguf", {"w.weight": (raw, kind)})
    w = mx.load(path)["w.weight"]
    assert w.dtype == mx.float16 and tuple(w.shape) == (3, 512)
    expected = _dequantized(raw, kind).astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(to_np(w), expected)


@pytest.mark.nuvec_only  # compares with MLX itself
@pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")
def test_gguf_k_quants_as_mlx(tmp_path):
    for kind in MLX_READS:
        raw = _random_blocks(kind, 2, 1024, seed=7)
        path = _gguf_file(tmp_path / "q.gguf", {"w.weight": (raw, kind)})
        ours, theirs = mx.load(path)["w.weight"], mlx_core.load(path)["w.weight"]
        np.testing.assert_array_equal(
            to_np(ours.view(mx.uint16)), np.array(theirs.view(mlx_core.uint16))
        )
    for kind in (T.Q3_K, T.Q5_K, T.Q5_0):  # MLX fails; nuvec reads them
        raw = _random_blocks(kind, 2, 512, seed=3)
        path = _gguf_file(tmp_path / "q.gguf", {"w.weight": (raw, kind)})
        with pytest.raises(RuntimeError):
            mlx_core.load(path)
        assert mx.load(path)["w.weight"].shape == (2, 512)


# --- save_gguf ---------------------------------------------------------------------------------

GGUF_META = {
    "s": "text",
    "names": ["a", "b"],
    "empty": [],
    "f": np.array(1.5, np.float32),
    "v": np.array([1, 2, 3], np.int32),
    "u8": np.array(7, np.uint8),
    "i64": np.array([5, -6], np.int64),
    "flag": np.array(True),
}


def _meta(meta):
    return {k: mx.array(v) if isinstance(v, np.ndarray) else v for k, v in meta.items()}


@pytest.mark.parametrize("d", ["float32", "float16", "int8", "int16", "int32"])
def test_save_gguf_round_trip(tmp_path, d):
    x = (np.arange(24).reshape(2, 3, 4) - 5).astype(d)
    arrays = {"w": mx.array(x), "t": mx.array(x).transpose(2, 0, 1), "s": mx.array(x[0, 0, 0])}
    mx.save_gguf(str(tmp_path / "m"), arrays, _meta(GGUF_META))  # adds the suffix
    loaded, meta = mx.load(str(tmp_path / "m.gguf"), return_metadata=True)
    for k, a in arrays.items():
        assert loaded[k].dtype == a.dtype
        np.testing.assert_array_equal(to_np(loaded[k]), to_np(a))
    assert set(meta) == set(GGUF_META)
    for k, v in GGUF_META.items():
        if isinstance(v, np.ndarray):
            assert meta[k].dtype == mx.array(v).dtype
            np.testing.assert_array_equal(to_np(meta[k]), v)
        else:
            assert meta[k] == v
    reader = gguf.GGUFReader(str(tmp_path / "m.gguf"))
    tensors = {t.name: t for t in reader.tensors}
    np.testing.assert_array_equal(np.asarray(tensors["w"].data).reshape(x.shape), x)
    assert reader.fields["s"].contents() == "text" and reader.fields["names"].contents() == [
        "a",
        "b",
    ]


@pytest.mark.nuvec_only  # reads back with MLX's loader
@pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")
def test_save_gguf_read_by_mlx(tmp_path):
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    mx.save_gguf(str(tmp_path / "m.gguf"), {"w": mx.array(x)}, _meta(GGUF_META))
    arrays, meta = mlx_core.load(str(tmp_path / "m.gguf"), return_metadata=True)
    np.testing.assert_array_equal(np.array(arrays["w"]), x)
    assert meta["names"] == ["a", "b"] and meta["s"] == "text"
    np.testing.assert_array_equal(np.array(meta["i64"]), GGUF_META["i64"])


def test_save_gguf_refuses_what_mlx_refuses(tmp_path):
    path = str(tmp_path / "bad.gguf")
    for d in ("bfloat16", "float64", "int64", "uint8", "bool_", "complex64"):
        with pytest.raises((RuntimeError, ValueError)):
            mx.save_gguf(path, {"w": mx.zeros((2,), dtype=getattr(mx, d))}, {})
    w = {"w": mx.zeros((2,))}
    for bad in (mx.zeros((2, 2)), mx.array([], mx.float32), mx.array(1.0, mx.float16)):
        with pytest.raises((RuntimeError, ValueError)):
            mx.save_gguf(path, w, {"m": bad})
    mx.save_gguf(path, w)  # metadata is optional
    assert list(mx.load(path)) == ["w"]


@pytest.mark.nuvec_only  # MLX raises RuntimeError('std::bad_cast') for these
def test_save_gguf_metadata_errors_are_operrors(tmp_path):
    for bad in ({"m": 3}, {"m": 1.5}, {"m": ["a", 1]}, {1: "a"}):
        with pytest.raises(mx.OpError):
            mx.save_gguf(str(tmp_path / "bad.gguf"), {"w": mx.zeros((2,))}, bad)
    assert not (tmp_path / "bad.gguf").exists()


# --- a Q4_K_M model -------------------------------------------------------------------------------


def _q4_k_m_kind(name, shape, layer, n_layers):
    """llama.cpp's Q4_K_M choice for a tensor: Q6_K for attn_v and for ffn_down in the first and
    last eighth of the layers and every third one, Q4_K elsewhere; rows that are not a multiple of
    256 fall back as llama.cpp does (Q4_K -> Q5_0, Q6_K -> Q8_0); vectors stay float32."""
    if len(shape) == 1:
        return T.F32
    more = "attn_v" in name or (
        "ffn_down" in name
        and (
            layer < n_layers // 8 or layer >= 7 * n_layers // 8 or (layer - n_layers // 8) % 3 == 2
        )
    )
    if shape[-1] % 256:
        return T.Q8_0 if more else T.Q5_0
    return T.Q6_K if more else T.Q4_K


@pytest.fixture(scope="module")
def q4_k_m_model(tmp_path_factory):
    """SmolLM2-135M (bundled as Q4_1) dequantized and requantized with the Q4_K_M mix."""
    from gguf_quantize import q4_k, q5_0, q6_k
    from test_io import _smollm2

    reader = gguf.GGUFReader(_smollm2())
    n_layers = 1 + max(
        int(t.name.split(".")[1]) for t in reader.tensors if t.name.startswith("blk.")
    )
    quantize = {T.Q4_K: q4_k, T.Q6_K: q6_k, T.Q5_0: q5_0}
    quantize[T.Q8_0] = lambda x: gguf.quants.quantize(x, T.Q8_0)
    tensors, original = {}, {}
    for t in reader.tensors:
        w = original[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        layer = int(t.name.split(".")[1]) if t.name.startswith("blk.") else 0
        kind = _q4_k_m_kind(t.name, w.shape, layer, n_layers)
        tensors[t.name] = (w if kind == T.F32 else quantize[kind](w.reshape(-1, w.shape[-1])), kind)
    kinds = {kind for _, kind in tensors.values()}
    assert {T.Q4_K, T.Q6_K} <= kinds
    path = _gguf_file(tmp_path_factory.mktemp("q4km") / "smollm2-q4_k_m.gguf", tensors)
    return path, tensors, original


def _loaded_values(arrays, name, kind):
    """A loaded tensor's values as float32 (a Q8_0 tensor is MLX's quantized triple)."""
    if kind != T.Q8_0:
        return to_np(arrays[name]).astype(np.float32)
    prefix = name[: -len(".weight")]
    w = to_np(arrays[name]).view(np.uint8).astype(np.float32)
    w = w.reshape(*w.shape[:-1], -1, 32)
    scales = to_np(arrays[prefix + ".scales"]).astype(np.float32)[..., None]
    biases = to_np(arrays[prefix + ".biases"]).astype(np.float32)[..., None]
    return (w * scales + biases).reshape(*w.shape[:-2], -1)


@pytest.mark.nuvec_only  # MLX cannot read Q5_0, llama.cpp's fallback for SmolLM2's 576-wide rows
def test_a_q4_k_m_model_loads(q4_k_m_model):
    path, tensors, original = q4_k_m_model
    arrays = mx.load(path)
    for name, (raw, kind) in tensors.items():
        got, w = _loaded_values(arrays, name, kind), original[name]
        assert np.abs(got.reshape(w.shape) - w).max() <= 0.1 * np.abs(w).max(), name
        if kind == T.F32:
            np.testing.assert_array_equal(got, raw)
        elif kind in (T.Q4_K, T.Q6_K) or name.startswith(("blk.0.", "token_embd")):  # (time)
            expected = gguf.quants.dequantize(raw, kind).reshape(got.shape)
            if kind == T.Q8_0:  # float16 scale and bias: rounded
                np.testing.assert_allclose(got, expected, atol=1e-3)
            else:
                assert arrays[name].dtype == mx.float16
                np.testing.assert_array_equal(got, expected.astype(np.float16), err_msg=name)
