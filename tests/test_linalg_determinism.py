"""The determinism promise for nuvec.linalg's LU / triangular / Cholesky family: bit-identical
results whatever NUVEC_NUM_THREADS (1, 2, 3; each in a fresh process, since OpenBLAS's thread
count is fixed at start-up), within each instruction-set build (NUVEC_CPU_ISA portable and avx2:
the blocked kernels are built per ISA), and run to run; big single matrices (the ones whose work
is cut into blocks on the pool) and batches of small ones."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.nuvec_only

_SCRIPT = r"""
import hashlib
import numpy as np
import nuvec as mx
rng = np.random.default_rng(5)
la = mx.linalg
out = hashlib.sha256()
cases = [((300, 300), "float32"), ((2, 129, 129), "float64"), ((2000, 4, 4), "float32"), ((600, 600), "float32")]
for shape, dt in cases:
    a = mx.array((rng.standard_normal(shape) + 4 * np.eye(shape[-1])).astype(dt))
    b = mx.array(rng.standard_normal(shape[:-1] + (3 if shape[-1] < 512 else 300,)).astype(dt))
    s = a @ a.swapaxes(-1, -2)
    for r in (la.inv(a), la.solve(a, b), la.solve_triangular(a, b), la.cholesky(s), la.tri_inv(a, upper=True),
              *la.lu_factor(a), la.det(a), *la.slogdet(a), la.cholesky_inv(la.cholesky(s))):
        out.update(np.asarray(r).tobytes())
print(out.hexdigest())
"""


def _run(threads, isa):
    env = dict(os.environ, NUVEC_NUM_THREADS=str(threads), NUVEC_CPU_ISA=isa)
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return r.stdout.strip()


@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_bits_do_not_depend_on_threads(isa):
    # Each run is a fresh process: equal digests are also the same bits run to run.
    digests = {t: _run(t, isa) for t in (1, 2, 3)}
    assert len(set(digests.values())) == 1, digests


_IDLE = r"""
import time
import nuvec as mx
mx.set_default_device(mx.cpu)  # the CPU's LAPACK threads (a GPU would be the default)
a = mx.random.normal((400, 400)) + 40 * mx.eye(400)
mx.eval(a)
time.sleep(0.5)  # the threads started at import (NumPy's OpenBLAS among them) settle first
for _ in range(3):
    mx.eval(mx.linalg.inv(a), mx.linalg.solve(a, a), mx.linalg.cholesky(a @ a.T))
# nuvec's own workers poll 2 ms for the next job before they sleep (core/threads.cpp): with one
# per core on a 16-core host that alone measured 0.10 here, so they settle first. OpenBLAS's
# threads would spin far longer.
time.sleep(0.01)
t, c = time.perf_counter(), time.process_time()
time.sleep(0.2)
print((time.process_time() - c) / (time.perf_counter() - t))
"""


def test_no_thread_spins_after_a_call():
    # The process's CPU time while it sleeps right after LAPACK calls: OpenBLAS's workers would
    # spin there (burning a core that other nuvec ops need) if they had been handed work.
    r = subprocess.run([sys.executable, "-c", _IDLE], capture_output=True, text=True, check=True)
    assert float(r.stdout) < 0.02, r.stdout  # NumPy's threaded OpenBLAS shows about 0.15 here


_CHANGED = r"""
import ctypes, hashlib, os
import numpy as np
import nuvec as mx
import scipy_openblas32 as pkg
lib = ctypes.CDLL(os.path.join(pkg.get_lib_dir(), pkg.get_library(fullname=True)))
a = mx.array(np.random.default_rng(3).standard_normal((300, 300)).astype(np.float32))
first = np.asarray(mx.linalg.inv(a)).tobytes()
lib.scipy_openblas_set_num_threads(2)  # as threadpoolctl would
second = np.asarray(mx.linalg.inv(a + 0)).tobytes()
print(first == second, lib.scipy_openblas_get_num_threads())
"""


def test_policy_survives_a_changed_openblas_thread_count():
    r = subprocess.run([sys.executable, "-c", _CHANGED], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["True", "1"], r.stdout
