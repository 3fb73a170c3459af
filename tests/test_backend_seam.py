"""The backend seam: a slow reference backend, registered from Python for the otherwise empty
gpu device type, runs ops through the same kernel registry as the CPU backend."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

pytestmark = [
    pytest.mark.nuvec_only,
    pytest.mark.skipif(IS_MLX, reason="nuvec's backend registry"),
    pytest.mark.skipif(
        not IS_MLX and mx.cuda.is_available(),
        reason="installs a test backend for the GPU, which CUDA holds here",
    ),
]


@pytest.fixture
def reference():
    calls = []

    def kernel(name, fn):
        def run(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)

        return run

    kernels = {"add": np.add, "multiply": np.multiply, "exp": np.exp, "sum": np.sum}
    mx._core._testing_register_backend(mx.gpu, {k: kernel(k, f) for k, f in kernels.items()})
    try:
        yield calls
    finally:
        mx._core._testing_unregister_backend(mx.gpu)


def test_gpu_is_available_only_while_a_backend_is_registered(reference):
    assert mx.is_available(mx.gpu)
    mx._core._testing_unregister_backend(mx.gpu)
    try:
        assert not mx.is_available(mx.gpu)
        with pytest.raises(ValueError, match="not available"):
            mx.add(mx.array(1.0), mx.array(2.0), stream=mx.gpu)
    finally:
        mx._core._testing_register_backend(mx.gpu, {})
    assert mx.is_available(mx.cpu)


def test_ops_run_through_the_reference_backend(reference):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = mx.array(x), mx.array(x + 1)
    out = mx.exp(mx.multiply(mx.add(a, b, stream=mx.gpu), b, stream=mx.gpu), stream=mx.gpu)
    assert reference == []  # recorded, not evaluated
    np.testing.assert_allclose(np.asarray(out), np.exp((x + x + 1) * (x + 1)), rtol=1e-6)
    assert reference == ["add", "multiply", "exp"]
    total = mx.sum(a, stream=mx.gpu)
    assert total.item() == pytest.approx(x.sum())
    assert reference[-1] == "sum"


def test_a_missing_kernel_names_the_primitive_and_the_device(reference):
    a = mx.array(np.ones(4, np.float32))
    missing = "no kernel for this primitive on the gpu device"
    with pytest.raises(Exception, match="subtract: " + missing):
        mx.eval(mx.subtract(a, a, stream=mx.gpu))  # the family is registered, this op is not
    with pytest.raises(Exception, match="sort: " + missing):
        mx.eval(mx.sort(a, stream=mx.gpu))  # no kernel of this primitive class at all


def test_cpu_fusion_leaves_other_devices_alone(reference):
    n = 1 << 17  # large enough for the CPU backend to fuse
    a = mx.array(np.linspace(0, 1, n, dtype=np.float32))
    out = mx.exp(mx.add(mx.multiply(a, a, stream=mx.gpu), a, stream=mx.gpu), stream=mx.gpu)
    x = np.linspace(0, 1, n, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(out), np.exp(x * x + x), rtol=1e-6)
    assert reference == ["multiply", "add", "exp"]


def test_unregistering_restores_the_previous_state():
    assert not mx.is_available(mx.gpu)
    mx._core._testing_register_backend(mx.gpu, {"add": np.add})
    mx._core._testing_unregister_backend(mx.gpu)
    assert not mx.is_available(mx.gpu)
    a = mx.array(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(mx.add(a, a)), 2 * np.ones(3))  # the CPU is untouched
