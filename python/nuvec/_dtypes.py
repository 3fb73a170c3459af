"""Dtype categories and issubdtype, as MLX's (generic > number > integer/inexact > ...)."""

import enum

from . import _core
from ._errors import op_error


class DtypeCategory(enum.Enum):
    complexfloating = "complexfloating"
    floating = "floating"
    inexact = "inexact"
    signedinteger = "signedinteger"
    unsignedinteger = "unsignedinteger"
    integer = "integer"
    number = "number"
    generic = "generic"


complexfloating = DtypeCategory.complexfloating
floating = DtypeCategory.floating
inexact = DtypeCategory.inexact
signedinteger = DtypeCategory.signedinteger
unsignedinteger = DtypeCategory.unsignedinteger
integer = DtypeCategory.integer
number = DtypeCategory.number
generic = DtypeCategory.generic

bool_ = _core.bool_

_PARENT = {
    complexfloating: inexact,
    floating: inexact,
    inexact: number,
    signedinteger: integer,
    unsignedinteger: integer,
    integer: number,
    number: generic,
    generic: None,
}
_KIND = {
    "bool_": generic,
    "uint8": unsignedinteger,
    "uint16": unsignedinteger,
    "uint32": unsignedinteger,
    "uint64": unsignedinteger,
    "int8": signedinteger,
    "int16": signedinteger,
    "int32": signedinteger,
    "int64": signedinteger,
    "float16": floating,
    "float32": floating,
    "float64": floating,
    "bfloat16": floating,
    "complex64": complexfloating,
}
_CATEGORY_OF = {getattr(_core, name): cat for name, cat in _KIND.items()}


def _ancestors(cat):
    while cat is not None:
        yield cat
        cat = _PARENT[cat]


def issubdtype(a: _core.Dtype | DtypeCategory, b: _core.Dtype | DtypeCategory) -> bool:
    """Whether dtype or category `a` is `b` or falls under category `b`."""
    for which, x in (("first", a), ("second", b)):
        if not isinstance(x, (_core.Dtype, DtypeCategory)):
            raise op_error("issubdtype", f"invalid type for the {which} input: {type(x).__name__}")
    if isinstance(a, _core.Dtype) and isinstance(b, _core.Dtype):
        return a == b
    if isinstance(b, _core.Dtype):
        return False
    cat = _CATEGORY_OF[a] if isinstance(a, _core.Dtype) else a
    return b in _ancestors(cat)
