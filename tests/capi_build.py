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


# The start of a test's C program: an error handler that prints each message as "error: ..." and
# print(name, a) / print_vec(name, v), which print "name: <nuvec_dtype code> <values>": each
# element as a float64 (exact for every dtype but 64-bit integers past 2**53), complex64 as
# (real, imaginary) pairs.
C_PRELUDE = r"""
#include <stdio.h>
#include "nuvec/nuvec.h"

static void on_error(const char* msg, void* data) { (void)data; printf("error: %s\n", msg); }

static void print(const char* name, nuvec_array a) {
  nuvec_array f = nuvec_array_new();
  nuvec_stream s = nuvec_default_cpu_stream_new();
  int cplx = nuvec_array_dtype(a) == NUVEC_COMPLEX64;
  if (cplx) nuvec_array_set(&f, a); else nuvec_astype(&f, a, NUVEC_FLOAT64, s);
  nuvec_array_eval(f);
  printf("%s: %d", name, (int)nuvec_array_dtype(a));
  size_t n = nuvec_array_size(f) * (cplx ? 2 : 1);
  const float* c = cplx ? nuvec_array_data_complex64(f) : NULL;
  const double* v = cplx ? NULL : nuvec_array_data_float64(f);
  for (size_t i = 0; i < n; ++i) printf(" %.17g", cplx ? (double)c[i] : v[i]);
  printf("\n");
  nuvec_array_free(f);
  nuvec_stream_free(s);
}

static inline void print_vec(const char* name, nuvec_vector_array v) {
  char label[64];
  nuvec_array a = nuvec_array_new();
  for (size_t i = 0; i < nuvec_vector_array_size(v); ++i) {
    snprintf(label, sizeof label, "%s%d", name, (int)i);
    nuvec_vector_array_get(&a, v, i);
    print(label, a);
  }
  nuvec_array_free(a);
}
"""


def c_array(ctype, name, values):
    """A C array definition holding `values` (row-major)."""
    return f"static const {ctype} {name}[] = {{{', '.join(repr(v) for v in values.ravel().tolist())}}};"


def build_and_run(directory, name, source):
    """Compiles `source` (C99, -Wall -Werror) against nuvec, runs it and parses what it printed:
    {name: [dtype code, values...]} and "errors", the handler's lines."""
    src = directory / f"{name}.c"
    src.write_text(source)
    exe = str(directory / name)
    flags = printed_flags("--cflags", "--ldflags")
    compile_c(["-std=c99", "-Wall", "-Werror", str(src), *flags, "-o", exe])
    done = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    parsed = {}
    for line in lines:
        label, _, rest = line.partition(": ")
        if label != "error":
            parsed[label] = rest.split()
    parsed["errors"] = [line for line in lines if line.startswith("error: ")]
    return parsed
