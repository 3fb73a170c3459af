"""nuvec is typed: `__all__` lists exactly the public names, the installed stub of the compiled
module types every parameter (tools/type_stubs.py's table, which cannot rot unnoticed), and mypy
and pyright accept an ordinary MLX-style program (tests/typing_samples/program.py) and report
each deliberate mistake of tests/typing_samples/mistakes.py. Nothing is downloaded: pyright runs
from its bundled JavaScript on the installed node, or is skipped."""

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import types

import pytest

from op_registry import ROOT, registry

pytestmark = pytest.mark.nuvec_only  # nuvec's own stubs and annotations

SAMPLES = os.path.join(ROOT, "tests", "typing_samples")
PROGRAM = os.path.join(SAMPLES, "program.py")
MISTAKES = os.path.join(SAMPLES, "mistakes.py")
SUBMODULES = ("random", "utils", "io", "metal", "cuda")
RAW = "import enum\n\nclass Dtype(enum.Enum):\n    uint8 = 1\n\nclass array:\n    pass\n\n"  # a stubgen stub


@pytest.fixture(scope="module")
def nuvec():
    import nuvec

    return nuvec


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("type_stubs", f"{ROOT}/tools/type_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stub(nuvec):
    path = os.path.join(os.path.dirname(nuvec._core.__file__), "_core.pyi")
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def _stub_all(stub):
    for node in stub.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "__all__":
            return ast.literal_eval(node.value)
    raise AssertionError("_core.pyi has no __all__")


def _functions(stub):
    """(qualified name, FunctionDef) of every function of the stub, methods included."""
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item


def _error_lines(path):
    with open(path, encoding="utf-8") as f:
        return {i for i, line in enumerate(f, 1) if line.rstrip().endswith("# error")}


def test_all_is_exactly_the_public_names(nuvec):
    assert len(nuvec.__all__) == len(set(nuvec.__all__)), "a name is twice in nuvec.__all__"
    public = {n for n in dir(nuvec) if not n.startswith("_")}
    assert not public - set(nuvec.__all__), (
        f"add to __all__ in python/nuvec/__init__.py: {sorted(public - set(nuvec.__all__))}"
    )
    assert set(nuvec.__all__) <= public, sorted(set(nuvec.__all__) - public)
    assert set(nuvec.__all__) == registry.public_names()


def test_star_import_gives_the_public_names(nuvec):
    scope = {}
    exec("from nuvec import *", scope)
    assert set(scope) - {"__builtins__"} == set(nuvec.__all__)


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodule_all_is_exactly_its_public_names(nuvec, name):
    module = getattr(nuvec, name)
    with open(module.__file__, encoding="utf-8") as f:
        body = ast.parse(f.read()).body
    defined = [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    defined += [t.id for n in body if isinstance(n, ast.Assign) for t in n.targets]
    own = {n for n in defined if not n.startswith("_")}
    assert len(module.__all__) == len(set(module.__all__))
    assert set(module.__all__) == own, sorted(set(module.__all__) ^ own)


def test_stub_all_is_the_compiled_module_names(nuvec, stub):
    assert set(_stub_all(stub)) == set(nuvec._core.__all__)


def test_no_stub_parameter_is_left_untyped(stub, tool):
    """A parameter typed `object` (stubgen's word for `nb::handle`) or not typed at all means the
    table in tools/type_stubs.py lacks its name."""
    bad = []
    for qualname, fn in _functions(stub):
        args = fn.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        for p in params:
            if p.arg == "self" or (fn.name, p.arg) in tool.KEEP_OBJECT:
                continue
            text = ast.unparse(p.annotation) if p.annotation else ""
            if not text or re.search(r"\bobject\b", text):
                bad.append(f"{qualname}({p.arg}: {text or 'untyped'})")
        result = ast.unparse(fn.returns) if fn.returns else ""
        if result in ("", "object", "tuple", "list", "Iterator"):
            bad.append(f"{qualname} -> {result or 'untyped'}")
    assert not bad, f"untyped in _core.pyi (add to tools/type_stubs.py): {bad}"


def test_the_tool_names_a_parameter_it_cannot_type(tool):
    raw = f"{RAW}def newop(a: object, zzz: object, *, stream: object | None = None) -> array: ...\n"
    text, untyped = tool.rewrite(raw)
    assert untyped == ["newop(zzz)"]
    assert "def newop(a: _ArrayLike, zzz: object, *, stream: _Stream | None = None)" in text


def test_the_tool_keeps_none_and_defaults(tool):
    raw = f"{RAW}def op(a: object, axis: object | None = None) -> array: ...\n"
    assert "def op(a: _ArrayLike, axis: _Axis | None = None) -> array: ..." in tool.rewrite(raw)[0]


def test_stub_declares_every_array_attribute(nuvec, stub):
    """Methods python/nuvec/_array_methods.py attaches at import are in the stub's array class."""
    (cls,) = (n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "array")
    declared = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    attached = {n for n, v in vars(nuvec.array).items() if isinstance(v, types.FunctionType)}
    public = {n for n in dir(nuvec.array) if not n.startswith("_")}
    missing = sorted((attached | public) - declared)
    assert not missing, (
        f"array attributes the stub lacks (ARRAY_METHODS / OPS_AS_METHODS): {missing}"
    )


def test_python_functions_are_annotated(nuvec):
    """Every public function written in Python has annotated parameters and result."""
    bad = []
    for module in (nuvec, *(getattr(nuvec, n) for n in SUBMODULES)):
        for name in module.__all__:
            fn = getattr(module, name)
            fn = getattr(fn, "__wrapped__", fn)
            if isinstance(fn, types.FunctionType) and fn.__module__.startswith("nuvec"):
                code = fn.__code__
                n = code.co_argcount + code.co_kwonlyargcount
                n += bool(code.co_flags & 4) + bool(code.co_flags & 8)  # *args, **kwargs
                names = set(code.co_varnames[:n]) - {"self"}
                if names - set(fn.__annotations__) or "return" not in fn.__annotations__:
                    bad.append(f"{module.__name__}.{name}")
    assert not bad, f"public functions without annotations: {bad}"


def test_mypy_accepts_the_program_and_reports_each_mistake(nuvec, tmp_path):
    pytest.importorskip("mypy")
    # The package by a link, wherever it is installed (mypy refuses site-packages in MYPYPATH).
    (tmp_path / "path").mkdir()
    os.symlink(os.path.dirname(nuvec.__file__), tmp_path / "path" / "nuvec")
    env = dict(os.environ, MYPYPATH=str(tmp_path / "path"))
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent"]
    cmd += ["--cache-dir", str(tmp_path / "cache"), "--no-error-summary", PROGRAM, MISTAKES]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    errors = re.findall(r"^(.+?):(\d+): error: (.*)$", run.stdout, re.M)
    assert errors, run.stdout + run.stderr
    wrong = [e for e in errors if os.path.basename(e[0]) != "mistakes.py"]
    assert not wrong, "mypy rejects correct code:\n" + "\n".join(map(str, wrong))
    found = {int(line) for _, line, _ in errors}
    assert found == _error_lines(MISTAKES), run.stdout


def _pyright():
    spec = importlib.util.find_spec("pyright")
    node = shutil.which("node")
    if spec is None or node is None:
        return None
    script = os.path.join(os.path.dirname(spec.origin), "dist", "index.js")
    return [node, script] if os.path.isfile(script) else None


def test_pyright_accepts_the_program_and_reports_each_mistake(nuvec, tmp_path):
    """nuvec checked as an installed library (a site-packages that holds it), as a user's
    editor sees it: a name `__all__` lacks would be a private import there."""
    cmd = _pyright()
    if cmd is None:
        pytest.skip("pyright's bundled JavaScript or node is not installed")
    site = tmp_path / "env" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (site / "site-packages").mkdir(parents=True)
    os.symlink(os.path.dirname(nuvec.__file__), site / "site-packages" / "nuvec")
    for path in (PROGRAM, MISTAKES):
        shutil.copy(path, tmp_path)
    config = {"venvPath": str(tmp_path), "venv": "env", "include": ["program.py", "mistakes.py"]}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    run = subprocess.run(
        [*cmd, "--outputjson"], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    report = json.loads(run.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    wrong = [e for e in errors if os.path.basename(e["file"]) != "mistakes.py"]
    assert not wrong, "pyright rejects correct code:\n" + "\n".join(e["message"] for e in wrong)
    found = {e["range"]["start"]["line"] + 1 for e in errors}
    assert found == _error_lines(MISTAKES), errors


def _run(path):
    run = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return float(run.stdout)


def test_the_program_is_mlx_code_and_runs_alike(nuvec, tmp_path):
    """The sample is an MLX program with its import changed: it runs on both, to the same loss."""
    ours = _run(PROGRAM)
    if importlib.util.find_spec("mlx") is None:
        pytest.skip("MLX is not installed")
    with open(PROGRAM, encoding="utf-8") as f:
        text = f.read()
    for old, new in (("nuvec.utils", "mlx.utils"), ("nuvec", "mlx.core")):
        text = re.sub(rf"^(import|from) {re.escape(old)}\b", rf"\1 {new}", text, flags=re.M)
    assert not re.search(r"^(import|from) nuvec", text, re.M)
    (tmp_path / "on_mlx.py").write_text(text)
    assert ours == pytest.approx(_run(str(tmp_path / "on_mlx.py")), rel=1e-5)
