"""Where nuvec's C API lives, for native code that builds against it (docs/c-api.md).

The installed package holds nuvec/include (the headers), nuvec/lib/libnuvec.so (the core, which
nuvec._core links too: one runtime) and nuvec/cmake (nuvecConfig.cmake). A developer build uses
the repository's include/ and cmake/ and the library in build/dev (where the developer build
puts it).
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))


def _first(*paths):
    for p in paths:
        if os.path.exists(p):
            return p
    return paths[0]


def get_include() -> str:
    """The directory to add to the include path: it holds nuvec/nuvec.h and nuvec/python.h."""
    return _first(os.path.join(_HERE, "include"), os.path.join(_REPO, "include"))


def get_library() -> str:
    """The path of the shared library libnuvec (.so, or .dylib on macOS)."""
    name = "libnuvec" + (".dylib" if sys.platform == "darwin" else ".so")
    return _first(os.path.join(_HERE, "lib", name), os.path.join(_REPO, "build", "dev", name))


def cmake_dir() -> str:
    """The directory holding nuvecConfig.cmake, for find_package(nuvec CONFIG) (nuvec_DIR)."""
    return _first(os.path.join(_HERE, "cmake"), os.path.join(_REPO, "cmake"))


def cflags() -> str:
    """The compiler flags for the C API (`python -m nuvec --cflags`)."""
    return f"-I{get_include()}"


def ldflags() -> str:
    """The linker flags: the library, with a run path to it (`python -m nuvec --ldflags`)."""
    lib = os.path.dirname(os.path.realpath(get_library()))
    return f"-L{lib} -lnuvec -Wl,-rpath,{lib}"
