"""nuvec's C API (include/nuvec/nuvec.h, docs/c-api.md) from C: the header compiles as C99 with
-Wall -Werror, a C program built with `python -m nuvec --cflags --ldflags` runs ops and transforms
that match NumPy, errors reach the handler naming the op and the program goes on, and a CMake
project finds the package (find_package(nuvec CONFIG) and nuvec::nuvec)."""

import os
import shutil
import subprocess

import numpy as np
import pytest

from capi_build import EXAMPLES, compile_c, needs_cc, printed_flags

pytestmark = [needs_cc, pytest.mark.nuvec_only]

A = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.5]], np.float32).astype(np.float64)


def parse(stdout):
    out = {}
    for line in stdout.splitlines():
        name, _, rest = line.partition(": ")
        out[name] = rest
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    exe = str(tmp_path_factory.mktemp("capi") / "ops_and_grad")
    src = os.path.join(EXAMPLES, "ops_and_grad.c")
    compile_c(
        ["-std=c99", "-Wall", "-Werror", src, *printed_flags("--cflags", "--ldflags"), "-o", exe]
    )
    return exe


def run(exe):
    # No LD_LIBRARY_PATH: the run path from --ldflags (or CMake's) finds libnuvec.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    done = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return parse(done.stdout)


@pytest.mark.parametrize("lang", ["c99", "c++17"])
def test_headers_compile_cleanly(tmp_path, lang):
    src = tmp_path / "inc.c"
    src.write_text(
        '#include "nuvec/nuvec.h"\nint main(void) { return nuvec_array_ndim(nuvec_array_new()); }\n'
    )
    mode = ["-x", "c++", "-std=c++17"] if lang.startswith("c++") else ["-std=c99", "-pedantic"]
    compile_c(
        [
            *mode,
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            *printed_flags("--cflags"),
            str(src),
        ]
    )


def values(text):
    return np.array([float(v) for v in text.split()])


def test_ops_match_numpy(program):
    out = run(program)
    np.testing.assert_allclose(values(out["exp"]), np.exp(A).ravel(), rtol=1e-6)
    np.testing.assert_allclose(values(out["sum1"]), A.sum(1), rtol=1e-6)
    np.testing.assert_allclose(values(out["matmul"]), (A @ A.T).ravel(), rtol=1e-6)
    np.testing.assert_allclose(values(out["maxpow"]), np.maximum(A**2, A).ravel(), rtol=1e-6)
    e = np.exp(A - A.max(1, keepdims=True))
    np.testing.assert_allclose(
        values(out["softmax"]), (e / e.sum(1, keepdims=True)).ravel(), rtol=1e-6
    )


def test_transforms_match_numpy(program):
    out = run(program)
    grad = np.cos(A) * A + np.sin(A)
    np.testing.assert_allclose(values(out["vjp"]), grad.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values(out["grad"]), grad.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values(out["jvp"]), grad.sum(), rtol=1e-5)
    np.testing.assert_allclose(values(out["value"]), (np.sin(A) * A).sum(), rtol=1e-5)
    np.testing.assert_allclose(values(out["compiled"]), (np.sin(A) * A).sum(), rtol=1e-5)


def test_errors_reach_the_handler_and_the_program_goes_on(program):
    out = run(program)
    errors = [line for line in subprocess.run([program], capture_output=True, text=True).stdout.splitlines()
              if line.startswith("error: ")]  # fmt: skip
    assert errors[0].startswith("error: 1 nuvec_add: add:"), errors[0]
    assert "broadcast" in errors[0]
    assert errors[1].startswith("error: 1 nuvec_reshape: reshape:"), errors[1]
    assert out["survived"] == "1"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_cmake_project_finds_the_package(tmp_path):
    build = tmp_path / "build"
    cmake_dir = printed_flags("--cmake-dir")[0]
    for cmd in (
        [
            "cmake",
            "-S",
            EXAMPLES,
            "-B",
            str(build),
            f"-Dnuvec_DIR={cmake_dir}",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        ["cmake", "--build", str(build)],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    out = run(str(build / "ops_and_grad"))
    np.testing.assert_allclose(values(out["exp"]), np.exp(A).ravel(), rtol=1e-6)
