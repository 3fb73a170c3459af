"""nuvec.distributed in a process not started by mpirun (test_distributed_mpi.py runs MPI jobs):
the group of size 1, collectives that return their input's values (gradients included),
send/recv raising as MLX does on one process. Each snippet also runs on mlx.core.distributed
where MLX is installed: same values, or the same exception type."""

import os
import subprocess
import sys

import numpy as np
import pytest

import nuvec as nx
from _impl import IS_MLX

if IS_MLX:
    pytest.skip("nuvec's one-process distributed module", allow_module_level=True)

dist = nx.distributed
COLLECTIVES = ("all_sum", "all_gather", "all_max", "all_min", "sum_scatter")


def _both(snippet):
    """snippet(mx) on nuvec, and on MLX where installed: (nuvec's outcome, MLX's or None); an
    outcome is ("value", numpy array / Python value) or ("raises", exception type)."""

    def outcome(mx):
        try:
            r = snippet(mx)
        except Exception as e:  # noqa: BLE001 (an exception is an outcome to compare)
            return "raises", type(e)
        return "value", (np.array(r), str(r.dtype).rsplit(".", 1)[-1]) if hasattr(r, "dtype") else r

    try:
        import mlx.core as mlx
    except ImportError:
        return outcome(nx), None
    return outcome(nx), outcome(mlx)


def _agree(got, want):
    if want is None:
        return
    assert got[0] == want[0], f"nuvec: {got}, MLX: {want}"
    if got[0] == "raises":
        assert issubclass(got[1], want[1]) or got[1] is want[1], (got, want)
    elif isinstance(want[1], tuple):
        (g, gd), (w, wd) = got[1], want[1]
        assert gd == wd and g.shape == w.shape, (got, want)
        np.testing.assert_array_equal(g, w)
    else:
        assert got[1] == want[1], (got, want)


def test_group_of_one_process():
    g = dist.init()
    assert (g.rank(), g.size()) == (0, 1)
    assert isinstance(g, dist.Group)
    # MPI's library may be installed; this process was not started by mpirun either way.
    assert dist.is_available() is dist.is_available("mpi")
    assert not any(dist.is_available(b) for b in ("nccl", "jaccl", "nope"))
    _agree(*_both(lambda mx: mx.distributed.is_available("nope")))
    _agree(*_both(lambda mx: mx.distributed.init().size()))
    _agree(*_both(lambda mx: mx.distributed.init().rank()))
    _agree(*_both(lambda mx: mx.distributed.init(backend="mpi").size()))


@pytest.mark.parametrize(
    "snippet",
    [
        lambda mx: mx.distributed.init(backend="nope"),
        lambda mx: mx.distributed.init(strict=True),
        lambda mx: mx.distributed.init().split(0),
        lambda mx: mx.distributed.init().split(1, key=3),
        lambda mx: mx.distributed.Group(),
        lambda mx: mx.distributed.send(mx.ones(3), 0),
        lambda mx: mx.distributed.send(mx.ones(3), 1),
        lambda mx: mx.distributed.recv((3,), mx.float32, 0),
        lambda mx: mx.distributed.recv_like(mx.ones(3), 0),
        lambda mx: mx.distributed.all_sum(mx.ones(3), mx.distributed.init()),  # group is keyword
    ],
    ids=[
        "bad_backend",
        "strict",
        "split",
        "split_key",
        "ctor",
        "send0",
        "send1",
        "recv",
        "recv_like",
        "positional_group",
    ],  # fmt: skip
)
def test_errors_as_mlx(snippet):
    got, want = _both(snippet)
    assert got[0] == "raises", got
    _agree(got, want)


def test_error_messages():
    with pytest.raises(ValueError, match="'any', 'mpi', 'nccl', 'jaccl' and 'ring'"):
        dist.init(backend="gloo")
    with pytest.raises(ValueError, match="Cannot send to a singleton group"):
        dist.send(nx.ones(2), 0)
    with pytest.raises(ValueError, match="Cannot recv from a singleton group"):
        dist.recv_like(nx.ones(2), 0)
    with pytest.raises(TypeError, match="group must be"):
        dist.all_sum(nx.ones(2), group="world")


@pytest.mark.parametrize("name", COLLECTIVES)
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool_", "float16"])
def test_collective_is_a_copy(name, dtype):
    v = (np.arange(12).reshape(4, 3) % 3).astype(np.float32)

    def snippet(mx):
        x = mx.array(v).astype(getattr(mx, dtype))
        return getattr(mx.distributed, name)(x, group=mx.distributed.init())

    got, want = _both(snippet)
    assert got[0] == "value"
    ref = v.astype(np.bool_ if dtype == "bool_" else dtype)
    np.testing.assert_array_equal(got[1][0], ref)
    _agree(got, want)
    x = nx.ones(3)
    assert getattr(dist, name)(x) is not x  # a new array, as MLX's


@pytest.mark.parametrize("name", COLLECTIVES)
def test_collective_scalar_and_stream(name):
    _agree(*_both(lambda mx: getattr(mx.distributed, name)(2.5)))
    _agree(*_both(lambda mx: getattr(mx.distributed, name)(mx.array(3), stream=mx.cpu)))


@pytest.mark.parametrize("name", COLLECTIVES)
def test_collective_gradient_passes_through(name):
    w = np.array([0.5, -1.0, 2.0], np.float32)

    def snippet(mx):
        fn = getattr(mx.distributed, name)
        return mx.grad(lambda x: (fn(x * x) * mx.array(w)).sum())(mx.array([1.0, 2.0, 3.0]))

    got, want = _both(snippet)
    np.testing.assert_allclose(got[1][0], 2 * np.array([1.0, 2.0, 3.0]) * w)
    _agree(got, want)


def test_collective_under_vmap():
    got, want = _both(lambda mx: mx.vmap(mx.distributed.all_sum)(mx.ones((2, 3))))
    np.testing.assert_array_equal(got[1][0], np.ones((2, 3)))
    _agree(got, want)


def test_registered_as_a_module():
    assert "distributed" in nx.__all__
    assert set(dist.__all__) == {n for n in dir(dist) if not n.startswith("_")} - {
        "Any", "Callable", "Sequence", "annotations",
    }  # fmt: skip


def test_without_an_mpi_library():
    """A process that looks launched by mpirun but finds no MPI library: a group of one (strict:
    RuntimeError saying why), and the collectives still work."""
    code = (
        "import nuvec as mx\n"
        "d = mx.distributed\n"
        "assert not d.is_available() and d.init().size() == 1\n"
        "assert d.all_sum(mx.arange(3)).tolist() == [0, 1, 2]\n"
        "try:\n"
        "    d.init(strict=True)\n"
        "except RuntimeError as e:\n"
        "    assert 'no MPI library loads' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('strict init without MPI')\n"
    )
    env = dict(os.environ, NUVEC_MPI_LIBRARY="/nonexistent/libmpi.so", OMPI_COMM_WORLD_SIZE="2")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
