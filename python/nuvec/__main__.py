"""`python -m nuvec --cflags | --ldflags | --include | --library | --cmake-dir`: the flags and paths
for building native code against nuvec's C API (docs/c-api.md)."""

import argparse

from . import _native

_ANSWERS = {
    "cflags": _native.cflags,
    "ldflags": _native.ldflags,
    "include": _native.get_include,
    "library": _native.get_library,
    "cmake_dir": _native.cmake_dir,
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nuvec", description=__doc__)
    for name in _ANSWERS:
        parser.add_argument("--" + name.replace("_", "-"), action="store_true")
    args = parser.parse_args(argv)
    chosen = [fn() for name, fn in _ANSWERS.items() if getattr(args, name)]
    if not chosen:
        parser.error(
            "give at least one of " + ", ".join("--" + n.replace("_", "-") for n in _ANSWERS)
        )
    print(" ".join(chosen))


if __name__ == "__main__":
    main()
