"""The decompositions' bits depend on shapes only: the same for NUVEC_NUM_THREADS 1, 2 and 3
within each of NUVEC_CPU_ISA portable and avx2 (subprocesses; LAPACK's outputs are the same in
both, pinv's products round as nuvec's matmul does in each build), and each matrix of a batch
as when factorised alone (the batch is split over nuvec's pool, a matrix per task). OpenBLAS's
own thread count is fixed within a process."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import nuvec as mx

LA = mx.linalg
pytestmark = pytest.mark.nuvec_only

# (batch shape, n, dtype): many small matrices (the pool's split), a few large (OpenBLAS's threads).
CASES = [
    ((300,), 3, "float32"),
    ((5,), 24, "float64"),
    ((2,), 80, "float32"),
    ((), 48, "complex64"),
]


def outputs(case):
    batch, n, dt = case
    rng = np.random.default_rng(n)
    a = rng.standard_normal((*batch, n, n))
    if dt == "complex64":
        a = a + 1j * rng.standard_normal(a.shape)
    x = mx.array(a, dtype=getattr(mx, dt))
    sym = (x + mx.conj(mx.swapaxes(x, -1, -2))) if dt == "complex64" else x + mx.swapaxes(x, -1, -2)
    outs = [*LA.svd(x), *LA.eigh(sym), *LA.eig(x), LA.norm(x, 2, axis=(-2, -1))]
    if dt != "complex64":
        outs += [*LA.qr(x), LA.pinv(x)]
    return outs


def digest(case):
    return hashlib.sha256(b"".join(np.array(o).tobytes() for o in outputs(case))).hexdigest()


_SCRIPT = r"""
import sys
sys.path.insert(0, {tests!r})
from test_linalg_spectral_determinism import CASES, digest
for case in CASES:
    print(digest(case))
"""


def test_bits_do_not_depend_on_the_thread_count():
    tests = os.path.dirname(os.path.abspath(__file__))
    runs = []
    for isa, threads in (("avx2", 1), ("avx2", 2), ("avx2", 3), ("portable", 1), ("portable", 3)):
        extra = {"NUVEC_CPU_ISA": isa, "NUVEC_NUM_THREADS": str(threads)}
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT.format(tests=tests)],
            env=dict(os.environ, **extra),
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(out.stdout.split())
    assert len(runs[0]) == len(CASES)
    assert runs[0] == runs[1] == runs[2] and runs[3] == runs[4]  # within each instruction set
    assert runs[0] == [digest(c) for c in CASES]  # and this process (run to run)


@pytest.mark.parametrize("case", CASES[:2])
def test_each_batch_matrix_is_its_own_call(case):
    batch, n, dt = case
    a = mx.array(np.random.default_rng(1).standard_normal((*batch, n, n)), dtype=getattr(mx, dt))
    for f in (LA.svd, LA.eigh, LA.qr, LA.eig):
        whole = f(a)
        for i in (0, batch[0] // 2, batch[0] - 1):
            for w, p in zip(whole, f(a[i])):
                np.testing.assert_array_equal(np.array(w[i]), np.array(p))
