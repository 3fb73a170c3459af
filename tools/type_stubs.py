"""Gives the stubs nanobind's stubgen writes for nuvec._core real parameter types.

    python tools/type_stubs.py IN.pyi OUT.pyi

CMake runs it right after stubgen (standard library only). Most bindings take `nb::handle`, which
stubgen can only call `object`; this rewrites such parameters from a table keyed by parameter name
(and by function and name where a name means different things), gives bare `tuple`/`list`/
`object` results their element types, declares what Python adds at run time (the exception
classes, `bool_`, the array methods of python/nuvec/_array_methods.py) and writes `__all__`.
A parameter the table cannot type stays `object` with a warning, and tests/test_typing.py fails on
it (KEEP_OBJECT lists the ones that rightly take any object): a new name goes into PARAMS.
"""

import ast
import re
import sys

# Written after stubgen's imports: the aliases of python/nuvec/_typing.py, under private names.
ALIASES = """
from typing import Any

from nuvec._typing import ArrayLike as _ArrayLike
from nuvec._typing import Axis as _Axis
from nuvec._typing import Index as _Index
from nuvec._typing import Shape as _Shape
from nuvec._typing import StreamLike as _Stream
"""

# Parameter name -> type (without None: a parameter stubgen wrote as `object | None` keeps it).
PARAMS = {
    **dict.fromkeys(
        ("a", "b", "c", "x", "y", "condition", "arg", "value", "values", "vals", "update"),
        "_ArrayLike",
    ),
    **dict.fromkeys(("array", "constant_values", "a_min", "a_max", "indices"), "_ArrayLike"),
    "axis": "_Axis",
    "shape": "_Shape",
    "shift": "_Shape",
    "reps": "_Shape",
    "strides": "Sequence[int]",
    "axes": "Sequence[int]",
    "start_indices": "array | Sequence[int]",
    "slice_size": "Sequence[int]",
    "indices_or_sections": "int | Sequence[int]",
    "pad_width": "int | Sequence[int] | Sequence[Sequence[int]]",
    "arrays": "Sequence[_ArrayLike]",
    "dtype": "Dtype",
    "stream": "_Stream",
    "index": "_Index",
    "start": "int | float",
    "stop": "int | float",
    "step": "int | float",
    "memo": "dict[int, Any]",
    "val": "_ArrayLike | Sequence[Any]",
    "sorted_sequence": "_ArrayLike",
    "input": "_ArrayLike",
    "weight": "_ArrayLike",
    **dict.fromkeys(("w", "scales", "biases", "global_scale"), "_ArrayLike"),  # quantization
    **dict.fromkeys(  # gathered, segmented and masked products
        ("lhs_indices", "rhs_indices", "segments", "mask_out", "mask_lhs", "mask_rhs"), "_ArrayLike"
    ),
    **dict.fromkeys(
        ("stride", "padding", "dilation", "output_padding", "kernel_dilation", "input_dilation"),
        "int | Sequence[int]",
    ),
}

# (function, parameter) -> type, where the name alone would mislead.
PARAMS_OF = {
    ("tensordot", "axes"): "int | Sequence[Sequence[int]]",
    ("conv_general", "padding"): "int | Sequence[int] | tuple[Sequence[int], Sequence[int]]",
    ("from_dlpack", "x"): "Any",
    ("synchronize", "stream"): "Stream",
    ("__dlpack__", "max_version"): "tuple[int, int]",
    ("depends", "arg0"): "_ArrayLike | Sequence[_ArrayLike]",
    ("depends", "arg1"): "_ArrayLike | Sequence[_ArrayLike]",
    **{
        (op, "axis"): "int"
        for op in "argmax argmin concatenate repeat take take_along_axis put_along_axis".split()
    },
}

# Parameters that rightly take any object: comparing with anything is defined (MLX's False).
KEEP_OBJECT = {("__eq__", "arg"), ("__ne__", "arg")}

# Variadic parameters stubgen leaves untyped.
STAR = {
    "eval": "*args: Any",
    "async_eval": "*args: Any",
    "schedule": "*args: Any",
    "get_array_buffer_size": "*args: Any",
    "broadcast_arrays": "*args: _ArrayLike",
    "atleast_1d": "*args: _ArrayLike",
    "atleast_2d": "*args: _ArrayLike",
    "atleast_3d": "*args: _ArrayLike",
    "meshgrid": "*arrays: _ArrayLike",
    "einsum": "*operands: _ArrayLike",
    "einsum_path": "*operands: _ArrayLike",
    "broadcast_shapes": "*shapes: Sequence[int]",
}

# (function, result stubgen wrote) -> result; "" matches any function.
RESULTS = {
    ("shape", "tuple"): "tuple[int, ...]",
    ("__dlpack_device__", "tuple"): "tuple[int, int]",
    ("__divmod__", "tuple"): "tuple[array, array]",
    ("__rdivmod__", "tuple"): "tuple[array, array]",
    ("nonzero", "tuple"): "tuple[array, ...]",
    ("unstack", "tuple"): "tuple[array, ...]",
    ("meshgrid", "tuple"): "tuple[array, ...]",
    ("broadcast_shapes", "tuple"): "tuple[int, ...]",
    ("einsum_path", "tuple"): "tuple[list[tuple[int, ...]], str]",
    ("", "list"): "list[array]",
    ("", "Iterator"): "Iterator[array]",
    ("item", "object"): "Any",
    ("tolist", "object"): "Any",
    ("__dlpack__", "object"): "Any",
    ("atleast_1d", "object"): "array | list[array]",
    ("atleast_2d", "object"): "array | list[array]",
    ("atleast_3d", "object"): "array | list[array]",
    ("depends", "object"): "array | list[array]",
    ("__bytes__", "object"): "bytes",
}
IN_PLACE = re.compile(r"__i[a-z]+__")  # x += y updates x itself and gives it back
COMPARISON = ("__eq__", "__ne__")  # element-wise, as MLX: an array, not object.__eq__'s bool

# What nuvec's Python adds to the compiled module at import.
EXCEPTIONS = """
class OpError(ValueError): ...
class AxisError(OpError, IndexError): ...
class EvalError(RuntimeError): ...
class EvalIndexError(EvalError, IndexError): ...
class EvalMemoryError(EvalError, MemoryError): ...

bool_: Dtype = Dtype.bool_
"""

# Methods python/nuvec/_array_methods.py attaches to the array class.
ARRAY_METHODS = """
    def __repr__(self) -> str: ...
    def __str__(self) -> str: ...
    def __format__(self, spec: str) -> str: ...
    def __complex__(self) -> complex: ...
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any: ...
    def __array_namespace__(self, api_version: str | None = None) -> Any: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    def reshape(self, *shape: int | Sequence[int], stream: _Stream | None = None) -> array: ...
    def transpose(self, *axes: int | Sequence[int], stream: _Stream | None = None) -> array: ...
    @property
    def real(self) -> array: ...
    @property
    def imag(self) -> array: ...
    @property
    def mT(self) -> array: ...
"""
# The ops _array_methods.py binds as methods: the function's signature with `self` first.
OPS_AS_METHODS = (
    "flatten unflatten squeeze swapaxes moveaxis split diagonal diag abs square sqrt rsqrt "
    "reciprocal exp log log1p log2 log10 sin cos round conj conjugate take expand_dims"
).split()

DEF = re.compile(r"^(?P<indent>\s*)def (?P<name>\w+)\((?P<params>.*)\)(?P<rest> -> .*)$")


def split_params(text):
    """The parameters of a signature, split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def typed_param(fn, param, untyped):
    if re.fullmatch(r"\*\*\w+", param):
        return f"{param}: Any"
    if re.fullmatch(r"\*\w+", param):
        if fn not in STAR:
            untyped.append(f"{fn}({param})")
        return STAR.get(fn, param)
    m = re.match(r"(\w+): object( \| None)?(.*)$", param)
    if not m:
        return param
    name, optional, default = m.groups()
    if (fn, name) in KEEP_OBJECT:
        return param
    new = PARAMS_OF.get((fn, name), PARAMS.get(name))
    if new is None:
        untyped.append(f"{fn}({name})")
        return param
    return f"{name}: {new}{' | None' if optional else ''}{default}"


def typed_result(fn, rest):
    m = re.match(r" -> (\w+):(.*)$", rest)
    if not m:
        return rest
    result, tail = m.groups()
    new = RESULTS.get((fn, result), RESULTS.get(("", result)))
    if result == "object" and (IN_PLACE.fullmatch(fn) or fn in COMPARISON):
        new = "array"
    if fn in COMPARISON and result == "object":
        tail = tail + "  # type: ignore[override]" if "#" not in tail else tail
    return f" -> {new or result}:{tail}"


def rewrite_line(line, untyped):
    m = DEF.match(line)
    if not m:
        return line
    fn = m["name"]
    params = [typed_param(fn, p, untyped) for p in split_params(m["params"])]
    return f"{m['indent']}def {fn}({', '.join(params)}){typed_result(fn, m['rest'])}"


def public_names(text):
    """The module-level names the stub defines, in order, without the `_` ones."""
    names = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.append(node.target.id)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets]
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]


def method_from_function(name, line):
    m = DEF.match(line)
    params = split_params(m["params"])
    return f"    def {name}({', '.join(['self', *params[1:]])}){m['rest'].split(':')[0]}: ..."


def rewrite(text):
    """(the typed stub, the parameters left untyped) of a stub stubgen wrote."""
    untyped = []
    lines = [rewrite_line(line, untyped) for line in text.split("\n")]
    functions = {
        DEF.match(ln)["name"]: ln for ln in lines if DEF.match(ln) and ln.startswith("def ")
    }
    for alias, target in (m.groups() for m in map(re.compile(r"(\w+) = (\w+)$").match, lines) if m):
        functions.setdefault(alias, functions.get(target))
    start = lines.index("class array:")
    end = next(i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace())
    have = {DEF.match(ln)["name"] for ln in lines[start:end] if DEF.match(ln)}
    methods = ARRAY_METHODS.strip("\n").split("\n")
    methods += [
        method_from_function(n, functions[n])
        for n in OPS_AS_METHODS
        if n not in have and n in functions
    ]
    lines[end:end] = [*methods, ""]
    last_import = max(i for i, ln in enumerate(lines) if re.match(r"(from|import) ", ln))
    lines[last_import + 1 : last_import + 1] = ALIASES.split("\n") + EXCEPTIONS.split("\n")
    # stubgen leaves out the enum member whose name ends in `_`: it goes before the first.
    start = lines.index("class Dtype(enum.Enum):")
    first = next(i for i in range(start, len(lines)) if re.fullmatch(r"    \w+ = \d+", lines[i]))
    lines[first:first] = ["    bool_ = 0", ""]
    text = "\n".join(lines).rstrip("\n")
    body = ",\n".join(f'    "{n}"' for n in public_names(text))
    return f"{text}\n\n__all__ = [\n{body},\n]\n", untyped


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        text, untyped = rewrite(f.read())
    if untyped:  # a warning, not a failed build: tests/test_typing.py fails on them
        print(
            f"tools/type_stubs.py: left `object` (add to PARAMS or STAR): {untyped}",
            file=sys.stderr,
        )
    with open(dst, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:])
