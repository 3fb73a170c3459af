"""The op registry (python/nuvec/_registry.py) is well formed: every row's fields are valid, the
families and docs groups known, references resolve, aliases point at rows, the element-wise rows
have test entries (tests/op_table.py) and the C++ lists can be generated from it. That the public
names of nuvec are exactly the registry's is checked in test_docs_and_stubs.py."""

import importlib.util
import os
import subprocess
import sys

import pytest

import op_table
from op_registry import PATH, ROOT, registry, resolve

ROWS = [pytest.param(op, id=op.name) for op in registry.OPS]


def test_names_are_unique():
    names = [op.name for op in registry.OPS if op.family not in registry.MODULE_OPS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"rows named twice: {dupes}"
    assert not set(names) & set(registry.NON_OPS), "a name is both a row and a non-op"
    assert not set(names) & set(registry.ALIASES), "a name is both a row and an alias"


@pytest.mark.parametrize("op", ROWS)
def test_row_fields_are_valid(op):
    assert op.family in registry.FAMILIES, f"{op.name}: unknown family {op.family!r}"
    assert op.group in registry.GROUPS, f"{op.name}: unknown docs group {op.group!r}"
    assert op.dtype in registry.DTYPE_RULES, f"{op.name}: unknown dtype rule {op.dtype!r}"
    assert op.accepts in registry.DTYPE_SETS, f"{op.name}: unknown dtype set {op.accepts!r}"
    assert isinstance(op.arity, int) and op.arity >= -1
    for field in ("differentiable", "batchable"):
        value = getattr(op, field)
        assert value is True or (isinstance(value, str) and value), (
            f"{op.name}: {field} is True or a reason, not {value!r}"
        )
    if op.family == "elementwise":
        assert op.group in registry.ELEMENTWISE_GROUPS
        assert op.arity == {"unary": 1, "binary": 2, "ternary": 3}[op.group]
    if op.primitive:
        assert op.primitive in ("Unary", "Binary") and op.family == "elementwise"
        assert op.arity == (1 if op.primitive == "Unary" else 2)
        assert op.derivative is not None, f"{op.name}: a kernel op needs its derivative"
    else:
        assert not (op.params or op.derivative or op.kernel), (
            f"{op.name}: kernel fields on a row that is not a kernel op"
        )


@pytest.mark.parametrize("op", ROWS)
def test_reference_resolves(op):
    if op.reference.startswith("mlx.") and importlib.util.find_spec("mlx") is None:
        pytest.skip("MLX is not installed")
    if op.reference.startswith("safetensors.") and importlib.util.find_spec("safetensors") is None:
        pytest.skip("safetensors is not installed")
    assert callable(resolve(op.reference)), f"{op.name}: {op.reference} is not callable"


def test_groups_and_non_ops_are_known():
    for name, (group, why) in registry.NON_OPS.items():
        assert group in registry.GROUPS, f"{name}: unknown docs group {group!r}"
        assert why, f"{name}: no description"
    for key, (title, intro) in registry.GROUPS.items():
        assert title and (intro or key in registry.ELEMENTWISE_GROUPS), f"group {key} lacks text"
        used = any(op.group == key for op in registry.OPS) or any(
            group == key for group, _ in registry.NON_OPS.values()
        )
        assert used, f"group {key} holds no name"


def test_aliases_resolve_to_public_rows():
    for alias, target in registry.ALIASES.items():
        assert target in registry.OPS_BY_NAME and registry.OPS_BY_NAME[target].public, (
            f"alias {alias} names {target}, which is no public row"
        )


def test_every_elementwise_row_has_a_test_entry():
    rows = {op.name for op in op_table.ELEMENTWISE_ROWS}
    tested = {op.name for op in op_table.OPS}
    assert rows <= tested, f"element-wise rows without a test entry: {sorted(rows - tested)}"
    stale = sorted((set(op_table.TESTS) | tested) - rows)
    assert not stale, f"op_table names ops the registry lacks: {stale}"
    for op in op_table.OPS:
        accepted = op_table.DTYPE_SETS[registry.OPS_BY_NAME[op.name].accepts]
        assert set(op.dtypes) <= set(accepted), (
            f"{op.test_id}: tests dtypes the registry does not accept"
        )


def test_the_cxx_lists_generate(tmp_path):
    """The build step itself (standard library only) runs, and lists every kernel op."""
    script = os.path.join(ROOT, "tools", "gen_registry.py")
    subprocess.run([sys.executable, "-I", script, PATH, str(tmp_path)], check=True)
    header = (tmp_path / "nuvec_generated" / "elementwise_ops.h").read_text()
    for op in registry.OPS:
        if op.primitive:
            assert f"X({op.name}, " in header, f"{op.name} is not in the generated lists"


@pytest.mark.nuvec_only  # the submodules are nuvec's (MLX's have other private names)
@pytest.mark.parametrize("family", sorted(registry.MODULE_OPS))
def test_submodule_rows_are_the_submodules_functions(family):
    """Each row of nuvec.random, nuvec.linalg and nuvec.fft is a function of that module, and
    every public function of the module has a row."""
    import nuvec

    module = getattr(nuvec, family)
    rows = set(registry.MODULE_OPS[family])
    missing = sorted(n for n in rows if not callable(getattr(module, n, None)))
    assert not missing, f"rows of nuvec.{family} the module lacks: {missing}"
    public = {n for n in getattr(module, "__all__", ()) if callable(getattr(module, n))}
    assert public <= rows, f"functions of nuvec.{family} without a row: {sorted(public - rows)}"
