"""The attention determinism contract, bit for bit, in subprocesses for NUVEC_NUM_THREADS 1, 2, 3
under the portable and AVX2 kernel builds (docs/attention.md, "Determinism"):

* row independence: one-query attention over equal key lengths gives each batch entry the bits of
  its B=1 call, and each query head those of its one-head call;
* the serial rule: 2 to 8 causal query rows (Lq <= Lk) give row i the bits of the one-query call
  over its causal key prefix k[..., :Lk - Lq + i + 1, :] (speculative verification reproduces
  plain decoding);
* every output is the same whatever the thread count."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's promise")]

ROWS = [2, 3, 7, 64, 256]  # batch entries of one-query calls (up to ROW_INDEPENDENT_ROWS)


def _ops():
    import nuvec as mx
    from nuvec.fast import scaled_dot_product_attention as sdpa

    return mx, sdpa


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _bits(x):
    return np.array(x).tobytes()


def row_independence(rows, lk, d, with_mask):
    """Whether each batch entry of a B-query call is bit-equal to its B=1 call (and each head to its
    one-head call, grouped heads reading their key head)."""
    mx, sdpa = _ops()
    hq, hkv = 4, 2
    q, k, v = (
        _rand((rows, hq, 1, d), rows),
        _rand((rows, hkv, lk, d), rows + 1),
        _rand((rows, hkv, lk, d), rows + 2),
    )
    m = _rand((rows, 1, 1, lk), 9) if with_mask else None
    sinks = _rand((hq,), 3) if with_mask else None

    def call(qq, kk, vv, mm, ss):
        return np.array(
            sdpa(
                mx.array(qq),
                mx.array(kk),
                mx.array(vv),
                scale=d**-0.5,
                mask=None if mm is None else mx.array(mm),
                sinks=None if ss is None else mx.array(ss),
            )
        )

    full = call(q, k, v, m, sinks)
    for b in range(rows):
        one = call(
            q[b : b + 1], k[b : b + 1], v[b : b + 1], None if m is None else m[b : b + 1], sinks
        )
        if one.tobytes() != full[b : b + 1].tobytes():
            return False
    for h in range(hq):
        g = h // (hq // hkv)
        one = call(
            q[:, h : h + 1],
            k[:, g : g + 1],
            v[:, g : g + 1],
            m,
            None if sinks is None else sinks[h : h + 1],
        )
        if one.tobytes() != full[:, h : h + 1].tobytes():
            return False
    return True


def serial_rule(lq, lk, hq, hkv, d, with_sinks):
    """Whether causal row i of an Lq-row call is bit-equal to the one-query call over its prefix."""
    mx, sdpa = _ops()
    q, k, v = _rand((2, hq, lq, d), lq), _rand((2, hkv, lk, d), lk), _rand((2, hkv, lk, d), lk + 1)
    sinks = mx.array(_rand((hq,), 4)) if with_sinks else None
    full = np.array(
        sdpa(mx.array(q), mx.array(k), mx.array(v), scale=0.125, mask="causal", sinks=sinks)
    )
    for i in range(lq):
        n = lk - lq + i + 1
        one = sdpa(
            mx.array(q[:, :, i : i + 1]),
            mx.array(k[:, :, :n]),
            mx.array(v[:, :, :n]),
            scale=0.125,
            sinks=sinks,
        )
        if _bits(one) != full[:, :, i : i + 1].tobytes():
            return False
    return True


SERIAL = [
    (lq, lk, hq, hkv, d, s)
    for lq in (2, 3, 5, 8)
    for (lk, hq, hkv, d, s) in [
        (8, 2, 2, 16, False),
        (259, 4, 2, 64, True),
        (1000, 2, 1, 128, False),
    ]
]


def outputs():
    """sha256 digests of decode and prefill outputs."""
    import hashlib

    mx, sdpa = _ops()
    out = {}
    for name, (b, hq, hkv, lq, lk, d, mask) in {
        "decode": (1, 8, 2, 1, 1500, 64, None),
        "decode_causal": (2, 4, 4, 6, 700, 32, "causal"),
        "prefill": (1, 4, 2, 200, 300, 64, "causal"),
        "prefill_additive": (2, 2, 2, 70, 90, 24, "additive"),
    }.items():
        q, k, v = _rand((b, hq, lq, d), 1), _rand((b, hkv, lk, d), 2), _rand((b, hkv, lk, d), 3)
        m = mx.array(_rand((lq, lk), 4)) if mask == "additive" else mask
        r = sdpa(mx.array(q), mx.array(k), mx.array(v), scale=0.1, mask=m)
        out[name] = hashlib.sha256(_bits(r)).hexdigest()
    return out


_SCRIPT = r"""
import json, sys
sys.path.insert(0, {tests!r})
import nuvec
import test_attention_determinism as t
res = dict(isa=nuvec._core._cpu_isa(), outputs=t.outputs(), rows={{}}, serial={{}})
for rows in t.ROWS:
    for with_mask in (False, True):
        res["rows"][f"{{rows}}-{{with_mask}}"] = t.row_independence(rows, 300, 64, with_mask)
for case in t.SERIAL:
    res["serial"][str(case)] = t.serial_rule(*case)
print(json.dumps(res))
"""


def _run(threads, isa):
    env = dict(os.environ, NUVEC_NUM_THREADS=str(threads), NUVEC_CPU_ISA=isa)
    script = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_contract_holds_for_every_thread_count(isa):
    runs = [_run(n, isa) for n in (1, 2, 3)]
    if isa != "portable" and runs[0]["isa"] != isa:
        pytest.skip(f"this processor runs {runs[0]['isa']}, not {isa}")
    for r in runs:
        assert all(r["rows"].values()), r["rows"]
        assert all(r["serial"].values()), r["serial"]
        assert r["outputs"] == runs[0]["outputs"]
