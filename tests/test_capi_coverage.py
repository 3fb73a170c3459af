"""The C API's op table: include/nuvec/ops.h is tools/gen_capi.py's output for the registry,
every public op has its C function (or a row of NOT_IN_C saying why); the headers of nuvec.random,
.linalg, .fft and .fast are its output for the tables of tools/gen_capi_modules.py and every
public name of those modules has a C function or a reasoned row; and every function the headers
declare is exported by libnuvec."""

import ctypes
import importlib
import importlib.util
import os
import re

import pytest

import nuvec as nv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pytestmark = pytest.mark.nuvec_only

GEN = _load("gen_capi", os.path.join(ROOT, "tools", "gen_capi.py"))
MODULES = sorted(GEN.MODULES)
HEADERS = ["nuvec.h", "ops.h", "io.h", *(f"{m}.h" for m in MODULES)]
REG = GEN.load(os.path.join(ROOT, "python", "nuvec", "_registry.py"))


def header(name):
    with open(os.path.join(ROOT, "include", "nuvec", name), encoding="utf-8") as f:
        return f.read()


def test_ops_header_is_generated_from_the_registry():
    assert header("ops.h") == GEN.header(REG), "run `python tools/gen_capi.py --header`"


def test_every_public_op_has_a_c_function():
    declared = set(re.findall(r"int nuvec_(\w+)\(nuvec_(?:vector_)?array\* res", header("ops.h")))
    # the file functions, written by hand (their results are files and map handles)
    in_io = set(re.findall(r"NUVEC_API int nuvec_(\w+)\(", header("io.h")))
    assert GEN.IN_IO_H <= in_io, f"IN_IO_H rows not declared in io.h: {sorted(GEN.IN_IO_H - in_io)}"
    declared |= GEN.IN_IO_H
    public = {op.name for op in REG.OPS if op.public}
    missing = sorted(public - declared - set(GEN.NOT_IN_C))
    assert not missing, f"public ops without a C function or a NOT_IN_C row: {missing}"
    stale = sorted(set(GEN.NOT_IN_C) & declared | set(GEN.NOT_IN_C) - public)
    assert not stale, f"NOT_IN_C rows of ops that have a C function or are not public ops: {stale}"
    assert all(reason for reason in GEN.NOT_IN_C.values())


@pytest.mark.parametrize("module", MODULES)
def test_module_header_is_generated_from_its_table(module):
    assert header(f"{module}.h") == GEN.module_header(module), (
        "run `python tools/gen_capi.py --header`"
    )
    assert f'#include "nuvec/{module}.h"' in header("nuvec.h")


@pytest.mark.parametrize("module", MODULES)
def test_every_public_module_function_has_a_c_function(module):
    table, not_in_c = GEN.MODULES[module]
    declared = set(re.findall(rf"int nuvec_{module}_(\w+)\(", header(f"{module}.h")))
    assert declared == set(table)
    covered = {GEN.covers(module, suffix) for suffix in declared}
    public = set(importlib.import_module(f"nuvec.{module}").__all__)
    missing = sorted(public - covered - set(not_in_c))
    assert not missing, f"nuvec.{module} names without a C function or a NOT_IN_C row: {missing}"
    stale = sorted(set(not_in_c) & covered | set(not_in_c) - public | covered - public)
    assert not stale, (
        f"rows of names that have a C function or are not public in nuvec.{module}: {stale}"
    )
    assert all(reason for reason in not_in_c.values())


@pytest.mark.skipif(not os.path.exists(nv.get_library()), reason="no libnuvec")
def test_every_declared_function_is_exported():
    lib = ctypes.CDLL(nv.get_library())
    names = set()
    for h in HEADERS:
        names |= set(re.findall(r"NUVEC_API [^;(]*?\b(nuvec_\w+)\(", header(h)))
    assert len(names) > 200
    absent = sorted(n for n in names if not hasattr(lib, n))
    assert not absent, f"declared but not in libnuvec: {absent}"
