"""Evaluation: laziness, eval/async_eval, very deep graphs, the memory API, threads, devices and
streams."""

import gc
import threading

import numpy as np
import pytest

from _impl import mx
from helpers import assert_array_equal_np

MB4 = 1000 * 1000  # float32 elements in 4 MB


def _settle():
    gc.collect()
    mx.synchronize()


@pytest.fixture
def limits():
    """Restore the cache and memory limits after the test."""
    old_cache = mx.set_cache_limit(1 << 34)
    old_mem = mx.set_memory_limit(1 << 40)
    mx.set_cache_limit(old_cache)
    mx.set_memory_limit(old_mem)
    yield
    mx.set_cache_limit(old_cache)
    mx.set_memory_limit(old_mem)


# ----------------------------------------------------------------------------- lazy evaluation
def test_building_a_graph_allocates_nothing():
    _settle()
    base = mx.get_active_memory()
    x = mx.ones((1000, 1000))
    y = x * 2 + 1
    # Scalar constants may hold a few bytes; the 4 MB results do not exist yet.
    assert mx.get_active_memory() <= base + 1024
    assert y.shape == (1000, 1000) and y.dtype == mx.float32
    mx.eval(y)
    assert mx.get_active_memory() >= base + 4 * MB4
    assert y[0, 0].item() == 3.0
    del x, y


def test_eval_returns_none_and_takes_trees():
    a, b, c, d = (mx.arange(3) + i for i in range(4))
    assert mx.eval(a) is None
    assert mx.eval({"x": b, "y": [c, (d,)]}) is None
    assert mx.eval() is None
    assert mx.eval(a, [b, c], {"k": d}) is None
    for i, v in enumerate((a, b, c, d)):
        assert v.tolist() == [i, i + 1, i + 2]


def test_eval_of_evaluated_empty_and_0d_arrays():
    x = mx.array([1, 2])
    mx.eval(x)
    mx.eval(x)
    mx.eval(mx.zeros((0, 3)) + 1)
    z = mx.array(2.0) * 3
    mx.eval(z)
    assert z.item() == 6.0


def test_async_eval_then_use():
    x = mx.arange(1000, dtype=mx.float32)
    y = (x * 2 - 1) / 4
    z = mx.sqrt(x)
    assert mx.async_eval(y, z) is None
    ref = np.arange(1000, dtype=np.float32)
    assert_array_equal_np(y, (ref * 2 - 1) / 4, 1e-6, 1e-6)
    assert_array_equal_np(z, np.sqrt(ref), 1e-6)
    w = y + 1
    mx.async_eval(w)
    mx.eval(w)
    assert_array_equal_np(w, (ref * 2 - 1) / 4 + 1, 1e-6, 1e-6)


def test_shared_subgraph_is_consistent():
    x = mx.arange(10)
    shared = x * 3
    a = shared + 1
    b = shared - 1
    mx.eval(a)
    mx.eval(b)
    assert a.tolist() == [3 * i + 1 for i in range(10)]
    assert b.tolist() == [3 * i - 1 for i in range(10)]
    assert shared.tolist() == [3 * i for i in range(10)]


def test_million_node_chain_evaluates_and_is_freed():
    _settle()
    base = mx.get_active_memory()
    x = mx.array(0.0)
    for _ in range(1_000_000):
        x = x + 1
    mx.eval(x)
    assert x.item() == 1_000_000.0
    del x
    _settle()
    assert mx.get_active_memory() == base


def test_deep_unevaluated_graph_is_freed():
    _settle()
    base = mx.get_active_memory()
    x = mx.ones((4,))
    for _ in range(300_000):
        x = x * 1.0
    del x
    _settle()
    assert mx.get_active_memory() == base


def test_deep_chain_on_a_vector():
    x = mx.zeros((8,), mx.int32)
    for i in range(20_000):
        x = x + (i % 3)
    assert x.tolist() == [sum(i % 3 for i in range(20_000))] * 8


# ----------------------------------------------------------------------------- memory API
def test_active_memory_returns_to_start():
    _settle()
    base = mx.get_active_memory()
    arrays = [mx.ones((256, 1024)) * i for i in range(4)]
    mx.eval(arrays)
    assert mx.get_active_memory() >= base + 4 * 256 * 1024 * 4
    del arrays
    _settle()
    assert mx.get_active_memory() == base


def test_peak_memory(limits):
    _settle()
    mx.reset_peak_memory()
    assert mx.get_peak_memory() <= mx.get_active_memory() + 1024
    base = mx.get_active_memory()
    x = mx.ones((1000, 1000))
    mx.eval(x)
    peak = mx.get_peak_memory()
    assert peak >= base + 4 * MB4
    del x
    _settle()
    assert mx.get_peak_memory() >= peak  # the peak stays after the array is gone
    mx.reset_peak_memory()
    assert mx.get_peak_memory() < peak


def test_cache_memory_and_clear_cache(limits):
    mx.set_cache_limit(1 << 34)
    _settle()
    mx.clear_cache()
    assert mx.get_cache_memory() == 0
    x = mx.ones((1000, 1000))
    mx.eval(x)
    del x
    _settle()
    assert mx.get_cache_memory() >= 4 * MB4
    mx.clear_cache()
    assert mx.get_cache_memory() == 0


def test_small_blocks_are_cached_reused_and_cleared(limits):
    # Blocks under 64 KiB wait in stacks per size (core/allocator.cpp), apart from larger ones:
    # the same counts, limits and clearing hold for them.
    mx.set_cache_limit(1 << 34)
    _settle()
    mx.clear_cache()
    sizes = [1, 15, 16, 1000, 4095, 16383]  # float32 elements: 64 bytes to just under 64 KiB
    xs = [mx.ones((n,)) + k for k in range(4) for n in sizes]
    mx.eval(xs)
    held = mx.get_active_memory()
    total = 4 * sum(-(-4 * n // 64) * 64 for n in sizes)
    del xs
    _settle()
    assert mx.get_cache_memory() >= total
    assert mx.get_active_memory() <= held - total
    cached = mx.get_cache_memory()
    ys = [mx.ones((n,)) + 1 for n in sizes]  # taken from the cache
    mx.eval(ys)
    assert mx.get_cache_memory() < cached
    assert [float(y.sum()) for y in ys] == [2.0 * n for n in sizes]
    del ys
    _settle()
    mx.clear_cache()
    assert mx.get_cache_memory() == 0
    mx.set_cache_limit(0)
    zs = [mx.ones((n,)) + 2 for n in sizes]
    mx.eval(zs)
    del zs
    _settle()
    assert mx.get_cache_memory() == 0


def test_cache_limit_zero_caches_nothing(limits):
    mx.clear_cache()
    mx.set_cache_limit(0)
    x = mx.ones((1000, 1000))
    mx.eval(x)
    del x
    _settle()
    assert mx.get_cache_memory() == 0


def test_set_limits_return_previous_values(limits):
    first = mx.set_cache_limit(123456789)
    assert isinstance(first, int)
    assert mx.set_cache_limit(987654321) == 123456789
    assert mx.set_cache_limit(first) == 987654321
    first = mx.set_memory_limit(1 << 33)
    assert isinstance(first, int) and first > 0
    assert mx.set_memory_limit(1 << 34) == 1 << 33
    assert mx.set_memory_limit(first) == 1 << 34


def test_memory_queries_are_ints():
    for f in (mx.get_active_memory, mx.get_peak_memory, mx.get_cache_memory):
        v = f()
        assert isinstance(v, int) and v >= 0


# ----------------------------------------------------------------------------- threads
def _run_threads(n, target):
    errors = []
    barrier = threading.Barrier(n)

    def wrap(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_evaluating_graphs_on_shared_inputs():
    for _ in range(10):
        base = mx.arange(1000, dtype=mx.float32)
        shared = base
        for _ in range(30):
            shared = shared * 1.0 + 1.0
        mx.eval(shared)
        out = [None] * 4

        def work(k):
            y = shared
            for _ in range(25):
                y = y + float(k)
            out[k] = np.array(y)

        _run_threads(4, work)
        for k in range(4):
            np.testing.assert_array_equal(out[k], np.arange(1000) + 30 + 25 * k)


@pytest.mark.nuvec_only
def test_threads_evaluating_graphs_that_share_unevaluated_nodes():
    # MLX 0.32 cannot evaluate, in a new thread, a graph built in another one
    # ("There is no Stream(cpu, 0) in current thread").
    for _ in range(20):
        shared = mx.arange(2000, dtype=mx.float32)
        for _ in range(40):
            shared = shared * 1.0 + 1.0
        tails = []
        for k in range(4):
            y = shared
            for _ in range(20):
                y = y + float(k)
            tails.append(y)
        out = [None] * 4

        def work(k):
            mx.eval(tails[k])
            out[k] = np.array(tails[k])

        _run_threads(4, work)
        for k in range(4):
            np.testing.assert_array_equal(out[k], np.arange(2000) + 40 + 20 * k)
        np.testing.assert_array_equal(np.array(shared), np.arange(2000) + 40)


# ----------------------------------------------------------------------------- devices, streams
@pytest.fixture
def default_device():
    old = mx.default_device()
    yield old
    mx.set_default_device(old)


def test_cpu_device(default_device):
    assert mx.set_default_device(mx.cpu) is None
    assert mx.default_device() == mx.cpu
    assert mx.default_device().type == mx.cpu
    x = mx.arange(4) + 1
    assert x.tolist() == [1, 2, 3, 4]


def test_default_and_new_streams():
    s0 = mx.default_stream(mx.cpu)
    assert s0.device == mx.cpu
    s1 = mx.new_stream(mx.cpu)
    s2 = mx.new_stream(mx.cpu)
    assert s1.device == mx.cpu
    assert s1 != s0 and s2 != s1
    assert s0 == mx.default_stream(mx.cpu)


def test_stream_context_manager(default_device):
    mx.set_default_device(mx.cpu)
    s0 = mx.default_stream(mx.cpu)
    s = mx.new_stream(mx.cpu)
    with mx.stream(s):
        assert mx.default_stream(mx.cpu) == s
        y = mx.arange(5) * 2
    assert mx.default_stream(mx.cpu) == s0
    assert y.tolist() == [0, 2, 4, 6, 8]
    with mx.stream(mx.cpu):
        assert mx.default_device() == mx.cpu
        z = mx.ones((2,)) + 1
    assert z.tolist() == [2.0, 2.0]


def test_set_default_stream():
    s0 = mx.default_stream(mx.cpu)
    s = mx.new_stream(mx.cpu)
    try:
        mx.set_default_stream(s)
        assert mx.default_stream(mx.cpu) == s
        assert (mx.arange(3) + 1).tolist() == [1, 2, 3]
    finally:
        mx.set_default_stream(s0)
    assert mx.default_stream(mx.cpu) == s0


def test_ops_take_stream_keyword():
    s = mx.new_stream(mx.cpu)
    x = mx.arange(6, dtype=mx.float32, stream=s)
    y = mx.multiply(x, 2, stream=s)
    z = mx.add(y, 1, stream=mx.cpu)
    w = mx.exp(mx.zeros((2,), stream=mx.default_stream(mx.cpu)), stream=s)
    mx.eval(z, w)
    assert z.tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]
    assert w.tolist() == [1.0, 1.0]
    assert mx.ones((2,), stream=s).tolist() == [1.0, 1.0]
    assert mx.astype(x, mx.int32, stream=s).tolist() == [0, 1, 2, 3, 4, 5]


def test_work_across_streams():
    s1, s2 = mx.new_stream(mx.cpu), mx.new_stream(mx.cpu)
    a = mx.multiply(mx.arange(100), 3, stream=s1)
    b = mx.add(a, 1, stream=s2)
    c = mx.subtract(b, a, stream=s1)
    mx.async_eval(c)
    assert c.tolist() == [1] * 100
    assert mx.synchronize() is None
    assert mx.synchronize(s1) is None
    assert mx.synchronize(s2) is None
