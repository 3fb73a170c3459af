"""Mutated files (truncations, flipped header bytes, lying lengths and offsets) either load or
raise OpError naming the file: never another exception, never a crash, never a read past the end.
A crash here kills the test process, which fails the run."""

import struct

import numpy as np
import pytest

from _impl import mx

pytestmark = pytest.mark.nuvec_only  # MLX's loaders raise other errors (and can crash)


def gguf_bytes():
    """A small GGUF v3 file: string and array metadata, an F32, a Q8_0 and a Q4_0 tensor."""

    def s(text):
        b = text.encode()
        return struct.pack("<Q", len(b)) + b

    kv = s("general.architecture") + struct.pack("<I", 8) + s("llama")
    kv += (
        s("tokenizer.ggml.scores")
        + struct.pack("<IIQ", 9, 6, 3)
        + struct.pack("<3f", 0.5, 1.5, 2.5)
    )
    tensors = [
        ("norm", [4], 0, np.arange(4, dtype=np.float32).tobytes()),
        ("w8.weight", [32, 2], 8, (struct.pack("<e", 0.5) + bytes(range(32))) * 2),
        ("w4.weight", [32], 2, struct.pack("<e", 0.25) + bytes(range(16))),
    ]
    info, data = b"", b""
    for name, dims, ggml_type, raw in tensors:
        info += (
            s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        )
        info += struct.pack("<IQ", ggml_type, len(data))
        data += raw + b"\0" * (-len(raw) % 32)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 2) + kv + info
    return head + b"\0" * (-len(head) % 32) + data


def safetensors_bytes(tmp_path):
    path = str(tmp_path / "seed.safetensors")
    mx.save_safetensors(
        path,
        {
            "a": mx.array(np.arange(6, dtype=np.float32).reshape(2, 3)),
            "b": mx.array([1, 2, 3], dtype=mx.int16),
        },
        {"k": "v"},
    )
    return open(path, "rb").read()


def npy_bytes(tmp_path):
    path = str(tmp_path / "seed.npy")
    np.save(path, np.arange(10, dtype=np.float64).reshape(2, 5))
    return open(path, "rb").read()


def npz_bytes(tmp_path):
    path = str(tmp_path / "seed.npz")
    mx.savez(path, a=mx.array([1.0, 2.0]), b=mx.array([[1, 2]], dtype=mx.int8))
    return open(path, "rb").read()


def mutations(data, rng, header_end):
    """Truncations, flipped bytes and lying length fields of a valid file."""
    for cut in sorted(set(range(0, min(len(data), header_end + 16))) | {len(data) - 1}):
        yield f"truncated to {cut}", data[:cut]
    for k in range(150):
        b = bytearray(data)
        for _ in range(rng.integers(1, 4)):
            b[rng.integers(0, header_end)] = rng.integers(0, 256)
        yield f"flipped bytes #{k}", bytes(b)
    for k in range(0, min(header_end, 64), 4):  # any 8 or 4 bytes might be a length: make them lie
        for lie in (0xFFFFFFFFFFFFFFFF, 2**40, len(data), len(data) + 1, 1 << 31):
            b = bytearray(data)
            b[k : k + 8] = struct.pack("<Q", lie)[: len(b[k : k + 8])]
            yield f"length at {k} = {lie}", bytes(b)


def check(tmp_path, suffix, data, label):
    path = tmp_path / f"m.{suffix}"
    path.write_bytes(data)
    try:
        out = mx.load(str(path))
    except mx.OpError as e:
        assert str(path) in str(e), f"{label}: the error does not name the file: {e}"
        return False
    except Exception as e:  # noqa: BLE001 - anything else is the bug this test looks for
        pytest.fail(f"{label}: {type(e).__name__}: {e}")
    # It loaded: every element must be readable (a read past the end would crash here).
    for a in out.values() if isinstance(out, dict) else [out]:
        np.asarray(a.astype(mx.float32) if a.dtype == mx.bfloat16 else a)
    return True


@pytest.mark.parametrize("fmt", ["safetensors", "npy", "npz", "gguf"])
def test_mutated_files_load_or_raise_op_error(tmp_path, fmt):
    data = {
        "safetensors": lambda: safetensors_bytes(tmp_path),
        "npy": lambda: npy_bytes(tmp_path),
        "npz": lambda: npz_bytes(tmp_path),
        "gguf": gguf_bytes,
    }[fmt]()
    header_end = {
        "safetensors": 8 + struct.unpack("<Q", data[:8])[0],
        "npy": 128,
        "npz": len(data),
        "gguf": len(data) - 160,
    }[fmt]
    assert check(tmp_path, fmt, data, "the valid seed file")
    rng = np.random.default_rng(list(fmt.encode()))
    failed = sum(
        not check(tmp_path, fmt, m, label) for label, m in mutations(data, rng, header_end)
    )
    assert failed > 0  # the mutations do reach the checks


@pytest.mark.parametrize(
    "header",
    [
        b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 9]}}',  # size lies
        b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}',  # past the end
        b'{"a": {"dtype": "F8_E5M2", "shape": [2], "data_offsets": [0, 2]}}',  # unknown dtype
        b'{"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}',  # negative dim
        b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}',  # reversed
        b"[1, 2]",  # not an object
        b'{"a": ' * 200 + b"1" + b"}" * 200,  # deep nesting
    ],
)
def test_lying_safetensors_headers(tmp_path, header):
    data = struct.pack("<Q", len(header)) + header + bytes(8)
    assert not check(tmp_path, "safetensors", data, header[:40])


def test_absurd_header_length_and_wrong_magic(tmp_path):
    data = struct.pack("<Q", 1 << 50) + b"{}"
    with pytest.raises(mx.OpError, match="absurd"):
        (tmp_path / "a.safetensors").write_bytes(data)
        mx.load(str(tmp_path / "a.safetensors"))
    (tmp_path / "b.npy").write_bytes(b"\x93NUMPX\x01\x00" + bytes(120))
    with pytest.raises(mx.OpError, match="magic"):
        mx.load(str(tmp_path / "b.npy"))
    (tmp_path / "c.gguf").write_bytes(b"GGUX" + bytes(60))
    with pytest.raises(mx.OpError, match="magic"):
        mx.load(str(tmp_path / "c.gguf"))


def test_gguf_seed_loads_as_mlx_triples(tmp_path):
    (tmp_path / "s.gguf").write_bytes(gguf_bytes())
    arrays, meta = mx.load(str(tmp_path / "s.gguf"), return_metadata=True)
    assert meta["general.architecture"] == "llama"
    np.testing.assert_array_equal(
        np.asarray(meta["tokenizer.ggml.scores"]), np.float32([0.5, 1.5, 2.5])
    )
    np.testing.assert_array_equal(np.asarray(arrays["norm"]), np.arange(4, dtype=np.float32))
    assert arrays["w8.weight"].shape == (2, 8) and arrays["w8.scales"].shape == (2, 1)
    # Q8_0 dequantises to d * q with q the int8 bytes: MLX's triple gives scale * (q + 128) + bias.
    w = np.asarray(arrays["w8.weight"]).view(np.uint8).astype(np.float32)
    deq = (
        w * np.float32(np.asarray(arrays["w8.scales"]))[..., :1]
        + np.float32(np.asarray(arrays["w8.biases"]))[..., :1]
    )
    np.testing.assert_array_equal(
        deq, 0.5 * np.arange(32, dtype=np.int8).astype(np.float32)[None].repeat(2, 0)
    )
    assert arrays["w4.weight"].shape == (4,) and arrays["w4.biases"].shape == (1,)
