"""DESIGN.md's determinism promise, checked bit for bit: the same operations on the same inputs
give identical outputs whatever the thread count (NUVEC_NUM_THREADS at start-up, and
set_num_threads while running).

Reductions: shapes chosen to reach every partition of the engine (rows grouped into tasks,
long rows cut into chunks, column tiles, rows cut into chunks under few columns, interleaved
axes) at sizes where the work is spread over the pool."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = pytest.mark.nuvec_only  # MLX makes no such promise (and has no set_num_threads)

# (shape, dtype, op, axis) with inputs drawn from a fixed seed.
REDUCTION_CASES = [
    ((512, 1024), "float32", "sum", 1),
    ((512, 1024), "float32", "sum", 0),
    ((3, 300_001), "float32", "sum", 1),
    ((1 << 20,), "float32", "sum", None),
    ((40_000, 5), "float32", "sum", 0),
    ((20, 300, 40), "float32", "sum", 1),
    ((30, 40, 50), "float32", "sum", (0, 2)),
    ((1 << 18,), "float16", "sum", None),
    ((2000, 300), "bfloat16", "mean", 0),
    ((1 << 18,), "float64", "sum", None),
    ((1 << 18,), "complex64", "sum", None),
    ((600, 700), "float32", "prod", 0),
    ((600, 700), "float32", "var", 0),
    ((600, 700), "float32", "std", 1),
    ((600, 700), "float32", "logsumexp", 1),
    ((600, 700), "float32", "logsumexp", 0),
    ((600, 700), "float32", "softmax", 1),
    ((600, 700), "float16", "softmax", 1),
    ((600, 700), "float32", "softmax", 0),
    ((600, 700), "float32", "argmax", 0),
    ((600, 700), "float32", "max", None),
]

_SCRIPT = r"""
import hashlib, sys
import numpy as np
import nuvec as mx
sys.path.insert(0, {tests!r})
from test_determinism import REDUCTION_CASES, run_case
for case in REDUCTION_CASES:
    print(hashlib.sha256(run_case(case)).hexdigest())
"""


def run_case(case):
    """The result bytes of one case."""
    shape, dt, op, axis = case
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    x = rng.standard_normal(shape)
    if op == "prod":
        x = 1 + x * 1e-3
    if dt == "complex64":
        x = x + 1j * rng.standard_normal(shape)
    X = mx.array(x.astype(np.complex64 if dt == "complex64" else np.float64), dtype=getattr(mx, dt))
    f = getattr(mx, op)
    out = f(X, axis=axis)
    if out.dtype == mx.bfloat16:
        out = out.view(mx.uint16)
    return np.array(out).tobytes()


@pytest.mark.skipif(IS_MLX, reason="nuvec only")
def test_reductions_same_bits_for_any_startup_thread_count():
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    outs = {}
    for n in ("1", "2", "3"):
        env = dict(os.environ, NUVEC_NUM_THREADS=n)
        r = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr
        outs[n] = r.stdout.split()
    assert len(outs["1"]) == len(REDUCTION_CASES)
    for n in ("2", "3"):
        for case, a, b in zip(REDUCTION_CASES, outs["1"], outs[n]):
            assert a == b, f"{case}: NUVEC_NUM_THREADS=1 and {n} differ"


@pytest.mark.skipif(IS_MLX, reason="nuvec only")
def test_reductions_same_bits_after_set_num_threads():
    before = mx.get_num_threads()
    try:
        results = {}
        for n in (1, 2, 3, 4):
            mx.set_num_threads(n)
            results[n] = [hashlib.sha256(run_case(c)).hexdigest() for c in REDUCTION_CASES]
        for n in (2, 3, 4):
            for case, a, b in zip(REDUCTION_CASES, results[1], results[n]):
                assert a == b, f"{case}: 1 and {n} threads differ"
    finally:
        mx.set_num_threads(before)
