"""fast.paged_write and fast.paged_attention (nuvec's own; docs/attention.md, "Paged attention"):
each sequence's row is bit for bit scaled_dot_product_attention of its one query over the same
keys laid out contiguously, for many lengths, page sizes, head layouts and pool dtypes, and for
NUVEC_NUM_THREADS 1, 2, 3; writes match NumPy and leave a shared pool alone; vmap, export and
bad inputs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX

# The CPU kernel (on a GPU it runs on host copies, its bits those of the CPU's attention).
pytestmark = [
    pytest.mark.nuvec_only,
    pytest.mark.cpu_backend,
    pytest.mark.skipif(IS_MLX, reason="nuvec's own functions"),
]

if not IS_MLX:
    import nuvec as mx
    from nuvec import fast


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _case(lens, page, hq, hkv, d, dv, dtype="float32", seed=0):
    """Random queries and keys for sequences of `lens` keys, written into shuffled pages of one
    pool; returns (q, pools, tables, lens, each sequence's contiguous keys and values)."""
    rng = np.random.default_rng(seed)
    need = [-(-n // page) for n in lens]
    n_pages = sum(need) + 3
    ids = rng.permutation(n_pages).astype(np.int32)
    width = max(max(need), 1)
    tables = np.zeros((len(lens), width), np.int32)
    kp = mx.zeros((n_pages, page, hkv, d), getattr(mx, dtype))
    vp = mx.zeros((n_pages, page, hkv, dv), getattr(mx, dtype))
    seqs, at = [], 0
    for b, n in enumerate(lens):
        tables[b, : need[b]] = ids[at : at + need[b]]
        at += need[b]
        k = mx.array(_rand((n, hkv, d), seed + 10 * b + 1)).astype(getattr(mx, dtype))
        v = mx.array(_rand((n, hkv, dv), seed + 10 * b + 2)).astype(getattr(mx, dtype))
        slots = np.array([tables[b, j // page] * page + j % page for j in range(n)], np.int32)
        kp, vp = fast.paged_write(kp, vp, k, v, mx.array(slots))
        seqs.append((k, v))
    q = mx.array(_rand((len(lens), hq, 1, d), seed + 7))
    return q, (kp, vp), mx.array(tables), mx.array(np.array(lens, np.int32)), seqs


def _check_rows(lens, page, hq, hkv, d, dv, dtype="float32"):
    q, (kp, vp), tables, cl, seqs = _case(lens, page, hq, hkv, d, dv, dtype)
    scale = d**-0.5
    out = np.array(fast.paged_attention(q, kp, vp, tables, cl, scale=scale))
    assert out.shape == (len(lens), hq, 1, dv)
    for b, (k, v) in enumerate(seqs):
        kc, vc = k.transpose(1, 0, 2)[None], v.transpose(1, 0, 2)[None]
        ref = np.array(fast.scaled_dot_product_attention(q[b : b + 1], kc, vc, scale=scale))
        np.testing.assert_array_equal(out[b : b + 1].view(np.uint32), ref.view(np.uint32))


@pytest.mark.parametrize("page", [16, 64, 256])
def test_rows_are_bitwise_the_contiguous_one_query_attention(page):
    _check_rows([1, 255, 256, 257, 1000, 37], page, hq=4, hkv=2, d=32, dv=32)


@pytest.mark.parametrize(
    "hq,hkv,d,dv", [(3, 3, 64, 64), (9, 3, 36, 20), (6, 1, 80, 80), (2, 1, 8, 200)]
)
def test_head_layouts_and_dims(hq, hkv, d, dv):
    _check_rows([5, 300, 64], 32, hq, hkv, d, dv)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_pools(dtype):
    _check_rows([3, 513], 128, hq=4, hkv=2, d=48, dv=48, dtype=dtype)


def test_a_sequence_without_keys_gives_zeros():
    q, (kp, vp), tables, _, _ = _case([4, 9], 16, 2, 1, 8, 8)
    out = np.array(fast.paged_attention(q, kp, vp, tables, mx.array([0, 9]), scale=0.3))
    np.testing.assert_array_equal(out[0], 0)


_SCRIPT = """
import hashlib, json, numpy as np, sys
sys.path.insert(0, {tests!r})
import test_paged_attention as t
import nuvec as mx
mx.set_default_device(mx.cpu)  # the CPU kernel's bits (a GPU would be the default)
from nuvec import fast
q, (kp, vp), tables, cl, seqs = t._case([1, 257, 1000, 600, 90], 32, 6, 2, 64, 64)
out = np.array(fast.paged_attention(q, kp, vp, tables, cl, scale=0.125))
ok = all(
    np.array_equal(out[b:b+1], np.array(fast.scaled_dot_product_attention(
        q[b:b+1], k.transpose(1, 0, 2)[None], v.transpose(1, 0, 2)[None], scale=0.125)))
    for b, (k, v) in enumerate(seqs))
print(json.dumps({{"isa": mx._core._cpu_isa(), "ok": bool(ok), "bits": hashlib.sha256(out.tobytes()).hexdigest()}}))
"""


@pytest.mark.parametrize("isa", ["portable", "avx2"])
def test_same_bits_for_every_thread_count(isa):
    """Within each kernel build: the promise holds and 1, 2, 3 threads give the same bits."""
    tests = os.path.dirname(os.path.abspath(__file__))
    runs = []
    for threads in (1, 2, 3):
        env = dict(os.environ, NUVEC_NUM_THREADS=str(threads), NUVEC_CPU_ISA=isa)
        r = subprocess.run(
            [sys.executable, "-c", _SCRIPT.format(tests=tests)],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    if isa != "portable" and runs[0]["isa"] != isa:
        pytest.skip(f"this processor runs {runs[0]['isa']}, not {isa}")
    assert all(r["ok"] for r in runs)
    assert len({r["bits"] for r in runs}) == 1
    assert all(r["isa"] == runs[0]["isa"] for r in runs)


def test_write_matches_numpy_and_skips_negative_slots():
    kp0 = _rand((4, 8, 2, 3), 1)
    vp0 = _rand((4, 8, 2, 5), 2)
    k, v = _rand((3, 2, 3), 3), _rand((3, 2, 5), 4)
    slots = np.array([5, -1, 31], np.int32)
    old = mx.array(kp0)
    kp, vp = fast.paged_write(old, mx.array(vp0), mx.array(k), mx.array(v), mx.array(slots))
    ek, ev = kp0.reshape(32, 2, 3).copy(), vp0.reshape(32, 2, 5).copy()
    ek[[5, 31]], ev[[5, 31]] = k[[0, 2]], v[[0, 2]]
    np.testing.assert_array_equal(np.array(kp), ek.reshape(kp0.shape))
    np.testing.assert_array_equal(np.array(vp), ev.reshape(vp0.shape))
    # `old` is still held here, so the write went to a copy.
    np.testing.assert_array_equal(np.array(old), kp0)


def test_vmap_over_queries_and_tables():
    q, (kp, vp), tables, cl, _ = _case([40, 300, 7], 16, 4, 2, 16, 16)
    qs = mx.stack([q, q * 2])
    ts = mx.stack([tables, tables[::-1]])
    ls = mx.stack([cl, cl[::-1]])
    f = mx.vmap(lambda a, t, n: fast.paged_attention(a, kp, vp, t, n, scale=0.25))
    got = np.array(f(qs, ts, ls))
    for i in range(2):
        ref = np.array(fast.paged_attention(qs[i], kp, vp, ts[i], ls[i], scale=0.25))
        np.testing.assert_array_equal(got[i], ref)


def test_not_differentiable():
    q, (kp, vp), tables, cl, _ = _case([5], 16, 2, 1, 8, 8)
    with pytest.raises(ValueError, match="paged_attention"):
        mx.grad(lambda a: fast.paged_attention(a, kp, vp, tables, cl, scale=1.0).sum())(q)


def test_export_round_trip(tmp_path):
    q, (kp, vp), tables, cl, _ = _case([20, 70], 16, 4, 2, 8, 8)
    k, v = mx.array(_rand((2, 2, 8), 5)), mx.array(_rand((2, 2, 8), 6))
    slots = mx.array(np.array([20, 70], np.int32))

    def step(q, kp, vp, k, v, slots, tables, cl):
        kp, vp = fast.paged_write(kp, vp, k, v, slots)
        return fast.paged_attention(q, kp, vp, tables, cl + 1, scale=0.5), kp

    path = str(tmp_path / "paged.nvfn")
    args = (q, kp, vp, k, v, slots, tables, cl)
    mx.export_function(path, step, *args)
    got = mx.import_function(path)(*args)
    want = step(*args)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def _bad_attention(**over):
    q, (kp, vp), tables, cl, _ = _case([5, 20], 16, 4, 2, 8, 8)
    a = dict(queries=q, k_pages=kp, v_pages=vp, block_tables=tables, context_lens=cl)
    a.update(over)
    return fast.paged_attention(**a, scale=1.0)


@pytest.mark.parametrize(
    "over,match",
    [
        (lambda: {"queries": mx.zeros((2, 4, 2, 8))}, "one query"),
        (lambda: {"queries": mx.zeros((2, 3, 1, 8))}, "multiple"),
        (lambda: {"queries": mx.zeros((2, 4, 1, 9))}, "head_dim"),
        (lambda: {"k_pages": mx.zeros((6, 16, 2, 8), mx.float16)}, "one dtype"),
        (
            lambda: {"k_pages": mx.zeros((4, 48, 2, 8)), "v_pages": mx.zeros((4, 48, 2, 8))},
            "divide",
        ),
        (lambda: {"block_tables": mx.array([[9, 0], [1, 2]], mx.int32)}, "block id"),
        (lambda: {"block_tables": mx.zeros((2, 2), mx.float32)}, "integer"),
        (lambda: {"context_lens": mx.array([5, 40], mx.int32)}, "context_lens"),
        (lambda: {"context_lens": mx.array([5], mx.int32)}, r"\(batch,\)"),
    ],
)
def test_bad_attention_inputs_raise_op_error(over, match):
    with pytest.raises(mx.OpError, match=match):
        _bad_attention(**over())


def test_lazy_out_of_range_block_ids_raise_at_evaluation():
    q, (kp, vp), tables, cl, _ = _case([5, 20], 16, 4, 2, 8, 8)
    lazy = tables + 100
    with pytest.raises(Exception, match="block id"):
        mx.eval(fast.paged_attention(q, kp, vp, lazy, cl, scale=1.0))


@pytest.mark.parametrize(
    "keys,slots,match",
    [
        (lambda: mx.zeros((2, 2, 8), mx.float16), [0, 1], "dtype"),
        (lambda: mx.zeros((2, 3, 8)), [0, 1], "do not fit"),
        (lambda: mx.zeros((2, 2, 8)), [0], "slot_mapping"),
        (lambda: mx.zeros((2, 2, 8)), [0, 64], "past the pools"),
    ],
)
def test_bad_writes_raise_op_error(keys, slots, match):
    kp, vp = mx.zeros((4, 16, 2, 8)), mx.zeros((4, 16, 2, 8))
    with pytest.raises(mx.OpError, match=match):
        k = keys()
        fast.paged_write(kp, vp, k, k, mx.array(np.array(slots, np.int32)))
