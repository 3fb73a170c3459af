"""The differential name harness: every public name of mlx.core is a name of nuvec, or is in the
allow-list (tests/mlx_allowlist.py) with why; and where both have a name, it is the same kind of
thing (a function, a class, a module or a constant).

Skipped when MLX is not installed, and when the suite runs against MLX (there is nothing to compare
then). The values behind the names are compared in test_mlx_small_names.py and test_mlx_diff.py.
"""

import inspect
import types

import pytest

from _impl import IS_MLX
from mlx_allowlist import MISSING

if IS_MLX:
    pytest.skip("the name harness compares nuvec with MLX", allow_module_level=True)

mlx = pytest.importorskip("mlx.core")
nv = pytest.importorskip("nuvec")


def _public(module):
    return sorted(n for n in dir(module) if not n.startswith("_"))


def kind(obj):
    """What a name is: "module", "class", "function" or "constant"."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


MLX_NAMES = _public(mlx)
SHARED = [n for n in MLX_NAMES if hasattr(nv, n)]


def test_every_mlx_name_is_in_nuvec_or_allowed():
    missing = [n for n in MLX_NAMES if not hasattr(nv, n) and n not in MISSING]
    assert not missing, (
        f"public names of mlx.core that nuvec lacks and tests/mlx_allowlist.py does not list: "
        f"{missing}"
    )


def test_allowlist_holds_only_missing_mlx_names():
    present = sorted(n for n in MISSING if hasattr(nv, n))
    assert not present, f"nuvec has these now; drop them from tests/mlx_allowlist.py: {present}"
    unknown = sorted(n for n in MISSING if not hasattr(mlx, n))
    assert not unknown, f"tests/mlx_allowlist.py lists names mlx.core lacks: {unknown}"
    assert all(isinstance(why, str) and why for why in MISSING.values())


@pytest.mark.parametrize("name", SHARED)
def test_shared_name_is_the_same_kind(name):
    assert kind(getattr(nv, name)) == kind(getattr(mlx, name)), (
        f"{name}: nuvec's is a {kind(getattr(nv, name))}, MLX's a {kind(getattr(mlx, name))}"
    )
