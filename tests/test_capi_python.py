"""include/nuvec/python.h: a Python extension, compiled here against the printed flags, passes
nuvec arrays both ways through C handles with no copy (the same memory, no new allocation) and
no leak over 10,000 calls (nuvec's memory counters return to their start)."""

import gc
import importlib.util
import os
import sysconfig

import numpy as np
import pytest

import nuvec as nv
from capi_build import EXAMPLES, compile_c, needs_cc, printed_flags

pytestmark = [needs_cc, pytest.mark.nuvec_only]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    out = tmp_path_factory.mktemp("ext") / ("nuvec_ext" + sysconfig.get_config_var("EXT_SUFFIX"))
    src = os.path.join(EXAMPLES, "python_ext", "nuvec_ext.c")
    py_include = sysconfig.get_paths()["include"]
    compile_c(["-std=c99", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{py_include}", src,
               *printed_flags("--cflags", "--ldflags"), "-o", str(out)])  # fmt: skip
    spec = importlib.util.spec_from_file_location("nuvec_ext", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def address(x):
    return np.asarray(x).__array_interface__["data"][0]


def test_arrays_pass_both_ways_without_copy(ext):
    x = nv.arange(1 << 20, dtype=nv.float32)
    nv.eval(x)
    before = nv.get_active_memory()
    y = ext.roundtrip(x)
    assert isinstance(y, nv.array) and y is not x
    assert nv.get_active_memory() == before  # no new buffer
    assert address(y) == address(x)
    np.testing.assert_array_equal(
        np.asarray(ext.scale(x, 0.5)), np.arange(1 << 20, dtype=np.float32) * 0.5
    )


def test_bad_argument_raises(ext):
    with pytest.raises(TypeError, match="nuvec.array"):
        ext.roundtrip([1.0, 2.0])


def test_no_leak_over_10000_calls(ext):
    x = nv.ones((64,), dtype=nv.float32)
    nv.eval(x)
    gc.collect()
    start = nv.get_active_memory()
    for _ in range(10_000):
        nv.eval(ext.scale(ext.roundtrip(x), 2.0))
    gc.collect()
    assert nv.get_active_memory() == start


X = np.array([[-2.0, -0.5, 0.0], [0.25, 1.0, 3.0]], np.float32)


def test_custom_op_evaluates_and_differentiates(ext):
    x = nv.array(X)
    np.testing.assert_allclose(np.asarray(ext.smooth_abs(x)), np.sqrt(X * X + 1), rtol=1e-6)
    slope = X / np.sqrt(X * X + 1)
    g = nv.grad(lambda v: nv.sum(ext.smooth_abs(v)))(x)
    np.testing.assert_allclose(np.asarray(g), slope, rtol=1e-6)
    _, (t,) = nv.jvp(lambda v: ext.smooth_abs(v), [x], [nv.ones_like(x)])
    np.testing.assert_allclose(np.asarray(t), slope, rtol=1e-6)
    # The vjp callback is written with ops: the second derivative, 1 / (x^2 + 1)^1.5, follows.
    gg = nv.grad(lambda v: nv.sum(nv.grad(lambda w: nv.sum(ext.smooth_abs(w)))(v)))(x)
    np.testing.assert_allclose(np.asarray(gg), (X * X + 1) ** -1.5, rtol=1e-5)


def test_custom_op_vmaps_and_compiles(ext):
    x = nv.array(X)
    for axis in (0, 1):
        y = nv.vmap(ext.smooth_abs, in_axes=axis, out_axes=axis)(x)
        np.testing.assert_allclose(np.asarray(y), np.sqrt(X * X + 1), rtol=1e-6)
    per_row = nv.vmap(nv.grad(lambda v: nv.sum(ext.smooth_abs(v))))(x)
    np.testing.assert_allclose(np.asarray(per_row), X / np.sqrt(X * X + 1), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(nv.compile(ext.smooth_abs)(x)), np.sqrt(X * X + 1), rtol=1e-6
    )


def test_custom_op_shape_error_names_the_op(ext):
    with pytest.raises(ValueError, match="float32"):
        ext.smooth_abs(nv.array([1, 2], dtype=nv.int32))
