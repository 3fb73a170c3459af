"""Function export of every primitive class: each case exports a function that records the
primitive (the file must name its codec's tag), imports it, and calls it on NEW inputs of the
same shapes (shapeless cases: of other shapes), bit for bit equal to calling the function
directly. Multi-output primitives (svd, eigh, qr, lu_factor, quantize, ...) are saved as one node
with several outputs; a file written before those existed still loads. MLX exports and imports
the same functions and computes the same values. A primitive class without a codec must be on
NOT_EXPORTABLE with its reason, so a new primitive cannot silently miss one."""

import json
import pathlib
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("nuvec's function file format; NUVEC_TEST_IMPL=mlx", allow_module_level=True)

import nuvec as nv  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _header(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"NUVECFN\0" and struct.unpack("<I", data[8:12]) == (1,)
    (n,) = struct.unpack("<Q", data[12:20])
    return json.loads(data[20 : 20 + n])


def _ops(path):
    return {node["op"] for t in _header(path)["traces"] for node in t["nodes"]}


# Inputs by kind, from a seeded generator: "f" normal float32, "wc" well-conditioned square
# matrices, "spd" symmetric positive definite, "sym" symmetric, "c" complex64, "u32" any uint32
# words, "idxN" uint32 indices below N, "tgtN" int32 targets below N, "seg8" sorted segment
# bounds in [0, 8], "s" 0-d positive float32.
def _make(kind, shape, rng):
    if kind == "f":
        return rng.standard_normal(shape).astype(np.float32)
    if kind in ("wc", "spd", "sym"):
        a = rng.standard_normal(shape).astype(np.float32)
        n = shape[-1]
        if kind == "wc":
            return a + np.float32(n) * np.eye(shape[-2], n, dtype=np.float32)
        if shape[-2] != n:  # a bad shape for a shape check
            return a
        s = a + np.swapaxes(a, -1, -2)
        return s + np.float32(2 * n) * np.eye(n, dtype=np.float32) if kind == "spd" else s
    if kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    if kind == "u32":
        return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)
    if kind.startswith("idx"):
        return rng.integers(0, int(kind[3:]), shape).astype(np.uint32)
    if kind.startswith("tgt"):
        return rng.integers(0, int(kind[3:]), shape).astype(np.int32)
    if kind == "seg8":
        return np.sort(rng.integers(0, 9, shape), axis=-1).astype(np.uint32)
    if kind == "s":
        return np.float32(rng.uniform(0.01, 0.1))
    raise AssertionError(kind)


@dataclass
class Case:
    name: str
    tags: set  # codec tags the file must hold
    fun: Callable  # module -> function (the module is nuvec or mlx.core)
    inputs: list  # (kind, shape)
    mlx: str = "close"  # MLX differential: close, abs (decompositions' signs), equal, or none
    shapeless: list = field(default_factory=list)  # other shapes of the inputs to replay on
    mlx_exports: bool = True  # MLX 0.32.4 cannot serialize LUF (lu, solve) nor SegmentedMM
    mlx_shapeless: bool = True  # MLX 0.32.4 replays it shapelessly too


def _cpu(m):
    return {"stream": m.cpu}


def _adam(m):
    def step(p, g, mom, v, lr):
        return m._core._adam_update(p, g, mom, v, lr, None, None, 0.9, 0.1, 0.999, 0.001, 1e-8)

    return step


def _set_rows(m):
    def f(a, u):
        y = a + 0
        y[1:3] = u
        return y

    return f


CASES = [
    Case("slice_update", {"slice_update"}, _set_rows, [("f", (4, 5)), ("f", (2, 5))]),
    Case(
        "slice_update_at_an_array_start",
        {"dynamic_slice_update"},
        lambda m: lambda a, u, at: m.slice_update(a, u, at, (0,)),
        [("f", (4, 5)), ("f", (2, 5)), ("tgt3", (1,))],
    ),
    Case(
        "inv",
        {"inverse"},
        lambda m: lambda a: m.linalg.inv(a, **_cpu(m)),
        [("wc", (3, 4, 4))],
        shapeless=[(2, 6, 6)],
        mlx_shapeless=False,
    ),
    Case(
        "tri_inv",
        {"inverse"},
        lambda m: lambda a: m.linalg.tri_inv(a, upper=True, **_cpu(m)),
        [("wc", (4, 4))],
    ),
    Case(
        "solve",
        {"solve"},
        lambda m: lambda a, b: m.linalg.solve(a, b, **_cpu(m)),
        [("wc", (4, 4)), ("f", (4, 2))],
        mlx_exports=False,
        shapeless=[(6, 6), (6, 3)],
        mlx_shapeless=False,
    ),
    Case(
        "solve_triangular",
        {"solve_triangular"},
        lambda m: lambda a, b: m.linalg.solve_triangular(a, b, upper=False, **_cpu(m)),
        [("wc", (4, 4)), ("f", (4, 3))],
    ),
    Case(
        "cholesky",
        {"cholesky"},
        lambda m: lambda a: m.linalg.cholesky(a, upper=True, **_cpu(m)),
        [("spd", (2, 4, 4))],
        shapeless=[(2, 6, 6)],
        mlx_shapeless=False,
    ),
    Case(
        "lu_factor",
        {"lu_factor"},
        lambda m: lambda a: m.linalg.lu_factor(a, **_cpu(m)),
        [("wc", (5, 5))],
        mlx_exports=False,
        shapeless=[(4, 6)],
        mlx_shapeless=False,
    ),
    Case(
        "lu",
        {"lu_factor"},
        lambda m: lambda a: m.linalg.lu(a, **_cpu(m)),
        [("wc", (4, 4))],
        mlx_exports=False,
    ),
    Case(
        "qr",
        {"decompose"},
        lambda m: lambda a: m.linalg.qr(a, **_cpu(m)),
        [("f", (5, 3))],
        "abs",
        shapeless=[(4, 4)],
        mlx_shapeless=False,
    ),
    Case(
        "svd",
        {"decompose"},
        lambda m: lambda a: m.linalg.svd(a, **_cpu(m)),
        [("f", (4, 3))],
        "abs",
        shapeless=[(6, 2)],
        mlx_shapeless=False,
    ),
    Case(
        "svd_values",
        {"decompose"},
        lambda m: lambda a: m.linalg.svd(a, compute_uv=False, **_cpu(m)),
        [("f", (2, 3, 5))],
    ),
    Case(
        "eigh",
        {"decompose"},
        lambda m: lambda a: m.linalg.eigh(a, **_cpu(m)),
        [("sym", (4, 4))],
        "abs",
        shapeless=[(6, 6)],
    ),
    Case(
        "eigvalsh",
        {"decompose"},
        lambda m: lambda a: m.linalg.eigvalsh(a, UPLO="U", **_cpu(m)),
        [("sym", (3, 3))],
    ),
    Case(
        "eig",
        {"decompose"},
        lambda m: lambda a: m.linalg.eig(a, **_cpu(m)),
        [("f", (3, 3))],
        "none",
    ),
    Case("fft", {"fft"}, lambda m: lambda a: m.fft.fft(a), [("c", (2, 8))]),
    Case("rfft2", {"fft"}, lambda m: lambda a: m.fft.rfft2(a), [("f", (4, 6))]),
    Case("irfft", {"fft"}, lambda m: lambda a: m.fft.irfft(a), [("c", (2, 5))]),
    Case(
        "rms_norm",
        {"row_norm"},
        lambda m: lambda x, w: m.fast.rms_norm(x, w, 1e-5),
        [("f", (2, 3, 8)), ("f", (8,))],
        shapeless=[(5, 1, 8), (8,)],
    ),
    Case(
        "layer_norm",
        {"row_norm"},
        lambda m: lambda x, w, b: m.fast.layer_norm(x, w, b, 1e-5),
        [("f", (3, 16)), ("f", (16,)), ("f", (16,))],
        shapeless=[(7, 16), (16,), (16,)],
    ),
    Case(
        "add_rms_norm",
        {"row_norm"},
        lambda m: lambda x, r, w: m.fast.add_rms_norm(x, r, w, 1e-5),
        [("f", (3, 8)), ("f", (3, 8)), ("f", (8,))],
        "none",
        shapeless=[(5, 8), (5, 8), (8,)],
    ),
    Case(
        "rope",
        {"rope"},
        lambda m: lambda x: m.fast.rope(x, 8, traditional=False, base=10000.0, scale=0.5, offset=3),
        [("f", (1, 2, 5, 8))],
        shapeless=[(2, 2, 9, 8)],
        mlx_shapeless=False,
    ),
    Case(
        "norm_rope",
        {"norm_rope"},
        lambda m: lambda x, w, c: m.fast.norm_rope(x, w, 1e-5, c, 1, dims=8),
        [("f", (1, 2, 3, 8)), ("f", (8,)), ("f", (1, 2, 6, 8))],
        "none",
    ),
    Case(
        "attention",
        {"scaled_dot_product_attention"},
        lambda m: (
            lambda q, k, v: m.fast.scaled_dot_product_attention(q, k, v, scale=0.35, mask="causal")
        ),
        [("f", (1, 4, 3, 8)), ("f", (1, 2, 5, 8)), ("f", (1, 2, 5, 8))],
        shapeless=[(2, 4, 2, 8), (2, 2, 7, 8), (2, 2, 7, 8)],
        mlx_shapeless=False,
    ),
    Case(
        "cross_entropy",
        {"cross_entropy"},
        lambda m: lambda x, t: m.fast.cross_entropy(x, t),
        [("f", (3, 10)), ("tgt10", (3,))],
        "none",
        shapeless=[(6, 10), (6,)],
    ),
    Case(
        "hadamard",
        {"hadamard_transform"},
        lambda m: lambda x: m.hadamard_transform(x, scale=0.5),
        [("f", (3, 16))],
        shapeless=[(5, 32)],
    ),
    Case(
        "quantize",
        {"quantize"},
        lambda m: lambda w: m.quantize(w, group_size=32, bits=4),
        [("f", (4, 64))],
        "equal",
        shapeless=[(3, 128)],
    ),
    Case(
        "quantize_mxfp4",
        {"quantize"},
        lambda m: lambda w: m.quantize(w, group_size=32, bits=4, mode="mxfp4"),
        [("f", (2, 64))],
        "equal",
    ),
    Case(
        "dequantize",
        {"dequantize"},
        lambda m: lambda q, s, b: m.dequantize(q, s, b, group_size=32, bits=4),
        [("u32", (4, 8)), ("f", (4, 2)), ("f", (4, 2))],
    ),
    Case(
        "quantized_matmul",
        {"quantized_matmul"},
        lambda m: (
            lambda x, q, s, b: m.quantized_matmul(x, q, s, b, transpose=True, group_size=32, bits=4)
        ),
        [("f", (3, 64)), ("u32", (16, 8)), ("f", (16, 2)), ("f", (16, 2))],
    ),
    Case(
        "gather_qmm",
        {"gather_qmm"},
        lambda m: (
            lambda x, q, s, b, li, ri: m.gather_qmm(
                x, q, s, b, lhs_indices=li, rhs_indices=ri, transpose=True, group_size=32, bits=4
            )
        ),
        [("f", (2, 3, 64)), ("u32", (2, 16, 8)), ("f", (2, 16, 2)), ("f", (2, 16, 2))]
        + [("idx2", (3,)), ("idx2", (3,))],
    ),
    Case(
        "gather_mm",
        {"gather_mm"},
        lambda m: lambda a, b, li, ri: m.gather_mm(a, b, li, ri),
        [("f", (2, 3, 4)), ("f", (3, 4, 5)), ("idx2", (4,)), ("idx3", (4,))],
    ),
    Case(
        "segmented_mm",
        {"segmented_mm"},
        lambda m: lambda a, b, s: m.segmented_mm(a, b, s),
        [("f", (3, 8)), ("f", (8, 4)), ("seg8", (2, 2))],
        mlx_exports=False,
    ),
    Case(
        "conv1d",
        {"convolution"},
        lambda m: lambda x, w: m.conv1d(x, w, stride=2, padding=1),
        [("f", (2, 9, 3)), ("f", (4, 3, 3))],
    ),
    Case(
        "conv_transpose2d",
        {"convolution"},
        lambda m: lambda x, w: m.conv_transpose2d(x, w, stride=2),
        [("f", (1, 5, 5, 2)), ("f", (3, 3, 3, 2))],
    ),
    Case(
        "adam_update",
        {"adam_update"},
        _adam,
        [("f", (3, 4)), ("f", (3, 4)), ("f", (3, 4)), ("s", ()), ("s", ())],
        "none",
    ),
    Case(
        "count",
        {"count"},
        lambda m: lambda x: x - x.mean(axis=-1, keepdims=True) + x.var(axis=0, ddof=1),
        [("f", (4, 6))],
        shapeless=[(3, 9)],
    ),
    Case(
        "broadcast_like",
        {"broadcast_like"},
        lambda m: lambda x: m.ones_like(x) * x + m.zeros_like(x),
        [("f", (3, 5))],
        shapeless=[(2, 7)],
    ),
    Case(
        "depends",
        {"depends"},
        lambda m: lambda x, y: m.depends([x + 1, y * 2], [x * y]),
        [("f", (3,)), ("f", (3,))],
        shapeless=[(7,), (7,)],
        mlx_shapeless=False,
    ),
]
IDS = [c.name for c in CASES]


def _inputs(case, seed, shapes=None, m=nv):
    rng = np.random.default_rng(seed)
    shapes = shapes or [s for _, s in case.inputs]
    # The Adam case's p, g, m, v are one shape and its v is not negative.
    arrays = [_make(kind, shape, rng) for (kind, _), shape in zip(case.inputs, shapes)]
    if case.name == "adam_update":
        arrays[3] = np.abs(arrays[2]).astype(np.float32)
        arrays[2] = rng.standard_normal(shapes[0]).astype(np.float32)
    return [m.array(a) for a in arrays]


def _outputs(result):
    if isinstance(result, (list, tuple)):
        return [r for x in result for r in _outputs(x)]
    return [result]


def _bits(x):
    a = np.array(x)
    return a.dtype, a.shape, a.tobytes()


def _check_bits(got, want):
    got, want = _outputs(got), _outputs(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert _bits(g) == _bits(w)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_roundtrip_new_inputs(case, tmp_path):
    path = str(tmp_path / "f.nvfn")
    f = case.fun(nv)
    nv.export_function(path, f, *_inputs(case, 0))
    assert case.tags <= _ops(path)
    g = nv.import_function(path)
    fresh = _inputs(case, 1)
    _check_bits(g(*fresh), f(*fresh))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.shapeless], ids=[c.name for c in CASES if c.shapeless]
)
def test_shapeless_new_shapes(case, tmp_path):
    path = str(tmp_path / "f.nvfn")
    f = case.fun(nv)
    nv.export_function(path, f, *_inputs(case, 0), shapeless=True)
    g = nv.import_function(path)
    for shapes in (None, case.shapeless):
        fresh = _inputs(case, 2, shapes)
        _check_bits(g(*fresh), f(*fresh))


@pytest.mark.parametrize("name", ["norm_rope", "adam_update"])
def test_shapeless_multi_output_refused(name, tmp_path):
    case = CASES[IDS.index(name)]
    with pytest.raises(
        nv.OpError, match="shapeless export of '.*' is not supported: it has several outputs"
    ):
        nv.export_function(
            str(tmp_path / "f.nvfn"), case.fun(nv), *_inputs(case, 0), shapeless=True
        )


@pytest.mark.parametrize(
    ("name", "shapes", "message"),
    [
        ("hadamard", [(2, 7)], "hadamard_transform of the new shapes: unsupported size"),
        ("inv", [(2, 6, 5)], "inv of the new shapes: the matrices are not square"),
        ("solve", [(6, 6), (5, 3)], "solve of the new shapes: b does not fit a"),
        ("rms_norm", [(5, 1, 8), (9,)], "rms_norm of the new shapes: weight or bias size"),
        ("cross_entropy", [(6, 10), (5,)], "cross_entropy of the new shapes"),
        ("attention", [(2, 4, 2, 8), (2, 3, 7, 8), (2, 3, 7, 8)], "q, k and v do not fit"),
        ("quantize", [(3, 48)], "quantize of the new shapes: the last axis is not a whole number"),
        ("eigh", [(6, 5)], "eigh of the new shapes: the matrices are not square"),
        (
            "add_rms_norm",
            [(5, 8), (4, 8), (8,)],
            "add_rms_norm of the new shapes: x and residual differ",
        ),
    ],
)
def test_shapeless_checks_new_shapes(name, shapes, message, tmp_path):
    """A shapeless replay refuses new shapes the kernel cannot take, before it runs."""
    case = CASES[IDS.index(name)]
    path = str(tmp_path / "f.nvfn")
    nv.export_function(path, case.fun(nv), *_inputs(case, 0), shapeless=True)
    with pytest.raises(nv.OpError, match=message):
        nv.import_function(path)(*_inputs(case, 2, shapes))


def test_shapeless_file_without_shape_rule(tmp_path):
    """A file whose shapeless trace holds a node with no shape rule is refused at import."""
    path = tmp_path / "f.nvfn"
    case = CASES[IDS.index("norm_rope")]
    nv.export_function(str(path), case.fun(nv), *_inputs(case, 0))
    data = path.read_bytes()
    assert b'"shapeless":false' in data
    (tmp_path / "g.nvfn").write_bytes(data.replace(b'"shapeless":false', b'"shapeless":true ', 1))
    with pytest.raises(nv.io.LoadError, match="'norm_rope', which has no shape rule"):
        nv.import_function(str(tmp_path / "g.nvfn"))


def test_multi_output_node_layout(tmp_path):
    """svd is one node with three outputs; returning only some of them still saves all."""
    path = str(tmp_path / "f.nvfn")
    nv.export_function(path, lambda a: nv.linalg.svd(a, stream=nv.cpu)[1], nv.ones((3, 2)))
    (trace,) = _header(path)["traces"]
    (node,) = trace["nodes"]
    assert "output" not in node and [o["shape"] for o in node["outputs"]] == [[3, 3], [2], [2, 2]]
    assert trace["outputs"] == [2]  # the input, then the node's three values
    a = nv.array(np.array([[3.0, 1.0], [1.0, 2.0], [0.5, -1.0]], np.float32))
    _check_bits(nv.import_function(path)(a), nv.linalg.svd(a, stream=nv.cpu)[1])


def test_multi_output_bad_file(tmp_path):
    """A node listing fewer outputs than its primitive makes, or a bad output spec, is refused
    (edits of the same length keep the header's size)."""
    path = tmp_path / "f.nvfn"
    nv.export_function(str(path), lambda a: nv.linalg.qr(a, stream=nv.cpu), nv.ones((2, 2)))
    data = path.read_bytes()
    spec = b'{"shape":[2,2],"dtype":"float32"},'
    for old, new, message in (
        (
            b'"outputs":[' + spec,
            b'"outputs":[' + b" " * len(spec),
            "wrong number of outputs for 'decompose'",
        ),
        (spec, spec.replace(b"float32", b"float99"), "unknown dtype"),
    ):
        assert old in data
        (tmp_path / "g.nvfn").write_bytes(data.replace(old, new, 1))
        with pytest.raises(nv.io.LoadError, match=message):
            nv.import_function(str(tmp_path / "g.nvfn"))


def test_old_file_loads():
    """A file written by nuvec before multi-output nodes (tests/fixtures): every node has one
    "output" and it replays as before."""
    path = ROOT / "tests" / "fixtures" / "export_v1_single_outputs.nvfn"
    (trace,) = _header(path)["traces"]
    assert all("output" in n and "outputs" not in n for n in trace["nodes"])
    g, meta = nv.import_function(str(path), return_metadata=True)
    assert meta == "written by nuvec before multi-output nodes"
    w = nv.array([[1.0, -2.0], [0.5, 3.0]])

    def f(x, *, b):
        y = nv.maximum(x @ w + b, 0.0)
        return nv.sort(y, axis=-1), nv.cumsum(y, axis=0).sum(axis=1)

    x = nv.array(np.random.default_rng(3).standard_normal((3, 2)).astype(np.float32))
    b = nv.array([0.25, -0.5])
    _check_bits(g(x, b=b), f(x, b=b))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.mlx != "none"], ids=[c.name for c in CASES if c.mlx != "none"]
)
def test_mlx_exports_the_same(case, tmp_path):
    mlx = pytest.importorskip("mlx.core")
    results = []
    for m, name in ((nv, "nv"), (mlx, "mlx")):
        path = str(tmp_path / name)
        f = case.fun(m)
        if (
            m is mlx and not case.mlx_exports
        ):  # nuvec exports it; MLX's direct call is the reference
            with pytest.raises(ValueError, match="Unable to serialize primitive"):
                m.export_function(path, f, *_inputs(case, 0, m=m))
        else:
            m.export_function(path, f, *_inputs(case, 0, m=m))
            f = m.import_function(path)
        results.append([np.array(x) for x in _outputs(f(*_inputs(case, 1, m=m)))])
    got, want = results
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if case.mlx == "equal":
            np.testing.assert_array_equal(g, w)
        else:
            g, w = (np.abs(g), np.abs(w)) if case.mlx == "abs" else (g, w)
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


MLX_SHAPELESS = [c for c in CASES if c.shapeless and c.mlx != "none" and c.mlx_shapeless]


@pytest.mark.parametrize("case", MLX_SHAPELESS, ids=[c.name for c in MLX_SHAPELESS])
def test_mlx_shapeless_the_same(case, tmp_path):
    """Where MLX replays shapelessly too (nuvec also does cholesky, rope and attention, which MLX
    0.32.4 refuses), both give the same values on the new shapes."""
    mlx = pytest.importorskip("mlx.core")
    results = []
    for m, name in ((nv, "nv"), (mlx, "mlx")):
        path = str(tmp_path / name)
        m.export_function(path, case.fun(m), *_inputs(case, 0, m=m), shapeless=True)
        new = _inputs(case, 2, case.shapeless, m=m)
        results.append([np.array(x) for x in _outputs(m.import_function(path)(*new))])
    for g, w in zip(*results, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        g, w = (np.abs(g), np.abs(w)) if case.mlx == "abs" else (g, w)
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


def test_custom_function_refused(tmp_path):
    @nv.custom_function
    def f(x):
        return nv.sin(x)

    with pytest.raises(nv.OpError, match="cannot export the primitive 'custom_function'"):
        nv.export_function(str(tmp_path / "f.nvfn"), lambda x: f(x), nv.ones((2,)))


def test_compiled_function_exports(tmp_path):
    """compile runs its function plainly while export traces it: no Compiled node is recorded."""
    path = str(tmp_path / "f.nvfn")
    f = nv.compile(lambda x: nv.exp(x) * 2 + x.sum())
    nv.export_function(path, f, nv.ones((3,)))
    assert "compiled" not in _ops(path)
    x = nv.array([0.5, -1.0, 2.0])
    _check_bits(nv.import_function(path)(x), f(x))


# Primitive classes that cannot be exported, and why (docs/export.md).
NOT_EXPORTABLE = {
    "Custom": "custom_function's rules are Python callbacks (MLX refuses CustomTransforms too)",
    "Compiled": "compile runs its function plainly while export traces it, so none is recorded",
    "CompiledCall": "a compiled call replays its graph when a transform (export too) traces an argument",
    "TakenInput": "stands for a compiled call's input its failed evaluation consumed; raises when read",
    "CompilePlaceholder": "compile's stand-in for its inputs while it traces; never in a graph it returns",
    "VmapPlaceholder": "vmap's stand-in for its inputs while it traces; never in a graph it returns",
    "CustomC": "a custom C operation's kernel and rules are callbacks of this process (C ABI)",
    # nuvec.distributed: a collective binds this run's MPI communicator, which a file cannot carry
    # (over a group of one process they are copies, which export); export raises naming the op.
    **dict.fromkeys(
        ["DistPrimitive", "AllReduce", "AllGather", "SumScatter", "Send", "Recv"],
        "a collective over a live MPI communicator of this run",
    ),
}
# Base classes whose subclasses carry the codecs.
ABSTRACT = {"Elementwise", "QuantizedProduct"}


def _derives(name, bases):
    seen = set()
    while name != "Primitive" and name in bases and name not in seen:
        seen.add(name)
        name = bases[name]
    return name == "Primitive"


def test_every_primitive_has_a_codec():
    # Every class that derives, directly or not, from Primitive.
    bases = {}
    for h in [*(ROOT / "csrc").rglob("*.h"), *(ROOT / "csrc").rglob("*.cpp")]:
        for name, base in re.findall(
            r"class\s+(\w+)\s*(?:final\s*)?:\s*public\s+(\w+)", h.read_text()
        ):
            bases[name] = base
    classes = {c for c in bases if c != "Primitive" and _derives(c, bases)}
    coded = set()
    for c in (ROOT / "csrc" / "io").glob("export_codecs*.cpp"):
        text = c.read_text()
        coded |= set(re.findall(r"is<(\w+)>", text)) | set(re.findall(r"NUVEC_PLAIN\((\w+)", text))
        coded |= set(re.findall(r"quant_row<(\w+)>", text))
    missing = classes - coded - set(NOT_EXPORTABLE) - ABSTRACT
    assert not missing, f"primitives without an export codec: {sorted(missing)}"
    assert not (set(NOT_EXPORTABLE) & coded)
    assert (set(NOT_EXPORTABLE) | ABSTRACT) <= classes
