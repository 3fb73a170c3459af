"""nuvec: lazy arrays with MLX's API over a fast, deterministic C++ core.

import nuvec as mx
"""

import os as _os

from . import (  # noqa: F401
    _array_methods,  # noqa: F401  (attaches __repr__, __array__ and friends)
    _core,
    random,
    utils,
)
from ._core import *  # noqa: F401,F403
from ._core import AxisError, EvalError, EvalIndexError, EvalMemoryError, OpError, array  # noqa: F401
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
from ._streams import stream  # noqa: F401
from .io import load, save, save_safetensors, savez, savez_compressed  # noqa: F401
from .utils import load_into, save_tree  # noqa: F401

__version__ = "0.1.0"

_core._add_internal_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)
from ._transforms import checkpoint, custom_function, grad, jvp, value_and_grad, vjp  # noqa: E402,F401
from ._vmap import vmap  # noqa: E402,F401
