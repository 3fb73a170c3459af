"""Loads OpenBLAS (the scipy-openblas32 package) before the extension that links it.

nuvec.linalg's LAPACK routines live in that package's shared library. An installed wheel finds it
through the extension's run path; loading it here by its path first makes every layout work (a
developer build, a virtual environment elsewhere): the extension then binds to the loaded copy.
"""

import ctypes
import os

import scipy_openblas32 as _pkg

_path = os.path.join(_pkg.get_lib_dir(), _pkg.get_library(fullname=True))
# OpenBLAS starts its worker threads when it loads, at one per core unless OPENBLAS_NUM_THREADS says
# otherwise, and they spin for a while before they sleep: on the 2 cores of a small machine that
# takes a core from the first nuvec ops for tens of milliseconds. nuvec sets the count per call
# (backend/cpu/blas_threads.h), so the library loads at one thread; the variable is put back at
# once, for NumPy's own OpenBLAS and anything else that reads it later.
_saved = os.environ.get("OPENBLAS_NUM_THREADS")
os.environ["OPENBLAS_NUM_THREADS"] = "1"
try:
    _lib = ctypes.CDLL(_path, mode=ctypes.RTLD_GLOBAL)
finally:
    if _saved is None:
        del os.environ["OPENBLAS_NUM_THREADS"]
    else:
        os.environ["OPENBLAS_NUM_THREADS"] = _saved
