"""The determinism contract of nuvec.fast's row-wise kernels (docs/fast.md): rms_norm,
add_rms_norm, layer_norm, rope and norm_rope (and cross_entropy) are row-independent (each row
of an M-row call has the bits of the one-row call on that row, per-row offsets included), and
give the same bits for NUVEC_NUM_THREADS 1, 2 and 3 and for the portable and AVX2 builds
(cross_entropy: for the thread counts, within each build). Each configuration runs in a
subprocess."""

import json
import os
import subprocess
import sys

import pytest

from _impl import IS_MLX

pytestmark = [
    pytest.mark.nuvec_only,
    pytest.mark.skipif(IS_MLX, reason="nuvec's kernels and thread pool"),
]

SCRIPT = r"""
import hashlib, json, sys
import numpy as np
import nuvec as mx
F = mx.fast
rng = np.random.default_rng(3)
ROWS = (2, 3, 7, 64, 256, 1000)
D = 333
bad, digest, digest_isa = [], hashlib.sha256(), hashlib.sha256()
ROW_CHECKS = sys.argv[1:] == ["rows"]  # the one-row comparisons (the slow part) in one run per build

def bits(a):
    a = a.view(mx.uint16) if a.dtype in (mx.float16, mx.bfloat16) else a.view(mx.uint32)
    return np.asarray(a)

def check(name, m, full, one, into=digest):
    # full: the M-row results; one(i): row i's one-row results (every row up to M = 64, then
    # every fifth and the last). Every output compared.
    full = [bits(f) for f in full]
    for f in full:
        into.update(f.tobytes())
    if not ROW_CHECKS:
        return
    for i in sorted(set(range(0, m, 1 if m <= 64 else 5)) | {m - 1}):
        for f, o in zip(full, one(i)):
            if not np.array_equal(f[i:i + 1], bits(o)):
                bad.append(f"{name} M={m} row {i}")
                return

for dt in ("float32", "float16", "bfloat16"):
    dtype = getattr(mx, dt)
    w = mx.array(rng.standard_normal(D).astype(np.float32)).astype(dtype)
    b = mx.array(rng.standard_normal(D).astype(np.float32)).astype(dtype)
    for m in ROWS:
        x = mx.array(rng.standard_normal((m, D)).astype(np.float32) * 3).astype(dtype)
        r = mx.array(rng.standard_normal((m, D)).astype(np.float32)).astype(dtype)
        check(f"rms_norm {dt}", m, [F.rms_norm(x, w, 1e-5)], lambda i: [F.rms_norm(x[i:i + 1], w, 1e-5)])
        check(f"layer_norm {dt}", m, [F.layer_norm(x, w, b, 1e-5)],
              lambda i: [F.layer_norm(x[i:i + 1], w, b, 1e-5)])
        check(f"add_rms_norm {dt}", m, list(F.add_rms_norm(x, r, w, 1e-5)),
              lambda i: list(F.add_rms_norm(x[i:i + 1], r[i:i + 1], w, 1e-5)))
        tg = mx.array(rng.integers(0, D, m).astype(np.int32))
        check(f"cross_entropy {dt}", m, [F.cross_entropy(x, tg)],
              lambda i: [F.cross_entropy(x[i:i + 1], tg[i:i + 1])], digest_isa)  # exp: per build

H, T, DH = 2, 3, 40
for dt in ("float32", "float16", "bfloat16"):
    dtype = getattr(mx, dt)
    wk = mx.array(rng.standard_normal(DH).astype(np.float32)).astype(dtype)
    for m in ROWS:
        x = mx.array(rng.standard_normal((m, H, T, DH)).astype(np.float32)).astype(dtype)
        offs = rng.integers(0, 100, m)
        off = mx.array(offs.astype(np.int32))
        for trad in (False, True):
            kw = dict(traditional=trad, base=10000.0, scale=0.5)
            check(f"rope {dt} {trad}", m, [F.rope(x, 32, offset=off, **kw)],
                  lambda i: [F.rope(x[i:i + 1], 32, offset=int(offs[i]), **kw)])
        cache = mx.array(rng.standard_normal((m, H, 104, DH)).astype(np.float32)).astype(dtype)
        check(f"norm_rope {dt}", m,
              list(F.norm_rope(x, wk, 1e-5, cache, off, dims=32, traditional=False, base=10000.0)),
              lambda i: list(F.norm_rope(x[i:i + 1], wk, 1e-5, cache[i:i + 1], int(offs[i]), dims=32,
                                         traditional=False, base=10000.0)))

json.dump({"bad": bad, "digest": digest.hexdigest(), "digest_isa": digest_isa.hexdigest()}, sys.stdout)
"""


def run(threads, isa):
    env = dict(os.environ, NUVEC_NUM_THREADS=str(threads), NUVEC_CPU_ISA=isa)
    rows = ["rows"] if threads == 3 else []  # rows checked once per build; digests in every run
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT, *rows], env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_rows_are_independent_and_bits_fixed_across_threads_and_isas():
    runs = {(n, isa): run(n, isa) for isa in ("portable", "avx2") for n in (1, 2, 3)}
    for key, r in runs.items():
        assert not r["bad"], f"{key}: rows differ from their one-row calls: {r['bad'][:5]}"
    digests = {key: r["digest"] for key, r in runs.items()}
    assert len(set(digests.values())) == 1, digests
    for isa in ("portable", "avx2"):  # cross_entropy's exp is the build's vector exp
        per_isa = {n: runs[(n, isa)]["digest_isa"] for n in (1, 2, 3)}
        assert len(set(per_isa.values())) == 1, (isa, per_isa)
