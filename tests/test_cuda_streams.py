"""nuvec streams on the GPU map to CUDA streams of their own (docs/cuda.md, "What runs"): distinct
streams get distinct CUDA streams; work that crosses streams (a result of one read on another, a
freed block reused by another) is ordered by waits, and the results equal the CPU's; a program on
one stream needs no wait. Skipped without a CUDA device."""

import numpy as np
import pytest

from _impl import mx
from cuda_helpers import needs_gpu
from helpers import seeded_rng

pytestmark = [pytest.mark.nuvec_only, needs_gpu]


def handle(s):
    return mx._core._cuda_stream_handle(s.index)


def test_each_stream_has_its_cuda_stream():
    s1, s2 = mx.new_stream(mx.gpu), mx.new_stream(mx.gpu)
    assert handle(s1) != handle(s2)
    assert handle(s1) == handle(s1) != 0


def test_one_stream_needs_no_wait():
    mx.clear_cache()  # blocks other tests' streams used would ask for waits
    x = mx.random.normal((512, 512), key=mx.random.key(3), stream=mx.gpu)
    mx.eval(x)
    before = mx._core._cuda_queue_waits()
    for _ in range(3):
        mx.eval(mx.sum(mx.exp(x) @ x, axis=0, stream=mx.gpu))
    assert mx._core._cuda_queue_waits() == before


def test_readers_on_several_streams_wait_for_the_writer_once_and_not_for_each_other():
    s0, s1, s2 = (mx.new_stream(mx.gpu) for _ in range(3))
    x = mx.exp(mx.random.normal((256, 1024), key=mx.random.key(5), stream=s0), stream=s0)
    mx.eval(x)
    mx.clear_cache()  # fresh outputs: no freed block's users to wait for
    first = [mx.sum(x, axis=0, stream=s1), mx.sum(x, axis=1, stream=s2)]
    before = mx._core._cuda_queue_waits()
    mx.eval(first)
    assert mx._core._cuda_queue_waits() - before == 2  # each reader once for s0
    mx.clear_cache()
    before = mx._core._cuda_queue_waits()
    second = [mx.sum(x, axis=0, stream=s1), mx.sum(x, axis=1, stream=s2)]
    mx.eval(second)
    assert mx._core._cuda_queue_waits() == before  # both already ordered after the write
    ref = np.array(x.astype(mx.float64, stream=mx.cpu))
    for a, b in zip(first + second, [ref.sum(0), ref.sum(1)] * 2):
        np.testing.assert_allclose(np.array(a), b, rtol=1e-5)


def test_a_result_read_on_another_stream_waits_for_its_producer():
    """A long product on one stream, read at once by a reduction on another: without the wait the
    reduction would read the product's output before it is written."""
    s1, s2 = mx.new_stream(mx.gpu), mx.new_stream(mx.gpu)
    rng = seeded_rng("cuda_streams_read")
    a = rng.standard_normal((2048, 2048)).astype(np.float32)
    x = mx.array(a)
    before = mx._core._cuda_queue_waits()
    for i in range(4):
        y = mx.matmul(x + float(i), x, stream=s1)
        z = mx.sum(y, axis=1, stream=s2)
        ref = (a.astype(np.float64) + i) @ a.astype(np.float64)
        np.testing.assert_allclose(np.array(z), ref.sum(axis=1), rtol=2e-3, atol=2e-1)
    assert mx._core._cuda_queue_waits() > before


def test_a_block_freed_on_one_stream_is_reused_safely_on_another():
    """t is an intermediate on s1 read by a long product; it dies when the product is queued, and the
    next output of the same size (on s2) takes its block: s2's write must wait for the product."""
    s1, s2 = mx.new_stream(mx.gpu), mx.new_stream(mx.gpu)
    rng = seeded_rng("cuda_streams_reuse")
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    x, w = mx.array(a), mx.array(b)
    mx.eval(mx.tanh(x, stream=s1), mx.multiply(w, 2.0, stream=s2))  # both on the device already
    ref = (np.tanh(a.astype(np.float64)) @ a).sum(axis=0)
    for _ in range(5):
        t = mx.tanh(x, stream=s1)
        y = mx.sum(mx.matmul(t, x, stream=s1), axis=0, stream=s1)
        del t
        z = mx.multiply(w, 2.0, stream=s2)
        mx.eval(y, z)
        np.testing.assert_allclose(np.array(y), ref, rtol=1e-3, atol=5e-2)
        np.testing.assert_array_equal(np.array(z), b * 2)


def test_async_eval_on_two_streams_then_synchronize():
    s1, s2 = mx.new_stream(mx.gpu), mx.new_stream(mx.gpu)
    x = mx.random.normal((1024, 1024), key=mx.random.key(4), stream=mx.cpu)
    cpu = [np.array(mx.sum(mx.exp(x) @ x, stream=mx.cpu)), np.array(mx.sum(x @ x.T, stream=mx.cpu))]
    outs = [mx.sum(mx.exp(x) @ x, stream=s1), mx.sum(x @ x.T, stream=s2)]
    mx.async_eval(outs[0])
    mx.async_eval(outs[1])
    mx.synchronize(s1)
    mx.synchronize(s2)
    for o, c in zip(outs, cpu):
        np.testing.assert_allclose(np.array(o), c, rtol=1e-3)
