"""nuvec.optimizers has every public name of mlx.optimizers (the same kind of thing, in the same
submodule: optimizers or schedulers), but for the helpers MLX's files import, listed here with
why; each file's __all__ is exactly what it defines, and its public functions are annotated."""

import ast
import inspect
import types

import pytest

from _impl import IS_MLX

if IS_MLX:
    pytest.skip("the name harness compares nuvec with MLX", allow_module_level=True)

mlx_optim = pytest.importorskip("mlx.optimizers")
import nuvec.optimizers as optim  # noqa: E402

# Names mlx.optimizers shows only because its files import them.
IMPORTED = {
    **{
        n: "a typing name MLX's files import"
        for n in ("Callable", "List", "Optional", "Tuple", "Union")
    },
    "math": "the math module, imported by MLX's schedulers",
    "mx": "mlx.core, imported by MLX's files (nuvec's is nuvec itself)",
    "Module": "mlx.nn.Module, imported for an annotation (nuvec's is nuvec.nn.Module)",
    **{
        n: "a tree helper imported from mlx.utils (nuvec's is in nuvec.utils)"
        for n in ("tree_flatten", "tree_map", "tree_merge", "tree_reduce", "tree_unflatten")
    },
}
MLX_NAMES = sorted(n for n in dir(mlx_optim) if not n.startswith("_") and n not in IMPORTED)


def _kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    return "class" if inspect.isclass(obj) else "function" if callable(obj) else "constant"


def test_every_mlx_name_is_in_nuvec():
    missing = [n for n in MLX_NAMES if not hasattr(optim, n)]
    assert not missing, f"names of mlx.optimizers that nuvec.optimizers lacks: {missing}"
    assert all(hasattr(mlx_optim, n) for n in IMPORTED)


@pytest.mark.parametrize("name", MLX_NAMES)
def test_same_kind_in_the_same_submodule(name):
    ours, theirs = getattr(optim, name), getattr(mlx_optim, name)
    assert _kind(ours) == _kind(theirs)
    if _kind(ours) != "module":
        assert ours.__module__.rsplit(".", 1)[-1] == theirs.__module__.rsplit(".", 1)[-1]


def test_same_classes_and_methods():
    for name in MLX_NAMES:
        theirs = getattr(mlx_optim, name)
        if inspect.isclass(theirs):
            ours = getattr(optim, name)
            assert [b.__name__ for b in ours.__mro__] == [b.__name__ for b in theirs.__mro__]
            # _maybe_schedule: MLX-style custom optimizers call it in their __init__.
            public = {n for n in dir(theirs) if not n.startswith("_")} | {"_maybe_schedule"}
            assert public <= set(dir(ours)), (name, public - set(dir(ours)))


@pytest.mark.parametrize("module", [optim.optimizers, optim.schedulers])
def test_all_is_what_the_file_defines_and_is_annotated(module):
    with open(module.__file__, encoding="utf-8") as f:
        body = ast.parse(f.read()).body
    defined = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for n in body if isinstance(n, ast.Assign) for t in n.targets}
    assert set(module.__all__) == {n for n in defined if not n.startswith("_")}
    for name in module.__all__:
        obj = getattr(module, name)
        functions = [obj] if inspect.isfunction(obj) else []
        if inspect.isclass(obj):
            functions = [
                f for k, f in vars(obj).items() if inspect.isfunction(f) and not k.startswith("_")
            ]
        for fn in functions:
            params = set(inspect.signature(fn).parameters) - {"self"}
            assert params <= set(fn.__annotations__) and "return" in fn.__annotations__, fn
