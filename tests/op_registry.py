"""The op registry (python/nuvec/_registry.py), loaded by path: the suite also runs against MLX,
where nuvec itself is not imported. `resolve` turns a row's reference into its callable."""

import importlib
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "python", "nuvec", "_registry.py")


def _load():
    spec = importlib.util.spec_from_file_location("nuvec_registry", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses looks the module up
    spec.loader.exec_module(module)
    return module


registry = _load()


def resolve(reference):
    """The object a reference names: the longest importable module prefix, then attributes."""
    parts = reference.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"no module for reference {reference!r}")
