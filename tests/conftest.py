"""Shared pytest configuration for the nuvec test suite.

* ``tests/_impl.py`` picks the framework: nuvec by default, MLX when ``NUVEC_TEST_IMPL=mlx``.
* The ``nuvec_only`` marker labels behaviour where nuvec deliberately differs from MLX (or that
  MLX lacks); such tests are skipped automatically when running against MLX.
* Hypothesis runs a small, derandomized number of examples so the suite stays fast.
"""

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _impl import IMPL, IS_MLX  # noqa: E402
from _impl import mx as _mx  # noqa: E402

settings.register_profile(
    "nuvec",
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "nuvec-thorough",
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("NUVEC_HYPOTHESIS_PROFILE", "nuvec"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "nuvec_only: nuvec deliberately differs from MLX here (or MLX lacks the feature); "
        "skipped when NUVEC_TEST_IMPL=mlx",
    )
    config.addinivalue_line(
        "markers",
        "cpu_backend: checks the CPU backend's own kernels or memory; runs with the CPU as the "
        "default device where a GPU is the default (docs/cuda.md)",
    )


@pytest.fixture(autouse=True)
def _cpu_backend_default(request):
    """The CPU as the default device for tests marked cpu_backend, on a machine with a GPU."""
    if IS_MLX or request.node.get_closest_marker("cpu_backend") is None:
        yield
        return
    previous = _mx.default_device()
    _mx.set_default_device(_mx.cpu)
    try:
        yield
    finally:
        _mx.set_default_device(previous)


def pytest_report_header(config):
    return f"array framework under test: {IMPL} ({getattr(_mx, '__name__', '?')})"


def pytest_collection_modifyitems(config, items):
    if not IS_MLX:
        return
    skip = pytest.mark.skip(reason="nuvec_only: nuvec deliberately differs from MLX here")
    for item in items:
        if item.get_closest_marker("nuvec_only") is not None:
            item.add_marker(skip)


@pytest.fixture
def mx():
    """The framework under test (nuvec, or mlx.core with NUVEC_TEST_IMPL=mlx)."""
    return _mx
