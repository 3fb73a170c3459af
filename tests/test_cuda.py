"""The CUDA backend's runtime: device, streams, memory, moves between devices (docs/cuda.md).

The first tests run everywhere: a build with the CUDA backend imports and runs on a machine without
a GPU or driver. The rest need a CUDA device and skip without one (cuda_helpers.needs_gpu).
"""

import threading

import numpy as np
import pytest

from _impl import IS_MLX, mx
from cuda_helpers import HAS_GPU, assert_same, both, needs_gpu

pytestmark = pytest.mark.nuvec_only


@pytest.mark.skipif(HAS_GPU, reason="checks the machine without a GPU")
def test_without_a_gpu_the_cpu_runs_everything():
    assert not mx.cuda.is_available()
    assert not mx.is_available(mx.gpu)
    assert mx.default_device() == mx.cpu
    assert mx.device_info(mx.gpu) == {}
    assert mx.device_count(mx.gpu) == 0
    with pytest.raises(Exception, match="gpu"):
        mx.set_default_device(mx.gpu)
    assert (mx.array([1, 2]) + 1).tolist() == [2, 3]


@needs_gpu
def test_the_gpu_is_the_default_device():
    assert mx.is_available(mx.gpu) and mx.cuda.is_available()
    assert mx.default_device() == mx.gpu
    assert mx.device_count(mx.gpu) == 1
    info = mx.device_info(mx.gpu)
    assert (
        info["memory_size"] > 0 and info["architecture"].startswith("sm_") and info["device_name"]
    )


@needs_gpu
def test_arrays_move_between_devices_on_use():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = mx.array(x)
    g = mx.multiply(a, 2, stream=mx.gpu)  # a host array read on the GPU
    c = mx.add(g, 1, stream=mx.cpu)  # a GPU result read on the CPU
    g2 = mx.subtract(c, g, stream=mx.gpu)  # and back
    mx.eval(g2)
    np.testing.assert_array_equal(np.array(c), x * 2 + 1)
    np.testing.assert_array_equal(np.array(g2), np.ones_like(x))
    assert g[1, 2].item() == 16.0


@needs_gpu
def test_strided_numpy_arrays_move_whole():
    # A NumPy view with gaps or negative strides: its buffer's extent goes to the device.
    a = np.arange(120, dtype=np.float32).reshape(4, 6, 5)
    for view in (a[:, ::-2, 0], a[::-1, 1:, ::2], a.transpose(2, 0, 1)[1:]):
        got = mx.multiply(mx.array(view), 2, stream=mx.gpu)
        np.testing.assert_array_equal(np.array(got), view * 2)
    mask = (a % 7 < 3)[:, :, 0]
    np.testing.assert_array_equal(np.array(mx.array(a)[mx.array(mask), 1:]), a[mask, 1:])


@needs_gpu
def test_a_view_of_a_gpu_result_reads_on_the_host():
    g = mx.arange(64, stream=mx.gpu).reshape(8, 8) * 3
    v = g[2:6:2, ::3]
    np.testing.assert_array_equal(np.array(v), (np.arange(64).reshape(8, 8) * 3)[2:6:2, ::3])
    np.testing.assert_array_equal(
        np.array(mx.transpose(g, stream=mx.gpu)), (np.arange(64).reshape(8, 8) * 3).T
    )


@needs_gpu
def test_async_eval_returns_then_synchronize_waits():
    a = mx.random.normal((2048, 2048), key=mx.random.key(0))
    out = mx.sum(mx.exp(a) @ a, stream=mx.gpu)
    mx.async_eval(out)
    mx.synchronize()
    ref = np.array(mx.sum(mx.exp(a) @ a, stream=mx.cpu))
    np.testing.assert_allclose(np.array(out), ref, rtol=1e-3)


@needs_gpu
def test_the_same_bits_run_to_run():
    x = mx.random.normal((512, 300), key=mx.random.key(1))
    w = mx.random.normal((300, 129), key=mx.random.key(2))

    def f():
        y = mx.softmax(mx.tanh(x @ w), axis=-1)
        return np.array(mx.sum(y * y, axis=0, stream=mx.gpu))

    first = f()
    for _ in range(3):
        assert f().tobytes() == first.tobytes()


@needs_gpu
def test_grad_of_an_mlp_on_the_gpu_matches_the_cpu():
    k = mx.random.split(mx.random.key(3), 3)
    params = {
        "w1": mx.random.normal((32, 64), key=k[0]) * 0.1,
        "w2": mx.random.normal((64, 10), key=k[1]) * 0.1,
    }
    x = mx.random.normal((16, 32), key=k[2])
    y = mx.arange(16) % 10

    def loss(p):
        h = mx.maximum(x @ p["w1"], 0)
        logits = h @ p["w2"]
        return mx.mean(
            mx.logsumexp(logits, axis=-1) - mx.take_along_axis(logits, y[:, None], axis=-1)[:, 0]
        )

    cpu, gpu = both(lambda: [v for v in mx.value_and_grad(loss)(params)[1].values()])
    for c, g in zip(cpu, gpu):
        assert_same(c, g, rtol=1e-4, atol=1e-6)


@needs_gpu
def test_memory_functions_count_the_device():
    mx.synchronize()
    mx.clear_cache()
    before = mx.get_active_memory()
    g = mx.zeros((1024, 1024), stream=mx.gpu) + mx.array(1.0)
    mx.eval(g)
    assert mx.get_active_memory() >= before
    del g
    assert mx.get_cache_memory() >= 0
    old = mx.set_memory_limit(1 << 20)
    try:
        with pytest.raises(Exception, match="memory"):
            mx.eval(mx.ones((4096, 4096), stream=mx.gpu) * 2)
    finally:
        mx.set_memory_limit(old)


@needs_gpu
def test_threads_share_the_device():
    out = {}

    def work(i):
        with mx.stream(mx.new_stream(mx.gpu)):
            out[i] = np.array(mx.sum(mx.arange(1000) * i))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert {i: int(v) for i, v in out.items()} == {i: 499500 * i for i in range(4)}


def test_skips_name_their_reason():
    assert IS_MLX or HAS_GPU or needs_gpu.kwargs["reason"].startswith("no CUDA device")
