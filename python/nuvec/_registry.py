"""The op registry: one row per public operation of nuvec, and every other public name.

Pure data on the standard library alone: tools/gen_registry.py loads this file by path at build
time (CMake runs it) to write the C++ lists of the element-wise family, and the tests and
docs/make_operations.py read it at test time. docs/design.md ("The op registry") says what is
generated from which field.

An element-wise kernel op (`primitive` "Unary" or "Binary") carries what the C++ needs:
  accepts     the dtypes it takes (a key of DTYPE_SETS); others raise OpError
  dtype       its result rule (a key of DTYPE_RULES)
  kernel      the CPU functor's name in backend/cpu/simd/{unary,binary}.cpp (by default the
              name in CamelCase: logical_not -> LogicalNot); "" for an op without a kernel
  params      the parameter struct of core/primitives/elementwise.h ("" for none); an op with
              parameters has a hand-written binding, the others a generated one
  derivative  a C++ expression of f'(x) for a unary op, a pair (d/da, d/db) for a binary one,
              ZERO (the derivative vanishes) or LINEAR (the op maps tangents as it maps values).
              Unary vocabulary: x, out (= f(x)), s (the stream), one(), lit(value, like),
              u(UnaryOp::op, a), add, sub, mul, div, neg, astype. Binary: a, b, out, one, zero,
              s, u, bin(BinaryOp::op, p, q), mask(BinaryOp::cmp, p, q) (a 0/1 array),
              positive(p) (p > 0), where, add, sub, mul, div, neg.
"""

from dataclasses import dataclass

ZERO = "zero"
LINEAR = "linear"

# Result dtype rules (the dtype of the result, given the inputs' promoted dtype).
DTYPE_RULES = {
    "same": "the input's (promoted) dtype",
    "float": "the input's when inexact, else float32",
    "bool": "bool",
    "logical": "bool; the inputs are read as bool",
    "real_part": "float32 for complex64, else the input's",
    "shift": "the input's; bool becomes uint8",
    "given": "the `dtype` argument (a default when None)",
    "index": "an integer dtype (indices, counts)",
    "reduce": "the input's; sum and prod of bool and small integers give int32",
    "none": "no array result",
}

# Sets of accepted input dtypes.
DTYPE_SETS = {
    "all": "all fourteen dtypes",
    "no_bool": "all but bool",
    "no_complex": "all but complex64",
    "integers": "bool and the integer dtypes",
}

FAMILIES = (
    "elementwise",
    "creation",
    "shape",
    "indexing",
    "reduce",
    "matmul",
    "conv",
    "sort",
    "scan",
    "random",
    "linalg",
    "fft",
    "io",
    "interop",
)


@dataclass(frozen=True)
class Op:
    name: str
    family: str
    arity: int  # array operands; -1: a sequence of arrays, 0: none
    dtype: str
    reference: str  # "numpy.x", "scipy.special.x", "mlx.core.x", or "op_table.x" (a test helper)
    group: str
    differentiable: bool | str = True
    batchable: bool | str = True
    accepts: str = "all"
    primitive: str = ""  # "Unary" / "Binary": a kernel op with its own enum entry
    kernel: str = None  # CamelCase of the name unless given
    params: str = ""
    derivative: str | tuple = None
    public: bool = True  # False: an internal kernel op that other ops build on

    @property
    def functor(self):
        if self.kernel is not None:
            return self.kernel
        return "".join(part.capitalize() for part in self.name.split("_"))


def _unary(name, dtype, reference, derivative, accepts="all", **kw):
    return Op(
        name,
        "elementwise",
        1,
        dtype,
        reference,
        "unary",
        accepts=accepts,
        primitive="Unary",
        derivative=derivative,
        **kw,
    )


def _binary(name, dtype, reference, derivative, accepts="all", **kw):
    return Op(
        name,
        "elementwise",
        2,
        dtype,
        reference,
        "binary",
        accepts=accepts,
        primitive="Binary",
        derivative=derivative,
        **kw,
    )


BOOL_RESULT = "bool result"
INT_ONLY = "integer-only op"
NO_INPUT = "creation op, no array input"
NO_INPUT_MAP = "creation op: no array input to map over"
FILE_IO = "file I/O"

_ELEMENTWISE = [
    # ---------------------------------------------------------------- unary kernels
    _unary("abs", "real_part", "numpy.abs", "u(UnaryOp::sign, x)"),
    _unary("negative", "same", "numpy.negative", "neg(one())", accepts="no_bool"),
    _unary("sign", "same", "op_table.sign", ZERO),
    _unary("sqrt", "float", "numpy.sqrt", "div(lit(0.5, x), out)"),
    _unary("rsqrt", "float", "op_table.rsqrt", "mul(lit(-0.5, x), div(out, x))"),
    _unary("square", "same", "numpy.square", "mul(lit(2.0, x), x)"),
    _unary("reciprocal", "float", "numpy.reciprocal", "neg(mul(out, out))"),
    _unary("exp", "float", "numpy.exp", "out"),
    _unary("expm1", "float", "numpy.expm1", "add(out, one())", accepts="no_complex"),
    _unary("log", "float", "numpy.log", "u(UnaryOp::reciprocal, x)"),
    _unary("log1p", "float", "numpy.log1p", "u(UnaryOp::reciprocal, add(x, one()))"),
    _unary("log2", "float", "numpy.log2", "u(UnaryOp::reciprocal, mul(x, lit(M_LN2, x)))"),
    _unary("log10", "float", "numpy.log10", "u(UnaryOp::reciprocal, mul(x, lit(M_LN10, x)))"),
    _unary("sin", "float", "numpy.sin", "u(UnaryOp::cos, x)"),
    _unary("cos", "float", "numpy.cos", "neg(u(UnaryOp::sin, x))"),
    _unary("tan", "float", "numpy.tan", "add(one(), mul(out, out))"),
    _unary("arcsin", "float", "numpy.arcsin", "u(UnaryOp::rsqrt, sub(one(), mul(x, x)))"),
    _unary("arccos", "float", "numpy.arccos", "neg(u(UnaryOp::rsqrt, sub(one(), mul(x, x))))"),
    _unary("arctan", "float", "numpy.arctan", "u(UnaryOp::reciprocal, add(one(), mul(x, x)))"),
    _unary("sinh", "float", "numpy.sinh", "u(UnaryOp::cosh, x)"),
    _unary("cosh", "float", "numpy.cosh", "u(UnaryOp::sinh, x)"),
    _unary("tanh", "float", "numpy.tanh", "sub(one(), mul(out, out))"),
    _unary("arcsinh", "float", "numpy.arcsinh", "u(UnaryOp::rsqrt, add(mul(x, x), one()))"),
    _unary("arccosh", "float", "numpy.arccosh", "u(UnaryOp::rsqrt, sub(mul(x, x), one()))"),
    _unary("arctanh", "float", "numpy.arctanh", "u(UnaryOp::reciprocal, sub(one(), mul(x, x)))"),
    _unary(
        "erf",
        "float",
        "scipy.special.erf",
        "mul(lit(M_2_SQRTPI, x), u(UnaryOp::exp, neg(mul(x, x))))",
        accepts="no_complex",
    ),
    _unary(
        "erfinv",
        "float",
        "scipy.special.erfinv",
        "mul(lit(std::sqrt(M_PI) / 2, x), u(UnaryOp::exp, mul(out, out)))",
        accepts="no_complex",
    ),
    _unary(
        "sigmoid", "float", "op_table.sigmoid", "mul(out, sub(one(), out))", accepts="no_complex"
    ),
    _unary("floor", "same", "numpy.floor", ZERO, accepts="no_complex"),
    _unary("ceil", "same", "numpy.ceil", ZERO, accepts="no_complex"),
    _unary("round", "same", "numpy.round", ZERO, params="RoundParams"),
    _unary("isnan", "bool", "numpy.isnan", ZERO, differentiable=BOOL_RESULT),
    _unary("isinf", "bool", "numpy.isinf", ZERO, differentiable=BOOL_RESULT),
    _unary("isposinf", "bool", "numpy.isposinf", ZERO, differentiable=BOOL_RESULT),
    _unary("isneginf", "bool", "numpy.isneginf", ZERO, differentiable=BOOL_RESULT),
    _unary("isfinite", "bool", "numpy.isfinite", ZERO, differentiable=BOOL_RESULT),
    _unary("logical_not", "bool", "numpy.logical_not", ZERO, differentiable=BOOL_RESULT),
    _unary(
        "bitwise_invert", "same", "numpy.invert", ZERO, accepts="integers", differentiable=INT_ONLY
    ),
    _unary("conjugate", "same", "numpy.conjugate", LINEAR),
    _unary("real", "real_part", "numpy.real", LINEAR),
    _unary("imag", "real_part", "numpy.imag", LINEAR),
    _unary(
        "nan_to_num",
        "same",
        "op_table.nan_to_num",
        "astype(u(UnaryOp::isfinite, x), x.dtype(), s)",
        params="NanToNumParams",
    ),
    _unary(
        "stop_gradient",
        "same",
        "op_table.identity",
        ZERO,
        kernel="",
        differentiable="its gradient is zero by definition (tested in test_grad.py)",
    ),
    # The engine's converting copy (astype, full, the _like functions): no kernel to chain.
    _unary("copy", "same", "numpy.copy", LINEAR, kernel="", public=False),
    # MLX's own float32 exp and erf approximations (its CPU bits), for the random samplers that
    # must give MLX's bits (categorical's inverse CDF, truncated_normal's bounds).
    _unary("mlx_exp", "float", "numpy.exp", "out", accepts="no_complex", public=False),
    _unary(
        "mlx_erf",
        "float",
        "scipy.special.erf",
        "mul(lit(M_2_SQRTPI, x), u(UnaryOp::exp, neg(mul(x, x))))",
        accepts="no_complex",
        public=False,
    ),
    # ---------------------------------------------------------------- binary kernels
    _binary("add", "same", "numpy.add", ("one", "one")),
    _binary("subtract", "same", "op_table.subtract", ("one", "neg(one)")),
    _binary("multiply", "same", "numpy.multiply", ("b", "a")),
    _binary("divide", "float", "numpy.divide", ("u(UnaryOp::reciprocal, b)", "neg(div(out, b))")),
    _binary("floor_divide", "same", "numpy.floor_divide", ZERO, accepts="no_complex"),
    _binary(
        "remainder",
        "same",
        "numpy.remainder",
        ("one", "neg(bin(BinaryOp::floor_divide, a, b))"),
        accepts="no_complex",
    ),
    # d/db is out * log(a), taken as 0 where a <= 0 (the real power has no derivative in b).
    _binary(
        "power",
        "same",
        "numpy.power",
        (
            "mul(b, bin(BinaryOp::power, a, sub(b, one)))",
            "where(positive(a), mul(out, u(UnaryOp::log, where(positive(a), a, one, s))), zero, s)",
        ),
    ),
    _binary(
        "maximum",
        "same",
        "numpy.maximum",
        # As MLX: a tie's gradient goes to b (relu's, maximum(x, 0), is 0 at 0).
        ("mask(BinaryOp::greater, a, b)", "mask(BinaryOp::less_equal, a, b)"),
    ),
    _binary(
        "minimum",
        "same",
        "numpy.minimum",
        ("mask(BinaryOp::less, a, b)", "mask(BinaryOp::greater_equal, a, b)"),
    ),
    _binary("equal", "bool", "numpy.equal", ZERO, differentiable=BOOL_RESULT),
    _binary("not_equal", "bool", "numpy.not_equal", ZERO, differentiable=BOOL_RESULT),
    _binary("less", "bool", "numpy.less", ZERO, differentiable=BOOL_RESULT),
    _binary("less_equal", "bool", "numpy.less_equal", ZERO, differentiable=BOOL_RESULT),
    _binary("greater", "bool", "numpy.greater", ZERO, differentiable=BOOL_RESULT),
    _binary("greater_equal", "bool", "numpy.greater_equal", ZERO, differentiable=BOOL_RESULT),
    _binary("logical_and", "logical", "numpy.logical_and", ZERO, differentiable=BOOL_RESULT),
    _binary("logical_or", "logical", "numpy.logical_or", ZERO, differentiable=BOOL_RESULT),
    _binary(
        "bitwise_and",
        "same",
        "numpy.bitwise_and",
        ZERO,
        accepts="integers",
        differentiable=INT_ONLY,
    ),
    _binary(
        "bitwise_or", "same", "numpy.bitwise_or", ZERO, accepts="integers", differentiable=INT_ONLY
    ),
    _binary(
        "bitwise_xor",
        "same",
        "numpy.bitwise_xor",
        ZERO,
        accepts="integers",
        differentiable=INT_ONLY,
    ),
    _binary(
        "left_shift", "shift", "numpy.left_shift", ZERO, accepts="integers", differentiable=INT_ONLY
    ),
    _binary(
        "right_shift",
        "shift",
        "numpy.right_shift",
        ZERO,
        accepts="integers",
        differentiable=INT_ONLY,
    ),
    _binary(
        "arctan2",
        "float",
        "numpy.arctan2",
        (
            "mul(b, u(UnaryOp::reciprocal, add(mul(a, a), mul(b, b))))",
            "neg(mul(a, u(UnaryOp::reciprocal, add(mul(a, a), mul(b, b)))))",
        ),
        accepts="no_complex",
    ),
    _binary(
        "logaddexp",
        "float",
        "numpy.logaddexp",
        ("u(UnaryOp::exp, sub(a, out))", "u(UnaryOp::exp, sub(b, out))"),
    ),
    _binary(
        "isclose", "bool", "numpy.isclose", ZERO, params="IsCloseParams", differentiable=BOOL_RESULT
    ),
    # array_equal(equal_nan=True): equal, or both NaN.
    _binary(
        "equal_nan", "bool", "op_table.equal_nan", ZERO, public=False, differentiable=BOOL_RESULT
    ),
    # ---------------------------------------------------------------- composed of the kernels
    Op("degrees", "elementwise", 1, "float", "op_table.degrees", "unary"),
    Op("radians", "elementwise", 1, "float", "op_table.radians", "unary"),
    Op("divmod", "elementwise", 2, "same", "numpy.divmod", "binary", accepts="no_complex"),
    Op(
        "allclose", "elementwise", 2, "bool", "numpy.allclose", "binary", differentiable=BOOL_RESULT
    ),
    Op(
        "array_equal",
        "elementwise",
        2,
        "bool",
        "numpy.array_equal",
        "binary",
        differentiable=BOOL_RESULT,
    ),
    Op("positive", "elementwise", 1, "same", "op_table.identity", "unary"),
    Op("trunc", "elementwise", 1, "same", "numpy.trunc", "unary", accepts="no_complex"),
    Op(
        "logical_xor",
        "elementwise",
        2,
        "logical",
        "numpy.logical_xor",
        "binary",
        differentiable=BOOL_RESULT,
    ),
    Op("where", "elementwise", 3, "same", "numpy.where", "ternary"),
    Op("clip", "elementwise", 3, "same", "op_table.clip", "ternary"),
]


def _ops(family, group, dtype, rows, **kw):
    """Rows of one family: (name, arity, reference) or (name, arity, reference, {overrides})."""
    out = []
    for row in rows:
        name, arity, ref = row[:3]
        extra = dict(kw, **(row[3] if len(row) > 3 else {}))
        out.append(Op(name, family, arity, extra.pop("dtype", dtype), ref, group, **extra))
    return out


_WINDOW = {"dtype": "float", "differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}
_CREATION = _ops(
    "creation",
    "creation",
    "given",
    [
        ("zeros", 0, "numpy.zeros", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("ones", 0, "numpy.ones", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("full", 1, "numpy.full"),
        ("zeros_like", 1, "numpy.zeros_like"),
        ("ones_like", 1, "numpy.ones_like"),
        ("arange", 0, "numpy.arange", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("linspace", 0, "numpy.linspace", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("eye", 0, "numpy.eye", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("identity", 0, "numpy.identity", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("tri", 0, "numpy.tri", {"differentiable": NO_INPUT, "batchable": NO_INPUT_MAP}),
        ("tril", 1, "numpy.tril", {"dtype": "same"}),
        ("triu", 1, "numpy.triu", {"dtype": "same"}),
        ("full_like", 1, "numpy.full_like"),
        ("asarray", 1, "numpy.asarray"),
        *[(n, 0, f"numpy.{n}", _WINDOW) for n in ("bartlett", "blackman", "hamming", "hanning")],
        ("astype", 1, "numpy.ndarray.astype"),
        ("view", 1, "numpy.ndarray.view"),
    ],
)

_SHAPE = _ops(
    "shape",
    "shape",
    "same",
    [
        ("reshape", 1, "numpy.reshape"),
        ("flatten", 1, "numpy.ndarray.flatten"),
        ("unflatten", 1, "mlx.core.unflatten"),
        ("squeeze", 1, "numpy.squeeze"),
        ("expand_dims", 1, "numpy.expand_dims"),
        ("transpose", 1, "numpy.transpose"),
        ("matrix_transpose", 1, "numpy.matrix_transpose"),
        ("swapaxes", 1, "numpy.swapaxes"),
        ("moveaxis", 1, "numpy.moveaxis"),
        ("broadcast_to", 1, "numpy.broadcast_to"),
        ("broadcast_arrays", -1, "numpy.broadcast_arrays"),
        ("atleast_1d", -1, "numpy.atleast_1d"),
        ("atleast_2d", -1, "numpy.atleast_2d"),
        ("atleast_3d", -1, "numpy.atleast_3d"),
        ("concatenate", -1, "numpy.concatenate"),
        ("stack", -1, "numpy.stack"),
        ("unstack", 1, "numpy.unstack"),
        ("split", 1, "numpy.split"),
        ("tile", 1, "numpy.tile"),
        ("repeat", 1, "numpy.repeat"),
        ("pad", 1, "numpy.pad"),
        ("roll", 1, "numpy.roll"),
        ("flip", 1, "numpy.flip"),
        ("as_strided", 1, "numpy.lib.stride_tricks.as_strided"),
        ("contiguous", 1, "numpy.ascontiguousarray"),
        ("meshgrid", -1, "numpy.meshgrid"),
        ("diagonal", 1, "numpy.diagonal"),
        ("diag", 1, "numpy.diag"),
        ("kron", 2, "numpy.kron"),
    ],
)

_INDEXING = _ops(
    "indexing",
    "indexing",
    "same",
    [
        ("take", 2, "numpy.take"),
        ("take_along_axis", 2, "numpy.take_along_axis"),
        ("put_along_axis", 3, "numpy.put_along_axis"),
        ("slice", 2, "mlx.core.slice"),
        ("slice_update", 3, "mlx.core.slice_update"),
        (
            "nonzero",
            1,
            "numpy.nonzero",
            {
                "dtype": "index",
                "differentiable": "integer result of data-dependent shape",
                "batchable": "its output shape depends on the values (raises inside vmap)",
            },
        ),
    ],
)

_INDICES = {"dtype": "index", "differentiable": "integer result"}
_ARG_INT = {
    "dtype": "index",
    "differentiable": "integer result (its zero vjp is tested in test_grad.py)",
}
_REDUCE = _ops(
    "reduce",
    "reduce",
    "reduce",
    [
        ("sum", 1, "numpy.sum"),
        ("prod", 1, "numpy.prod"),
        ("max", 1, "numpy.max"),
        ("min", 1, "numpy.min"),
        ("mean", 1, "numpy.mean", {"dtype": "float"}),
        ("var", 1, "numpy.var", {"dtype": "float"}),
        ("std", 1, "numpy.std", {"dtype": "float"}),
        ("logsumexp", 1, "scipy.special.logsumexp", {"dtype": "float"}),
        ("all", 1, "numpy.all", {"dtype": "bool", "differentiable": BOOL_RESULT}),
        ("any", 1, "numpy.any", {"dtype": "bool", "differentiable": BOOL_RESULT}),
        ("argmax", 1, "numpy.argmax", _ARG_INT),
        ("argmin", 1, "numpy.argmin", _ARG_INT),
        ("count_nonzero", 1, "numpy.count_nonzero", _INDICES),
        ("trace", 1, "numpy.trace"),
        ("minmax", 1, "mlx.core.minmax"),
        ("median", 1, "numpy.median", {"dtype": "float"}),
        ("softmax", 1, "scipy.special.softmax", {"dtype": "float"}),
    ],
)

_PLAN = dict(dtype="none", differentiable="a contraction order", batchable="a contraction order")
_MATMUL = _ops(
    "matmul",
    "matmul",
    "same",
    [
        ("matmul", 2, "numpy.matmul"),
        ("addmm", 3, "mlx.core.addmm"),
        ("inner", 2, "numpy.inner"),
        ("outer", 2, "numpy.outer"),
        ("vecdot", 2, "numpy.vecdot"),
        ("tensordot", 2, "numpy.tensordot"),
        ("einsum", -1, "numpy.einsum"),
        ("einsum_path", -1, "mlx.core.einsum_path", _PLAN),
        ("convolve", 2, "numpy.convolve"),
    ],
)

# Gathered, segmented and masked products (docs/matmul.md), and the Hadamard transform: arities.
_GM = {"gather_mm": 2, "segmented_mm": 2, "block_masked_mm": 2, "hadamard_transform": 1}
_GATHERED = [Op(n, "matmul", k, "same", f"mlx.core.{n}", "matmul") for n, k in _GM.items()]

_CONV = _ops(
    "conv",
    "conv",
    "same",
    [
        ("conv1d", 2, "mlx.core.conv1d"),
        ("conv2d", 2, "mlx.core.conv2d"),
        ("conv3d", 2, "mlx.core.conv3d"),
        ("conv_general", 2, "mlx.core.conv_general"),
        ("conv_transpose1d", 2, "mlx.core.conv_transpose1d"),
        ("conv_transpose2d", 2, "mlx.core.conv_transpose2d"),
        ("conv_transpose3d", 2, "mlx.core.conv_transpose3d"),
    ],
)

_UNIQUE = dict(differentiable="selects by comparisons", batchable="flattens its input")
_SORT = _ops(
    "sort",
    "sort",
    "same",
    [
        ("sort", 1, "numpy.sort"),
        ("argsort", 1, "numpy.argsort", _INDICES),
        ("partition", 1, "numpy.partition"),
        ("argpartition", 1, "numpy.argpartition", _INDICES),
        ("topk", 1, "mlx.core.topk"),
        ("searchsorted", 2, "numpy.searchsorted", _INDICES),
        ("unique", 1, "mlx.core.unique", _UNIQUE),
    ],
)

_SCAN = _ops(
    "scan",
    "scan",
    "reduce",
    [
        ("cumsum", 1, "numpy.cumsum"),
        ("cumprod", 1, "numpy.cumprod"),
        ("cummax", 1, "numpy.maximum.accumulate"),
        ("cummin", 1, "numpy.minimum.accumulate"),
        ("logcumsumexp", 1, "numpy.logaddexp.accumulate", {"dtype": "float"}),
        ("diff", 1, "numpy.diff", {"dtype": "same"}),
    ],
)

_FILES = _ops(
    "io",
    "files",
    "none",
    [
        ("load", 0, "numpy.load"),
        ("save", 1, "numpy.save"),
        ("savez", -1, "numpy.savez"),
        ("savez_compressed", -1, "numpy.savez_compressed"),
        ("save_safetensors", -1, "safetensors.numpy.save_file"),
        ("save_gguf", -1, "mlx.core.save_gguf"),
        ("save_tree", -1, "safetensors.numpy.save_file"),
        ("load_into", 0, "safetensors.numpy.load_file"),
    ],
    differentiable=FILE_IO,
    batchable=FILE_IO,
)

# MLX's fp8 (e4m3) conversions, composed of element-wise ops (csrc/core/ops/fp8.cpp).
_FP8 = _ops(
    "interop",
    "dtypes",
    "given",
    [("to_fp8", 1, "mlx.core.to_fp8"), ("from_fp8", 1, "mlx.core.from_fp8")],
    differentiable="rounds to or decodes integer codes",
)

# Quantization as MLX's (csrc/core/ops/quantized.cpp, docs/quantization.md).
_QUANTIZED = _ops(
    "matmul",
    "quantized",
    "given",
    [
        ("quantize", 1, "mlx.core.quantize", {"differentiable": "rounds to integer codes"}),
        ("dequantize", 3, "mlx.core.dequantize"),
        ("quantized_matmul", 4, "mlx.core.quantized_matmul", {"dtype": "same"}),
        ("gather_qmm", 6, "mlx.core.gather_qmm", {"dtype": "same"}),
    ],
)

_INTEROP = _ops(
    "interop",
    "interoperability",
    "same",
    [
        ("from_dlpack", 0, "numpy.from_dlpack"),
    ],
    differentiable="imports a buffer, not an op on traced arrays",
    batchable="imports a buffer, not an op on arrays",
)


def _load_sibling(name):
    # The registry is loaded by path (tools/gen_registry.py, tests, docs), not as a package
    # module, so its siblings are loaded by path too.
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"nuvec{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_modules = _load_sibling("_registry_modules")
_MODULE_OPS = {
    family: _ops(family, group, dtype, _modules.ROWS[family], public=False, **kw)
    for family, (group, dtype, kw) in _modules.MODULES.items()
}

OPS = (
    _ELEMENTWISE
    + _CREATION
    + _SHAPE
    + _INDEXING
    + _REDUCE
    + _MATMUL
    + _GATHERED
    + _CONV
    + _SORT
    + _SCAN
    + _FILES
    + _INTEROP
    + _FP8
    + _QUANTIZED
    + [op for rows in _MODULE_OPS.values() for op in rows]
)
OPS_BY_NAME = {op.name: op for op in OPS if op.family not in _MODULE_OPS}
# The rows of each submodule (random, linalg, fft) by name: they are not in nuvec's namespace.
MODULE_OPS = {family: {op.name: op for op in rows} for family, rows in _MODULE_OPS.items()}
RANDOM = MODULE_OPS["random"]

# Other names bound to an op's function: `alias is target` in nuvec.
ALIASES = {
    "conj": "conjugate",
    "concat": "concatenate",
    # MLX's array-API names.
    **{a: "arc" + a[1:] for a in ("acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh")},
    **{f"bitwise_{d}_shift": f"{d}_shift" for d in ("left", "right")},
    **{f"cumulative_{r}": f"cum{r}" for r in ("sum", "prod")},
    **{f"empty{s}": f"zeros{s}" for s in ("", "_like")},
    "pow": "power",
    "permute_dims": "transpose",
}

# Public names of nuvec that are not operations: name -> (docs group, why it is not an op).
NON_OPS = {
    "array": ("creation", "the array class"),
    **{n: ("indexing", "the `.at` helper classes") for n in ("ArrayAt", "ArrayAtIndexer")},
    "ROW_INDEPENDENT_ROWS": ("matmul", "a constant"),
    **{n: ("constants", "a constant") for n in ("pi", "e", "euler_gamma", "inf", "nan", "newaxis")},
    "broadcast_shapes": ("shape", "shape arithmetic, no array"),
    "matrix_norm": ("reduce", "MLX's other name of linalg.norm (the same function)"),
    **{
        n: ("modules", "a module")
        for n in "random utils io metal cuda nn distributed optimizers fast linalg fft".split()
    },
    "lm": ("modules", "a package: language models with mlx-lm's names (docs/lm.md)"),
    **{
        n: ("transforms", "transform")
        for n in ("grad", "value_and_grad", "vjp", "jvp", "vmap", "custom_function", "checkpoint")
    },
    **{n: ("transforms", "compile") for n in ("compile", "disable_compile", "enable_compile")},
    **{n: ("evaluation", "evaluation") for n in ("eval", "async_eval", "depends", "export_to_dot")},
    **{n: ("evaluation", "nuvec-only: ordered now, run later") for n in ("schedule", "Schedule")},
    **{
        n: ("printing", "print options")
        for n in ("PrintOptions", "printoptions", "set_printoptions", "get_printoptions")
    },
    **{
        n: ("export", "function export")
        for n in ("export_function", "import_function", "exporter", "FunctionExporter")
    },
    **{
        n: ("devices", "devices and streams")
        for n in (
            "cpu",
            "gpu",
            "Device",
            "DeviceType",
            "Stream",
            "is_available",
            "default_device",
            "set_default_device",
            "default_stream",
            "set_default_stream",
            "new_stream",
            "new_thread_unsafe_stream",
            "new_thread_local_stream",
            "ThreadLocalStream",
            "clear_streams",
            "stream",
            "StreamContext",
            "synchronize",
            "device_info",
            "device_count",
        )
    },
    **{
        n: ("memory", "memory management")
        for n in (
            "get_active_memory",
            "get_array_buffer_size",
            "get_peak_memory",
            "reset_peak_memory",
            "get_cache_memory",
            "set_memory_limit",
            "get_memory_limit",
            "set_cache_limit",
            "set_wired_limit",
            "clear_cache",
        )
    },
    **{n: ("threads", "thread setting") for n in ("get_num_threads", "set_num_threads")},
    **{n: ("native", "the C API's paths") for n in ("get_include", "get_library", "cmake_dir")},
    **{
        n: ("dtypes", "a dtype")
        for n in (
            "Dtype",
            "bool_",
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
    },
    **{
        n: ("dtypes", "a dtype category")
        for n in (
            "DtypeCategory",
            "generic",
            "number",
            "integer",
            "signedinteger",
            "unsignedinteger",
            "inexact",
            "floating",
            "complexfloating",
        )
    },
    **{
        n: ("dtypes", "dtype query, not an array op")
        for n in ("issubdtype", "isdtype", "can_cast", "result_type", "finfo", "iinfo")
    },
    **{
        n: ("errors", "an error class")
        for n in ("OpError", "AxisError", "EvalError", "EvalIndexError", "EvalMemoryError")
    },
}


_groups = _load_sibling("_registry_groups")
GROUPS, ELEMENTWISE_GROUPS = _groups.GROUPS, _groups.ELEMENTWISE_GROUPS


def kernel_ops(primitive):
    """The element-wise kernel ops of one primitive ("Unary" or "Binary"), in enum order."""
    return [op for op in OPS if op.primitive == primitive]


def group_names(group):
    """The public names of one docs group, in registry order (ops, then the other names)."""
    ops = []
    for op in OPS:
        if op.group == group and op.public:
            ops += [op.name] + [a for a, target in ALIASES.items() if target == op.name]
    return ops + [n for n, (g, _) in NON_OPS.items() if g == group]


def public_names():
    """Every public name of the nuvec module the registry knows."""
    ops = {op.name for op in OPS if op.public}
    return ops | set(ALIASES) | set(NON_OPS)
