"""nuvec.fft's bits depend on the lengths alone: the same for NUVEC_NUM_THREADS 1, 2 and 3 and for
the portable and AVX2 kernel builds (subprocesses), run to run, and each row of a batch equals the
transform of that row alone."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import nuvec as mx

pytestmark = pytest.mark.nuvec_only

# Rows and columns, real and complex, Bluestein (in blocks and over four steps), four steps.
SCRIPT = r"""
import hashlib, sys
import numpy as np
import nuvec as mx
rng = np.random.default_rng(11)
def c(*s):
    return (rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64)
cases = [
    mx.fft.fft(mx.array(c(37, 1024))),
    mx.fft.ifft(mx.array(c(300, 24)), axis=0, norm="ortho"),
    mx.fft.fft(mx.array(c(20, 97))),
    mx.fft.rfft(mx.array(c(9, 1 << 15).real)),
    mx.fft.irfft(mx.array(c(3 * (1 << 13) + 1)), n=3 * (1 << 14)),
    mx.fft.fft(mx.array(c(1 << 15, 3)), axis=0),
    mx.fft.fft2(mx.array(c(3, 64, 60))),
    mx.fft.irfftn(mx.array(c(12, 10, 9))),
    mx.fft.ifft(mx.array(c(2, 16411)), norm="forward"),  # Bluestein over four steps
]
h = hashlib.sha256()
for y in cases:
    h.update(np.asarray(y).tobytes())
print(h.hexdigest())
"""


def run(**env):
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_bits_do_not_depend_on_threads_or_isa():
    ref = run(NUVEC_NUM_THREADS="1", NUVEC_CPU_ISA="portable")
    for threads in ("1", "2", "3"):
        assert run(NUVEC_NUM_THREADS=threads) == ref, threads
    assert run(NUVEC_NUM_THREADS="2", NUVEC_CPU_ISA="portable") == ref
    assert run(NUVEC_NUM_THREADS="3") == run(NUVEC_NUM_THREADS="3") == ref  # run to run


@pytest.mark.parametrize("n", [16, 1000, 1009, 1 << 15])
@pytest.mark.parametrize("rows", [2, 3, 7, 64])
def test_each_row_equals_its_own_transform(n, rows):
    rng = np.random.default_rng(n + rows)
    x = (rng.standard_normal((rows, n)) + 1j * rng.standard_normal((rows, n))).astype(np.complex64)
    whole = np.asarray(mx.fft.fft(mx.array(x)))
    for i in (0, rows // 2, rows - 1):
        np.testing.assert_array_equal(whole[i], np.asarray(mx.fft.fft(mx.array(x[i]))))
    cols = np.asarray(mx.fft.rfft(mx.array(x.real.T.copy()), axis=0))
    np.testing.assert_array_equal(
        cols[:, rows - 1], np.asarray(mx.fft.rfft(mx.array(x[rows - 1].real)))
    )
    assert (
        hashlib.sha256(whole.tobytes()).digest()
        == hashlib.sha256(np.asarray(mx.fft.fft(mx.array(x))).tobytes()).digest()
    )
