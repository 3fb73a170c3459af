"""OpError for checks made in Python, with the same attributes the core's errors carry."""

import os
import sys

from ._core import AxisError, OpError

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def op_error(op, reason, index=False):
    """An OpError (an AxisError when ``index``) naming ``op``, located at the caller outside nuvec."""
    e = (AxisError if index else OpError)(f"{op}: {reason}")
    e.op_name, e.reason, e.filename, e.lineno = op, reason, None, None
    f = sys._getframe(1)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE):
        f = f.f_back
    if f is not None:
        e.filename, e.lineno = f.f_code.co_filename, f.f_lineno
    return e
