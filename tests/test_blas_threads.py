"""OpenBLAS's threaded routines on nuvec's helper threads (docs/linalg.md, "Threads"): from order
256 eigh and eigvalsh run OpenBLAS at 2 threads whatever NUVEC_NUM_THREADS says, its jobs handed
to nuvec's callback (the other decompositions and the LU family run it at 1); the bits do not
depend on NUVEC_NUM_THREADS, nor on whether the call runs inside a task of nuvec's pool (a batch)
or beside another thread's LAPACK call at another count; idle helpers sleep."""

import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import nuvec as mx

LA = mx.linalg
pytestmark = pytest.mark.nuvec_only
ORDER = 300  # above the order from which OpenBLAS runs threaded


def _stats():
    return mx._core._blas_thread_stats()


def _sym(n, dtype, batch=(), seed=0):
    a = np.random.default_rng(seed).standard_normal((*batch, n, n))
    return mx.array(a + np.swapaxes(a, -1, -2), dtype=dtype)


def test_large_orders_go_through_the_callback_small_ones_do_not():
    small = _sym(64, mx.float64)
    calls, _ = _stats()
    mx.eval(LA.eigh(small))
    assert _stats()[0] == calls  # one OpenBLAS thread: nothing to hand out
    mx.eval(LA.eigh(_sym(ORDER, mx.float64)))
    calls_after, helpers = _stats()
    assert calls_after > calls
    assert 1 <= helpers <= 8  # a few helpers, reused from call to call


def _cpu_seconds():
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_no_thread_spins_or_is_added_after_a_call():
    x = _sym(ORDER, mx.float32)
    mx.eval(LA.svd(x))
    tasks = len(os.listdir("/proc/self/task"))
    for f in (LA.svd, LA.eigh, LA.qr, LA.eig):
        mx.eval(f(x))
    assert len(os.listdir("/proc/self/task")) == tasks  # helpers are reused, OpenBLAS starts none
    time.sleep(0.1)  # past the helpers' (and nuvec's pool's) polling
    before = _cpu_seconds()
    time.sleep(0.5)
    assert _cpu_seconds() - before < 0.05  # every thread asleep


_SCRIPT = r"""
import hashlib, sys, threading
import numpy as np
import nuvec as mx
LA = mx.linalg
rng = np.random.default_rng(3)
outs = []
for dt in (mx.float32, mx.float64):
    a = rng.standard_normal((3, {n}, {n}))
    x = mx.array(a, dtype=dt)
    s = x + mx.swapaxes(x, -1, -2)
    outs += [*LA.eigh(s), LA.eigvalsh(s[0]), *LA.svd(x[0]), *LA.qr(x[1]), *LA.eig(x[2])]
    outs += [*LA.eigh(s[1])]  # as a batch member, alone
    outs += [LA.inv(x[0] + {n} * mx.eye({n}, dtype=dt)), LA.cholesky(s[0] @ s[0].T + mx.eye({n}, dtype=dt))]
if {concurrent}:
    # Two threads at once, at OpenBLAS counts 2 (eigh) and 1 (inv): neither waits forever.
    big = mx.array(rng.standard_normal((600, 600))) + 600 * mx.eye(600, dtype=mx.float64)
    jobs = [lambda: LA.eigh(s[0])[0], lambda: LA.inv(big)]
    refs = [np.array(f()) for f in jobs]
    same = []
    def run(f, ref):
        for _ in range(3):
            same.append(np.array_equal(np.array(f()), ref))
    ts = [threading.Thread(target=run, args=p) for p in zip(jobs, refs)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert same == [True] * 6, same
mx.eval(outs)
print(hashlib.sha256(b"".join(np.array(o).tobytes() for o in outs)).hexdigest())
"""


def _digest(threads, concurrent=False):
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(n=ORDER, concurrent=concurrent)],
        env=dict(os.environ, NUVEC_NUM_THREADS=str(threads)),
        capture_output=True,
        text=True,
        timeout=120,  # a deadlock fails here
        check=True,
    )
    return out.stdout.strip()


def test_bits_do_not_depend_on_the_thread_count():
    digests = [_digest(t) for t in (1, 2, 3)]
    assert len(digests[0]) == 64 and digests[0] == digests[1] == digests[2]
    assert _digest(2, concurrent=True) == digests[0]


@pytest.mark.parametrize("dtype", [mx.float32, mx.float64])
def test_a_batch_member_is_its_own_call(dtype):
    # The batch's matrices run on nuvec's pool, each calling threaded OpenBLAS from a pool task.
    x = _sym(ORDER, dtype, batch=(3,), seed=5)
    whole = LA.eigh(x)
    for i in range(3):
        for w, p in zip(whole, LA.eigh(x[i])):
            np.testing.assert_array_equal(np.array(w[i]), np.array(p))


def test_threaded_results_are_right():
    a = np.array(_sym(ORDER, mx.float64, seed=9))
    w, v = LA.eigh(mx.array(a, dtype=mx.float64))
    np.testing.assert_allclose(np.array(w), np.linalg.eigvalsh(a), rtol=1e-10, atol=1e-10)
    v = np.array(v)
    np.testing.assert_allclose(a @ v, v * np.array(w), atol=1e-9)


def test_python_threads_at_different_counts_agree_with_one_thread():
    x = _sym(ORDER, mx.float64, seed=2)
    big = mx.array(np.random.default_rng(4).standard_normal((600, 600))) + 600 * mx.eye(
        600, dtype=mx.float64
    )
    ref_w, ref_inv = np.array(LA.eigh(x)[0]), np.array(LA.inv(big))
    got, errors = [], []

    def run(f, ref):
        try:
            for _ in range(3):
                r = f()
                got.append(
                    hashlib.sha256(np.array(r).tobytes()).digest()
                    == hashlib.sha256(ref.tobytes()).digest()
                )
        except Exception as e:  # pragma: no cover (reported below)
            errors.append(e)

    ts = [
        threading.Thread(target=run, args=(lambda: LA.eigh(x)[0], ref_w)),
        threading.Thread(target=run, args=(lambda: LA.inv(big), ref_inv)),
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in ts)
    assert got == [True] * 6
