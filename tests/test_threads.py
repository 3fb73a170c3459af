"""The CPU thread pool (csrc/core/threads.cpp, docs/design.md "Threads"): work is cut into
pieces by its size alone and claimed dynamically, small work runs on the caller, callers on
several threads get the pool in turn, and resizing never hangs. Results are checked bit for bit
against one thread."""

import hashlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from _impl import mx

pytestmark = pytest.mark.nuvec_only  # MLX has no thread pool setting (no set_num_threads)


def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.array(a).tobytes())
    return h.hexdigest()


def workload(seed=0):
    """Ops that reach every kind of pooled split: element-wise, reductions, scans, sort, matmul
    on both sides of the size below which a product stays on the caller (2**18 multiply-adds)."""
    rng = np.random.default_rng(seed)
    x = mx.array(rng.standard_normal(1 << 20).astype(np.float32))
    m = mx.array(rng.standard_normal((700, 900)).astype(np.float32))
    out = [
        mx.exp(x) * 2 + 1,
        mx.sum(m, axis=0),
        mx.logsumexp(m, axis=1),
        mx.cumsum(m, axis=1),
        mx.sort(x),
    ]
    for mm, k, n in [
        (64, 64, 63),
        (64, 64, 64),
        (1, 512, 511),
        (1, 512, 1024),
        (130, 70, 40),
        (257, 300, 200),
    ]:
        a = mx.array(rng.standard_normal((mm, k)).astype(np.float32))
        b = mx.array(rng.standard_normal((k, n)).astype(np.float32))
        out.append(a @ b)
    return out


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_same_bits_as_one_thread(threads):
    before = mx.get_num_threads()
    try:
        mx.set_num_threads(1)
        one = digest(workload())
        mx.set_num_threads(threads)  # 7 on a 2-core machine: more threads than cores
        assert digest(workload()) == one
    finally:
        mx.set_num_threads(before)


def test_callers_on_several_threads_share_the_pool():
    """Python threads evaluating at once hand the pool over cleanly: every result has the bits
    of a lone caller."""
    ref = digest(workload(1))
    got = []

    def run():
        for _ in range(3):
            got.append(digest(workload(1)))

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [ref] * 12


RESIZE_SCRIPT = r"""
import numpy as np
import nuvec as mx
x = mx.array(np.arange(1 << 20, dtype=np.float32))
sums = set()
for n in [1, 2, 3, 1, 4, 2, 2, 5, 1, 3] * 5:
    mx.set_num_threads(n)       # at once after the last resize: workers may not have started
    mx.set_num_threads(n)
    sums.add(mx.sum(x * 0.5).item())
print(len(sums), mx.get_num_threads())
"""


def test_resizing_in_a_loop_never_hangs():
    # In a subprocess, so that a hang fails the test instead of stopping the suite.
    r = subprocess.run(
        [sys.executable, "-c", RESIZE_SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "3"]


def test_every_piece_runs_once_in_back_to_back_jobs():
    # Tiny jobs whose piece counts alternate, at more threads than cores: a worker finishing a
    # job's last piece races the caller setting up the next. The pool once let such a worker claim
    # a piece past its job's end (run twice, and counted into the next job, whose caller then
    # waited for good); 3M jobs showed 61 such pieces. In a subprocess, so a hang fails the test.
    script = "import nuvec; print(nuvec._core._pool_piece_runs(1500000))"
    env = dict(os.environ, NUVEC_NUM_THREADS="3")
    r = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0"]
