"""Loads OpenBLAS (the scipy-openblas32 package) before the extension that links it.

nuvec.linalg's LAPACK routines live in that package's shared library. An installed wheel finds it
through the extension's run path; loading it here by its path first makes every layout work (a
developer build, a virtual environment elsewhere): the extension then binds to the loaded copy.
"""

import ctypes
import os

import scipy_openblas32 as _pkg

_path = os.path.join(_pkg.get_lib_dir(), _pkg.get_library(fullname=True))
_lib = ctypes.CDLL(_path, mode=ctypes.RTLD_GLOBAL)
