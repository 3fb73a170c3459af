"""One-row 4-bit products with integer activations on the weights' interleaved copy (sixteen rows
side by side; backend/cpu/quantized_rows16.h), on AVX-512 processors with VNNI: the same bits as
the one-row kernels (which a 3-d weight, a batch of one, still takes, and a weight's first product),
the copy made at the second product, counted in the memory counters, kept equal to its weight, and
dropped with it."""

import gc

import numpy as np
import pytest

import nuvec as mx
from helpers import run_script

pytestmark = pytest.mark.cpu_backend


def _has_copies():
    # The copies are made where the AVX-512 build runs and the processor has VPDPBUSD.
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx512_vnni" in flags and " avx512bw" in flags


HAS_COPIES = _has_copies()


def _weights(n, k, group, dtype, seed):
    rng = np.random.default_rng(seed)
    wq, s, b = mx.quantize(
        mx.array(rng.standard_normal((n, k)).astype(np.float32)), group_size=group, bits=4
    )
    s, b = s.astype(dtype), b.astype(dtype)
    mx.eval(wq, s, b)
    return wq, s, b


def _product(x, wq, s, b, group, ab):
    return mx.quantized_matmul(
        x, wq, s, b, transpose=True, group_size=group, bits=4, activation_bits=ab
    )


SHAPES = [(16, 128), (17, 640), (960, 576), (40, 1536)]


@pytest.mark.parametrize(
    "n,k,group", [(n, k, g) for n, k in SHAPES for g in (32, 64, 128) if k % g == 0]
)
@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16, mx.float32])
@pytest.mark.parametrize("ab", [None, 8])
def test_same_bits_as_the_one_row_kernels(n, k, group, dtype, ab):
    wq, s, b = _weights(n, k, group, dtype, seed=n + k + group)
    x = mx.array(np.random.default_rng(1).standard_normal((3, k)).astype(np.float32))
    first = _product(x, wq, s, b, group, ab)  # the one-row kernels
    y = _product(x, wq, s, b, group, ab)  # the copy, where it is made
    np.testing.assert_array_equal(np.array(y).view(np.uint32), np.array(first).view(np.uint32))
    ref = _product(x[None], wq[None], s[None], b[None], group, ab)[0]  # a batch: the one-row kernel
    np.testing.assert_array_equal(np.array(y).view(np.uint32), np.array(ref).view(np.uint32))
    for r in range(3):  # and each row as a product of its own
        one = _product(x[r : r + 1], wq, s, b, group, ab)
        np.testing.assert_array_equal(
            np.array(one)[0].view(np.uint32), np.array(y)[r].view(np.uint32)
        )


@pytest.mark.skipif(not HAS_COPIES, reason="the copies are made on AVX-512 processors with VNNI")
def test_the_copy_is_counted_and_dropped_with_its_weight():
    """A copy of more than a quarter arena (2 MiB) takes a block of its own."""
    gc.collect()
    mx.clear_cache()
    wq, s, b = _weights(8192, 576, 32, mx.float16, seed=3)
    x = mx.ones((1, 576))
    before = mx.get_active_memory()
    mx.eval(_product(x, wq, s, b, 32, None))
    codes = 8192 * 576 // 2
    assert mx.get_active_memory() - before < codes // 8  # a first product makes no copy
    mx.eval(_product(x, wq, s, b, 32, None))
    grown = mx.get_active_memory() - before
    assert codes <= grown <= 2 * codes  # codes, scales and biases once more, and the results
    del wq, s, b
    gc.collect()
    mx.clear_cache()
    assert mx.get_active_memory() <= before - codes  # the weight and its copy are gone


ARENA_SCRIPT = r"""
import gc, json
import numpy as np
import nuvec as mx

def weights(i):
    rng = np.random.default_rng(10 + i)
    wq, s, b = mx.quantize(mx.array(rng.standard_normal((960, 576)).astype(np.float32)), 32, 4)
    s, b = s.astype(mx.float16), b.astype(mx.float16)
    mx.eval(wq, s, b)
    return wq, s, b

def product(x, w):
    return mx.quantized_matmul(x, *w, transpose=True, group_size=32, bits=4)

ws = [weights(i) for i in range(40)]
x = mx.ones((1, 576))
before = mx.get_active_memory()
for _ in range(2):  # the second product of each makes its copy
    mx.eval([product(x, w) for w in ws])
grown = mx.get_active_memory() - before
same = all(
    np.array_equal(np.array(product(x, ws[i])), np.array(product(x, weights(i))))
    for i in (0, 17, 39)
)  # a weight's product is the same weight's made anew (which has no copy yet)
del ws
gc.collect()
mx.clear_cache()
print(json.dumps({"grown": grown, "left": mx.get_active_memory() - before, "same": same}))
"""


@pytest.mark.skipif(not HAS_COPIES, reason="the copies are made on AVX-512 processors with VNNI")
def test_small_copies_share_arenas_that_go_with_their_weights():
    """Forty copies of 0.35 MB (13.8 MB) in a fresh process: carved from two arenas of 8 MiB
    (quantized_rows16.cpp's kArenaBytes), counted, each in its own place; with their weights gone,
    clear_cache() lets both arenas go."""
    out = run_script(ARENA_SCRIPT)
    total = 40 * (960 * 576 // 2 + 960 * 18 * 4)  # codes, then float16 scales and biases
    assert out["grown"] >= 2 * (8 << 20)
    assert out["grown"] <= 2 * (8 << 20) + (1 << 20)
    assert out["same"]
    assert out["left"] <= -total  # the weights and both arenas


def test_a_weight_rewritten_after_its_copy_is_not_read_from_the_copy():
    wq, s, b = _weights(64, 256, 32, mx.float16, seed=4)
    x = mx.array(np.random.default_rng(5).standard_normal((1, 256)).astype(np.float32))
    mx.eval(_product(x, wq, s, b, 32, None), _product(x + 1, wq, s, b, 32, None))  # the copy made
    # The old weight's last holder is the new product's graph: were the copy not holding its
    # buffer, xor would write it in place, and the copy (found by address) would be stale.
    wq = wq ^ mx.array(0x11111111, mx.uint32)
    y = _product(x, wq, s, b, 32, None)
    ref = _product(x[None], wq[None], s[None], b[None], 32, None)[0]
    np.testing.assert_array_equal(np.array(y).view(np.uint32), np.array(ref).view(np.uint32))
