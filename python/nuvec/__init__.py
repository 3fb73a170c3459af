"""nuvec: lazy arrays with MLX's API over a fast, deterministic C++ core.

import nuvec as mx
"""

import os as _os
import typing as _stdtyping
from math import e, inf, nan, pi  # noqa: F401  (MLX's constants)

from . import _openblas  # noqa: F401  (before _core, which links it)

# isort: split

from . import (  # noqa: F401
    _array_methods,  # noqa: F401  (attaches __repr__, __array__ and friends)
    _core,
    cuda,
    distributed,
    fast,
    fft,
    io,
    linalg,
    metal,
    optimizers,
    random,
    utils,
)
from ._composed import asarray, convolve, full_like, unique  # noqa: F401
from ._core import *  # noqa: F401,F403
from ._core import AxisError, EvalError, EvalIndexError, EvalMemoryError, OpError, array  # noqa: F401
from ._devices import device_count, device_info, set_wired_limit  # noqa: F401
from ._dtype_info import can_cast, finfo, iinfo, isdtype, result_type  # noqa: F401
from ._dtypes import (  # noqa: F401
    DtypeCategory,
    bool_,
    complexfloating,
    floating,
    generic,
    inexact,
    integer,
    issubdtype,
    number,
    signedinteger,
    unsignedinteger,
)
from ._export import FunctionExporter, export_function, exporter, import_function  # noqa: F401
from ._export_dot import export_to_dot  # noqa: F401
from ._fp8 import from_fp8, to_fp8  # noqa: F401
from ._linalg_spectral import matrix_norm  # noqa: F401  (MLX's other name of linalg.norm)
from ._native import cmake_dir, get_include, get_library  # noqa: F401
from ._printoptions import PrintOptions, get_printoptions, printoptions, set_printoptions  # noqa: F401
from ._streams import StreamContext, stream  # noqa: F401
from .io import load, save, save_gguf, save_safetensors, savez, savez_compressed  # noqa: F401
from .utils import load_into, save_tree  # noqa: F401

euler_gamma = 0.5772156649015329
newaxis = None

# MLX's other names of ops (ALIASES in _registry.py): the same function objects.
acos, asin, atan, atan2 = _core.arccos, _core.arcsin, _core.arctan, _core.arctan2
acosh, asinh, atanh = _core.arccosh, _core.arcsinh, _core.arctanh
pow = _core.power  # noqa: A001 (MLX's name)
permute_dims = _core.transpose
bitwise_left_shift, bitwise_right_shift = _core.left_shift, _core.right_shift
cumulative_sum, cumulative_prod = _core.cumsum, _core.cumprod
empty, empty_like = _core.zeros, _core.zeros_like

__version__ = "0.1.0"

# The public names, for `from nuvec import *` and type checkers (tests/test_typing.py holds them
# to dir(nuvec) and the registry): the names defined here, then the compiled module's.
__all__ = [
    "acos", "acosh", "asarray", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_left_shift",
    "bitwise_right_shift", "can_cast", "checkpoint", "compile", "complexfloating", "convolve", "cuda",
    "cumulative_prod", "cumulative_sum", "custom_function", "device_count", "device_info",
    "disable_compile", "distributed", "enable_compile", "fast", "fft",
    "DtypeCategory", "e", "empty", "empty_like", "euler_gamma", "export_to_dot", "finfo",
    "floating", "from_fp8", "full_like", "generic", "get_printoptions", "grad", "iinfo",
    "export_function", "exporter", "FunctionExporter", "import_function",
    "inexact", "inf", "integer", "io", "isdtype", "linalg", "issubdtype", "jvp", "load", "load_into",
    "metal", "nan", "newaxis", "number", "optimizers", "permute_dims", "pi", "pow", "PrintOptions",
    "printoptions", "random", "result_type", "save", "save_gguf", "save_safetensors",
    "save_tree", "savez", "savez_compressed", "set_printoptions", "set_wired_limit",
    "signedinteger", "stream", "StreamContext", "to_fp8", "unique", "unsignedinteger", "utils",
    "value_and_grad", "vjp", "vmap",
]  # fmt: skip
__all__ += ["matrix_norm"]  # linalg.norm (docs/linalg.md)
__all__ += ["nn"]  # noqa: F405 - nuvec.nn (as mlx.nn), loaded on first use: __getattr__ below
__all__ += ["lm"]  # noqa: F405 - nuvec.lm (as mlx-lm), loaded on first use: __getattr__ below
__all__ += ["cmake_dir", "get_include", "get_library"]  # the C API's paths (docs/c-api.md)
_core.__all__ = [n for n in dir(_core) if not n.startswith("_")]
__all__ += _core.__all__

_core._add_internal_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)
from ._compile import compile, disable_compile, enable_compile  # noqa: E402,F401
from ._transforms import checkpoint, custom_function, grad, jvp, value_and_grad, vjp  # noqa: E402,F401
from ._vmap import vmap  # noqa: E402,F401

if not _stdtyping.TYPE_CHECKING:  # hidden from type checkers, which would let any name through it

    def __getattr__(name):  # the subpackages load on first use, so `import nuvec` stays light
        if name in ("lm", "nn"):
            import importlib

            return importlib.import_module("." + name, __name__)
        raise AttributeError(f"module 'nuvec' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"lm", "nn"})
