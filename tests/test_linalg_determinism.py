"""The determinism promise for nuvec.linalg's LU / triangular / Cholesky family: bit-identical
results whatever NUVEC_NUM_THREADS (1, 2, 3; each in a fresh process, since OpenBLAS's thread
count is fixed at start-up) and run to run; big single matrices and batches of small ones."""

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
for shape, dt in [((300, 300), "float32"), ((2, 129, 129), "float64"), ((2000, 4, 4), "float32")]:
    a = mx.array((rng.standard_normal(shape) + 4 * np.eye(shape[-1])).astype(dt))
    b = mx.array(rng.standard_normal(shape[:-1] + (3,)).astype(dt))
    s = a @ a.swapaxes(-1, -2)
    for r in (la.inv(a), la.solve(a, b), la.solve_triangular(a, b), la.cholesky(s), la.tri_inv(a, upper=True),
              *la.lu_factor(a), la.det(a), *la.slogdet(a), la.cholesky_inv(la.cholesky(s))):
        out.update(np.asarray(r).tobytes())
print(out.hexdigest())
"""


def _run(threads):
    env = dict(os.environ, NUVEC_NUM_THREADS=str(threads))
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return r.stdout.strip()


def test_bits_do_not_depend_on_threads():
    digests = {t: _run(t) for t in (1, 2, 3)}
    assert len(set(digests.values())) == 1, digests
    assert _run(2) == digests[2]
