"""Function export (export_function / import_function / exporter). The file formats of nuvec and
MLX differ (docs/export.md), so each test exports and imports within the implementation under
test and compares the imported function's results with calling the function directly; the same
tests run on MLX (NUVEC_TEST_IMPL=mlx), which holds nuvec to MLX's behaviour and exception types.
"""

import numpy as np
import pytest

from _impl import mx


def _np(x):
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)


def _same(got, want):
    want = [want] if isinstance(want, mx.array) else list(want)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(_np(g), _np(w))


def _roundtrip(tmp_path, fun, *args, **kwargs):
    path = str(tmp_path / "f.mlxfn")
    mx.export_function(path, fun, *args, **kwargs)
    imported = mx.import_function(path)
    _same(imported(*args, **kwargs), fun(*args, **kwargs))
    return imported


# Inputs as NumPy arrays: arrays made at import would outlive the test session's teardown.
INPUTS = {
    "X": np.array([[0.5, -1.25, 2.0], [3.5, 0.25, -0.75]], np.float32),
    "Y": np.array([[1.5, 2.0, -0.5], [0.75, -3.0, 1.25]], np.float32),
    "POS": np.array([[1.0, 1.75, 2.5], [4.0, 0.75, 1.25]], np.float32),
    "UNIT": np.array([[0.5, -0.25, 0.75], [0.1, -0.9, 0.3]], np.float32),
    "INTS": np.array([[3, -7, 12], [5, 0, -2]], np.int32),
}


def _in(name):
    return mx.array(INPUTS[name])


UNARY = [
    ("abs", "X"), ("negative", "X"), ("exp", "X"), ("expm1", "X"), ("log", "POS"), ("log1p", "POS"),
    ("log2", "POS"), ("log10", "POS"), ("sqrt", "POS"), ("rsqrt", "POS"), ("square", "X"), ("sin", "X"),
    ("cos", "X"), ("tan", "X"), ("arcsin", "UNIT"), ("arccos", "UNIT"), ("arctan", "X"), ("sinh", "X"),
    ("cosh", "X"), ("tanh", "X"), ("arcsinh", "X"), ("arccosh", "POS"), ("arctanh", "UNIT"),
    ("sigmoid", "X"), ("erf", "X"), ("erfinv", "UNIT"), ("floor", "X"), ("ceil", "X"), ("round", "X"),
    ("sign", "X"), ("reciprocal", "POS"), ("degrees", "X"), ("radians", "X"), ("logical_not", "POSBOOL"),
    ("isnan", "X"), ("isinf", "X"), ("isfinite", "X"), ("stop_gradient", "X"),
]  # fmt: skip
BINARY = [
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
    "logaddexp", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "remainder", "floor_divide",
]  # fmt: skip
INT_BINARY = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]


@pytest.mark.parametrize("name,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(tmp_path, name, x):
    _roundtrip(tmp_path, getattr(mx, name), _in("X") > 0 if x == "POSBOOL" else _in(x))


@pytest.mark.parametrize("name", BINARY)
def test_binary(tmp_path, name):
    _roundtrip(tmp_path, getattr(mx, name), _in("POS"), mx.abs(_in("Y")) + 0.25)


@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_binary(tmp_path, name):
    _roundtrip(tmp_path, getattr(mx, name), mx.abs(_in("INTS")), mx.array([[1, 2, 3], [0, 1, 2]]))


PARAMETERISED = {
    "round_decimals": lambda x: mx.round(x * 3.3333, 2),
    "nan_to_num": lambda x: mx.nan_to_num(mx.log(x), nan=1.5, posinf=7.0, neginf=-7.0),
    "isclose": lambda x: mx.isclose(x, x + 1e-4, rtol=1e-3, atol=1e-5),
    "astype": lambda x: x.astype(mx.int32) + x.astype(mx.float16).astype(mx.float32),
    "where": lambda x: mx.where(x > 0, x, -x * 2),
    "clip": lambda x: mx.clip(x, -1.0, 1.0),
    "scalar_constant": lambda x: x * 2.5 + 1,
}


@pytest.mark.parametrize("name", PARAMETERISED)
def test_parameterised_elementwise(tmp_path, name):
    _roundtrip(tmp_path, PARAMETERISED[name], _in("X"))


FUNCTIONS = {
    # reductions
    "sum": lambda x: mx.sum(x, axis=1),
    "mean_keepdims": lambda x: mx.mean(x, axis=0, keepdims=True),
    "max_min_prod": lambda x: (mx.max(x), mx.min(x, axis=1), mx.prod(x, axis=0)),
    "all_any": lambda x: (mx.all(x > 0, axis=1), mx.any(x > 3)),
    "argmax_argmin": lambda x: (mx.argmax(x, axis=1), mx.argmin(x)),
    "var_std": lambda x: (mx.var(x, axis=0), mx.std(x)),
    "softmax": lambda x: mx.softmax(x, axis=-1),
    "logsumexp": lambda x: mx.logsumexp(x, axis=1),
    # shapes and views
    "reshape": lambda x: x.reshape(3, 2),
    "transpose": lambda x: x.T + 1,
    "expand_squeeze": lambda x: mx.squeeze(mx.expand_dims(x, 0), 0) * 2,
    "broadcast_to": lambda x: mx.broadcast_to(x[:1], (4, 3)),
    "concatenate_stack": lambda x: (mx.concatenate([x, x * 2], axis=0), mx.stack([x, -x], axis=1)),
    "split": lambda x: mx.split(x, 3, axis=1),
    "flatten_moveaxis": lambda x: (mx.flatten(x), mx.moveaxis(x, 0, 1), mx.swapaxes(x, 0, 1)),
    "pad_tile_repeat": lambda x: (mx.pad(x, 1), mx.tile(x, (2, 1)), mx.repeat(x, 2, axis=0)),
    "diagonal": lambda x: mx.diagonal(x),
    # indexing
    "slice": lambda x: (x[1:, ::2], x[0], x[:, -1]),
    "take": lambda x: (mx.take(x, mx.array([2, 0, 1]), axis=1), mx.take(x, mx.array([4, 1]))),
    "take_along_axis": lambda x: mx.take_along_axis(x, mx.array([[2, 0, 1], [1, 1, 0]]), axis=1),
    "fancy_index": lambda x: x[mx.array([1, 0, 1])],
    "put_along_axis": lambda x: mx.put_along_axis(x, mx.array([[0], [2]]), mx.array(9.0), axis=1),
    "at_add": lambda x: x.at[mx.array([0, 0, 1])].add(1.0),
    # matmul, sorting, scans
    "matmul": lambda x: x @ x.T,
    "sort": lambda x: (mx.sort(x, axis=1), mx.argsort(x, axis=0), mx.sort(x, axis=None)),
    "partition_topk": lambda x: (mx.partition(x, 1, axis=1), mx.topk(x, 2, axis=1)),
    "scans": lambda x: (
        mx.cumsum(x, axis=1),
        mx.cumprod(x, axis=0, reverse=True),
        mx.cummax(x, axis=1, inclusive=False),
        mx.cummin(x, axis=1),
    ),
    # constants and creation inside the function
    "arange_constant": lambda x: x + mx.arange(3),
    "constant_output": lambda x: (mx.array([7, 8]), x),
    "identity": lambda x: x,
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions(tmp_path, name):
    _roundtrip(tmp_path, FUNCTIONS[name], _in("X"))


def test_random_with_key(tmp_path):
    def sample(key, x):
        k1, k2 = mx.random.split(key)
        return mx.random.uniform(shape=(2, 3), key=k1) + x, mx.random.normal(shape=(4,), key=k2)

    f = _roundtrip(tmp_path, sample, mx.random.key(3), _in("X"))
    # another key through the same trace draws that key's numbers
    _same(f(mx.random.key(11), _in("X")), sample(mx.random.key(11), _in("X")))


def test_mlp_forward(tmp_path):
    rng = np.random.default_rng(0)
    w1, b1 = mx.array(rng.standard_normal((3, 8)).astype(np.float32)), mx.zeros((8,))
    w2, b2 = mx.array(rng.standard_normal((8, 2)).astype(np.float32)), mx.array([0.5, -0.5])

    def mlp(x):
        h = mx.maximum(x @ w1 + b1, 0.0)
        return mx.softmax(h @ w2 + b2, axis=-1)

    path = str(tmp_path / "mlp.mlxfn")
    mx.export_function(path, mlp, _in("X"))
    f = mx.import_function(path)
    other = mx.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 0.5]])
    want = mlp(other)
    w1 = w2 = None  # noqa: F841  (the imported function keeps its own copy of the weights)
    _same(f(other), want)


def test_several_traces_with_exporter(tmp_path):
    def fun(*args):
        return sum(args[1:], args[0] * 2)

    path = str(tmp_path / "many.mlxfn")
    with mx.exporter(path, fun) as exporter:
        exporter(mx.array([1.0, 2.0]))
        exporter(mx.array([1.0, 2.0, 3.0]), mx.array([4.0, 5.0, 6.0]))
        exporter(mx.array(1), mx.array(2), mx.array(3))
    f = mx.import_function(path)
    for args in [
        (mx.array([5.0, 6.0]),),
        (mx.array([1.0, 0.0, 2.0]), mx.array([3.0, 3.0, 3.0])),
        (mx.array(7), mx.array(8), mx.array(9)),
    ]:
        _same(f(*args), fun(*args))
    with pytest.raises(ValueError):
        f(mx.array([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError):
        exporter(mx.array([1.0]))  # closed


def test_exporter_without_calls(tmp_path):
    path = str(tmp_path / "none.mlxfn")
    with mx.exporter(path, lambda x: x):
        pass
    with pytest.raises(ValueError):
        mx.import_function(path)(mx.array(1.0))


def test_kwargs(tmp_path):
    def fun(x, y, *, scale):
        return (x - y) * scale

    path = str(tmp_path / "kw.mlxfn")
    mx.export_function(path, fun, _in("X"), _in("Y"), scale=mx.array(2.0))
    f = mx.import_function(path)
    want = fun(_in("X"), _in("Y"), scale=mx.array(3.0))
    _same(f(_in("X"), _in("Y"), scale=mx.array(3.0)), want)
    _same(f((_in("X"), _in("Y")), {"scale": mx.array(3.0)}), want)
    for bad in [
        lambda: f(_in("X"), _in("Y"), mx.array(3.0)),
        lambda: f(_in("X"), _in("Y")),
        lambda: f(_in("X"), _in("Y"), other=mx.array(3.0)),
    ]:
        with pytest.raises(ValueError):
            bad()
    # the example inputs given as one tuple and one dict
    mx.export_function(path, fun, (_in("X"), _in("Y")), {"scale": mx.array(2.0)})
    _same(mx.import_function(path)(_in("X"), _in("Y"), scale=mx.array(3.0)), want)


def test_tuple_and_list_outputs(tmp_path):
    _roundtrip(tmp_path, lambda x: [x + 1, x * 2], _in("X"))
    _roundtrip(tmp_path, lambda: mx.ones((2,)))


def test_call_mismatch_raises_value_error(tmp_path):
    path = str(tmp_path / "f.mlxfn")
    mx.export_function(path, lambda x, y: mx.exp(x) + y, _in("X"), _in("Y"))
    f = mx.import_function(path)
    with pytest.raises(ValueError):
        f(mx.ones((3, 3)), mx.ones((3, 3)))
    with pytest.raises(ValueError):
        f(_in("X").astype(mx.float16), _in("Y"))
    with pytest.raises(ValueError):
        f(_in("X"))


def test_shapeless(tmp_path):
    def fun(x, y):
        return mx.sum(mx.exp(x) * y, axis=-1) + mx.max(x @ y.T)

    path = str(tmp_path / "s.mlxfn")
    mx.export_function(path, fun, _in("X"), _in("Y"), shapeless=True)
    f = mx.import_function(path)
    a, b = mx.arange(20, dtype=mx.float32).reshape(4, 5) / 10, mx.ones((4, 5))
    np.testing.assert_allclose(_np(f(a, b)[0]), _np(fun(a, b)), rtol=1e-6)
    with pytest.raises(ValueError):  # the dtype must still match
        f(a.astype(mx.int32), b.astype(mx.int32))


def test_bad_export_arguments(tmp_path):
    path = str(tmp_path / "f.mlxfn")
    with pytest.raises(ValueError):
        mx.export_function(path, lambda x, s: x * s, _in("X"), 2.0)
    with pytest.raises(ValueError):
        mx.export_function(path, lambda x: {"a": x}, _in("X"))
    with pytest.raises(ValueError):
        mx.export_function(path, lambda x: 3.0, _in("X"))


def test_file_errors(tmp_path):
    with pytest.raises(RuntimeError):
        mx.import_function(str(tmp_path / "missing.mlxfn"))
    junk = tmp_path / "junk.mlxfn"
    junk.write_bytes(b"garbage garbage garbage")
    with pytest.raises(RuntimeError):
        mx.import_function(str(junk))
    with pytest.raises(RuntimeError):
        mx.export_function(str(tmp_path / "no" / "dir.mlxfn"), lambda x: x, _in("X"))


def test_metadata(tmp_path):
    path = str(tmp_path / "m.mlxfn")
    mx.export_function(path, lambda x: x * 2, _in("X"), metadata='{"layers": 2}')
    f, meta = mx.import_function(path, return_metadata=True)
    assert meta == '{"layers": 2}'
    _same(f(_in("X")), _in("X") * 2)
    mx.export_function(path, lambda x: x, _in("X"))
    assert mx.import_function(path, return_metadata=True)[1] == ""


@pytest.mark.nuvec_only  # MLX replays reshape and broadcast_to shapelessly; nuvec refuses at export
def test_shapeless_fixed_shapes_refused(tmp_path):
    path = str(tmp_path / "r.mlxfn")
    with pytest.raises(mx.OpError, match="shapeless export of 'reshape'"):
        mx.export_function(path, lambda x: x.reshape(3, 2), _in("X"), shapeless=True)


@pytest.mark.nuvec_only  # nuvec's own file format and errors (docs/export.md)
def test_nuvec_file_format(tmp_path):
    path = tmp_path / "f.mlxfn"
    mx.export_function(str(path), lambda x: x + mx.array([1.0, 2.0, 3.0]), _in("X"))
    data = path.read_bytes()
    assert data[:8] == b"NUVECFN\0" and int.from_bytes(data[8:12], "little") == 1
    n = int.from_bytes(data[12:20], "little")
    import json

    header = json.loads(data[20 : 20 + n])
    (trace,) = header["traces"]
    assert trace["inputs"] == [{"shape": [2, 3], "dtype": "float32"}]
    assert trace["constants"] == [{"shape": [3], "dtype": "float32"}]
    assert [node["op"] for node in trace["nodes"]] == ["binary"]
    path.write_bytes(data[:8] + (2).to_bytes(4, "little") + data[12:])
    with pytest.raises(mx.io.LoadError, match="version 2"):
        mx.import_function(str(path))
    path.write_bytes(data[: 20 + n // 2])
    with pytest.raises(mx.io.LoadError):
        mx.import_function(str(path))


@pytest.mark.nuvec_only  # a primitive with Python callbacks cannot be saved
def test_unsupported_primitive(tmp_path):
    @mx.custom_function
    def f(x):
        return x * 2

    with pytest.raises(mx.OpError, match="custom_function"):
        mx.export_function(str(tmp_path / "c.mlxfn"), f, _in("X"))


@pytest.mark.nuvec_only  # MLX 0.32.4 cannot serialise these primitives; nuvec can
@pytest.mark.parametrize(
    "fun",
    [lambda x: mx.logcumsumexp(x, axis=1), lambda x: mx.bitwise_invert(x.astype(mx.int32))],
    ids=["logcumsumexp", "bitwise_invert"],
)
def test_primitives_mlx_cannot_export(tmp_path, fun):
    _roundtrip(tmp_path, fun, _in("X"))
