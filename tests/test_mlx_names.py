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


# Attributes of MLX's array class that nuvec's array does not have, with why.
ARRAY_MISSING = {
    "__div__": "Python 2's division hook, unused by Python 3",
    "__rdiv__": "Python 2's division hook, unused by Python 3",
    "__setstate__": "nuvec pickles through __reduce__, which rebuilds the array without it",
}


def test_every_mlx_array_attribute_is_in_nuvec_or_allowed():
    missing = [n for n in dir(mlx.array) if not hasattr(nv.array, n) and n not in ARRAY_MISSING]
    assert not missing, f"attributes of mlx.core.array that nuvec's array lacks: {missing}"
    assert all(not hasattr(nv.array, n) and hasattr(mlx.array, n) for n in ARRAY_MISSING)


@pytest.mark.parametrize("name", ["real", "imag", "mT"])
def test_array_properties_as_mlx(name):
    for values in ([[1 + 2j, 3 - 1j]], [[1, 2], [3, 4]], [[[1.5, 2.0]], [[3.0, -4.0]]]):
        got = getattr(nv.array(values), name)
        want = getattr(mlx.array(values), name)
        assert (
            got.shape == want.shape
            and str(got.dtype).rsplit(".")[-1] == str(want.dtype).rsplit(".")[-1]
        )
        assert got.tolist() == want.tolist()
    if name == "mT":
        for lib in (nv, mlx):
            with pytest.raises(ValueError):
                _ = lib.array([1.0]).mT


def test_every_mlx_fast_name_is_in_nuvec_fast_or_allowed():
    from mlx_allowlist import FAST_MISSING

    names = _public(mlx.fast)
    missing = [n for n in names if not hasattr(nv.fast, n) and n not in FAST_MISSING]
    assert not missing, f"names of mlx.core.fast that nuvec.fast lacks: {missing}"
    present = [n for n in FAST_MISSING if hasattr(nv.fast, n)]
    assert not present, f"nuvec.fast has these now; drop them from FAST_MISSING: {present}"
    assert all(n in names for n in FAST_MISSING)
    for n in names:
        if hasattr(nv.fast, n):
            assert kind(getattr(nv.fast, n)) == kind(getattr(mlx.fast, n)), n
