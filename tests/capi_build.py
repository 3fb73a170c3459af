"""Building C against nuvec's C API in the tests: the compiler, the printed flags, a build step."""

import os
import shutil
import subprocess
import sys

import pytest

import nuvec as nv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "c")
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")

needs_cc = pytest.mark.skipif(
    CC is None or not os.path.exists(nv.get_library()), reason="no C compiler or no libnuvec"
)


def printed_flags(*which):
    """`python -m nuvec <which>`, split into arguments."""
    out = subprocess.run(
        [sys.executable, "-m", "nuvec", *which], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def compile_c(args):
    """Runs the C compiler; fails the test with its messages."""
    done = subprocess.run([CC, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
