"""Checks the source layout that docs/design.md promises; exits non-zero on any breach.

    python tools/check_layout.py [REPO_ROOT]

1. No source file (C++ or Python) over 800 lines: a bigger file is split by concern.
2. Includes point one way, python -> transforms -> core <- backend (io reads into core arrays):
   each layer under csrc/ may include only the layers listed in ALLOWED, and every project
   include names its file by its path from csrc/ ("core/array.h", not "array.h"), or is a
   generated file (nuvec_generated/...).
3. Headers sit beside their .cpp: a header X.h with no X.cpp (or X_*.cpp) beside it is
   misplaced when another folder of the same layer holds an X.cpp with no header beside it.

Standard library only, so CI can run it before anything is installed.
"""

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import PurePosixPath

MAX_LINES = 800
CPP_SOURCES = (".cpp", ".cu")
CPP_HEADERS = (".h", ".cuh")
SOURCE_SUFFIXES = CPP_SOURCES + CPP_HEADERS + (".py",)
SKIP_DIRS = {".git", "build", ".ci-venv", "__pycache__", ".hypothesis", ".pytest_cache"}

# The layers under csrc/ and what each may include. A backend may include the core and its own
# folder only (backends plug in beside each other, never into one another); None: anything.
ALLOWED = {
    "core": ("core/",),
    "transforms": ("core/", "transforms/"),
    "io": ("core/", "io/"),
    "backend": ("core/",),  # plus backend/<its own name>/, added in include_problems
    "python": None,
    "c_api": None,
}
# Files the op registry's generator writes at build time (tables, not a layer): any layer may
# include them.
GENERATED = "nuvec_generated/"
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.MULTILINE)


def source_files(root):
    """Repository paths (posix, relative to root) of the sources: git's tracked and unignored
    files when root is a checkout, else a walk that skips build and environment folders."""
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
        ).stdout.decode()
        paths = [p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p))]
    except (OSError, subprocess.CalledProcessError):
        paths = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("venv")]
            paths += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/") for f in files]
    return sorted(p for p in paths if p.endswith(SOURCE_SUFFIXES))


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def size_problems(root, paths):
    for p in paths:
        n = len(read(root, p).splitlines())
        if n > MAX_LINES:
            yield f"{p}: {n} lines (at most {MAX_LINES}): split it by concern"


def layer_of(path):
    """(layer, the include prefix of its own folder) of a path under csrc/, e.g.
    ("backend", "backend/cpu/") for csrc/backend/cpu/simd/matmul.cpp."""
    parts = PurePosixPath(path).parts
    layer = parts[1] if len(parts) > 2 else ""
    own = f"{layer}/{parts[2]}/" if layer == "backend" and len(parts) > 3 else f"{layer}/"
    return layer, own


def include_problems(root, paths):
    csrc = [p for p in paths if p.startswith("csrc/") and not p.endswith(".py")]
    for p in csrc:
        layer, own = layer_of(p)
        if layer not in ALLOWED:
            yield f"{p}: csrc/{layer}/ is not a known layer (see ALLOWED in tools/check_layout.py)"
            continue
        allowed = ALLOWED[layer]
        if allowed is not None and layer == "backend":
            allowed = allowed + (own,)
        text = read(root, p)
        for m in INCLUDE.finditer(text):
            bracket, inc = m.groups()
            line = text.count("\n", 0, m.start()) + 1
            top = inc.split("/")[0]
            if inc.startswith(GENERATED):
                continue
            if bracket == '"' and top not in ALLOWED:
                yield f'{p}:{line}: #include "{inc}": name project headers by their path from csrc/'
            elif top in ALLOWED and allowed is not None and not inc.startswith(allowed):
                may = ", ".join(allowed)
                yield f'{p}:{line}: #include "{inc}": csrc/{own} may include only {may}'


def beside_problems(paths):
    """Headers apart from the .cpp of their name, within one layer (csrc/python/reduce.cpp binds
    the reduce family: a same name across layers is the point, not a misplacement)."""
    headers, sources = defaultdict(set), defaultdict(set)  # (layer, stem) -> folders
    stems_in = defaultdict(set)  # folder -> stems of its .cpp files
    for p in paths:
        if not p.startswith("csrc/"):
            continue
        pp = PurePosixPath(p)
        key = (layer_of(p)[0], pp.stem)
        if pp.suffix in CPP_HEADERS:
            headers[key].add(str(pp.parent))
        elif pp.suffix in CPP_SOURCES:
            sources[key].add(str(pp.parent))
            stems_in[str(pp.parent)].add(pp.stem)
    for key, header_dirs in sorted(headers.items()):
        stem = key[1]
        for hd in sorted(header_dirs):
            # X_grad.cpp, X_vmap.cpp beside X.h implement it too.
            if any(s == stem or s.startswith(stem + "_") for s in stems_in[hd]):
                continue
            for sd in sorted(sources[key] - header_dirs):
                yield (
                    f"{hd}/{stem}.h: not beside {sd}/{stem}.cpp, which has no header beside it "
                    "(headers sit beside their .cpp)"
                )


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = source_files(root)
    problems = [*size_problems(root, paths), *include_problems(root, paths)]
    problems += beside_problems(paths)
    for line in problems:
        print(line)
    if problems:
        print(f"check_layout: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_layout: {len(paths)} source files, layout OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
