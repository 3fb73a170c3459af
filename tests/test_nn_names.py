"""The name harness of nuvec.nn: mlx.nn's package layout, name for name. For mlx.nn, mlx.nn.layers,
mlx.nn.losses, mlx.nn.init, mlx.nn.utils and every mlx.nn.layers.<submodule>, each public name
(a layer, a function, or a submodule of the package) must be a name of nuvec's module of the same
path (nuvec.nn.<...>) or be listed in tests/nn_allowlist.py with why, and be the same kind of thing
(class, function or module). Listed names nuvec has everywhere are stale entries and fail.

The public names of a package (mlx.nn, mlx.nn.layers) are everything it offers from mlx.nn,
re-exports included; those of a plain module are what it defines itself (not what it imports).
Skipped when MLX is not installed, and when the suite runs against MLX.
"""

import importlib
import inspect
import pkgutil
import types

import pytest

from _impl import IS_MLX
from nn_allowlist import MISSING, PENDING_MERGE

if IS_MLX:
    pytest.skip("the name harness compares nuvec.nn with mlx.nn", allow_module_level=True)

mlx_nn = pytest.importorskip("mlx.nn")
pytest.importorskip("nuvec.nn")

MODULES = ["mlx.nn", "mlx.nn.layers", "mlx.nn.losses", "mlx.nn.init", "mlx.nn.utils"] + [
    f"mlx.nn.layers.{m.name}" for m in pkgutil.iter_modules(mlx_nn.layers.__path__)
]
ALLOWED = {**MISSING, **PENDING_MERGE}


def kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    return "function" if callable(obj) else "constant"


def public_names(module):
    """The public names of an mlx.nn module, as the docstring above says."""
    package = hasattr(module, "__path__")
    names = []
    for n in dir(module):
        obj = getattr(module, n)
        if n.startswith("_"):
            continue
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith(module.__name__ + "."):
                names.append(n)
            continue
        home = getattr(obj, "__module__", None) or ""
        if home == module.__name__ or (package and home.startswith("mlx.nn")):
            names.append(n)
    return sorted(names)


def counterpart(name):
    """nuvec's module of the same path as the mlx.nn module ``name``, or None if it has none."""
    try:
        return importlib.import_module("nuvec" + name[len("mlx") :])
    except ModuleNotFoundError:
        return None


PAIRS = {name: (importlib.import_module(name), counterpart(name)) for name in MODULES}
NAMES = {name: public_names(m) for name, (m, _) in PAIRS.items()}


def missing_in(name):
    mod = PAIRS[name][1]
    return [n for n in NAMES[name] if mod is None or not hasattr(mod, n)]


def test_the_harness_sees_mlx_nn():
    assert "Linear" in NAMES["mlx.nn"] and "distributed" in NAMES["mlx.nn.layers"]
    assert NAMES["mlx.nn.layers.linear"] == ["Bilinear", "Identity", "Linear"]
    assert "tree_flatten" not in NAMES["mlx.nn.utils"]  # imported, not its own


@pytest.mark.parametrize("name", MODULES)
def test_every_mlx_nn_name_is_in_nuvec_or_allowed(name):
    missing = [n for n in missing_in(name) if n not in ALLOWED]
    assert not missing, (
        f"public names of {name} that nuvec{name[3:]} lacks and tests/nn_allowlist.py does not "
        f"list: {missing}"
    )


def test_allowlist_holds_only_missing_mlx_nn_names():
    assert not MISSING.keys() & PENDING_MERGE.keys()
    assert all(isinstance(why, str) and why for why in ALLOWED.values())
    everywhere = {n for names in NAMES.values() for n in names}
    unknown = sorted(ALLOWED.keys() - everywhere)
    assert not unknown, f"tests/nn_allowlist.py lists names mlx.nn lacks: {unknown}"
    still_missing = {n for name in MODULES for n in missing_in(name)}
    stale = sorted(ALLOWED.keys() - still_missing)
    assert not stale, (
        f"nuvec.nn has these wherever mlx.nn has them now; drop them from tests/nn_allowlist.py "
        f"(PENDING_MERGE after a merge): {stale}"
    )


SHARED = [
    (name, n)
    for name, (_, mod) in PAIRS.items()
    if mod is not None
    for n in NAMES[name]
    if hasattr(mod, n)
]


@pytest.mark.parametrize("name,attr", SHARED, ids=[f"{m[7:] or 'nn'}.{n}" for m, n in SHARED])
def test_shared_name_is_the_same_kind(name, attr):
    mlx_mod, mod = PAIRS[name]
    got, want = kind(getattr(mod, attr)), kind(getattr(mlx_mod, attr))
    assert got == want, f"{name}.{attr}: nuvec's is a {got}, MLX's a {want}"
