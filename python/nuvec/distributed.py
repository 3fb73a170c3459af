"""mx.distributed as MLX has it, for one process: a group of size 1 until MPI (issue 19).

nuvec has no communication backend yet, so ``init()`` gives the group of this process alone (rank
0 of 1), every collective is a lazy copy of its input (what a collective over one process computes,
gradients included), and ``send``/``recv`` raise MLX's errors for a singleton group.
"""

from __future__ import annotations

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

# The backends MLX knows; nuvec accepts the names but has none of them yet.
_BACKENDS = ("any", "mpi", "nccl", "jaccl", "ring")


class Group:
    """A group of processes that communicate; in nuvec today always this process alone."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("nuvec.distributed.Group: no constructor defined! (use init())")

    def rank(self) -> int:
        """This process's rank in the group."""
        return 0

    def size(self) -> int:
        """How many processes the group holds."""
        return 1

    def split(self, color: int, key: int = -1) -> Group:
        """Subgroups by ``color``; a group of one process cannot be split (as in MLX)."""
        raise RuntimeError("Cannot split the distributed group further.")


_WORLD = object.__new__(Group)


def is_available(backend: str = "any") -> bool:
    """Whether a communication backend can be instantiated: none can yet (issue 19)."""
    return False


def init(
    strict: bool = False,
    backend: str = "any",
    *,
    all_gather_factory: Callable[[int, int], Callable[[bytes, int], bytes]] | None = None,
) -> Group:
    """The global group: this process alone. ``strict=True`` raises, as MLX does when no backend
    can start; an unknown ``backend`` raises ValueError."""
    if backend not in _BACKENDS:
        raise ValueError(
            "[distributed] The only valid values for backend are 'any', 'mpi', 'nccl', 'jaccl' "
            f"and 'ring' but '{backend}' was provided."
        )
    if strict:
        raise RuntimeError(
            f"[distributed] Couldn't initialize {'any backend' if backend == 'any' else backend}: "
            "nuvec has no communication backend yet"
        )
    return _WORLD


def _check_group(group: Group | None) -> None:
    if group is not None and not isinstance(group, Group):
        raise TypeError(f"group must be a nuvec.distributed.Group or None, not {type(group)}")


def _one_process(x: _t.ArrayLike, group: Group | None, stream: _t.StreamLike | None) -> Any:
    """A collective over one process: a new array equal to ``x`` (its gradient passes through)."""
    _check_group(group)
    return _core.contiguous(x, stream=stream)


def all_sum(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The sum of ``x`` over the processes of ``group`` (the global group when None)."""
    return _one_process(x, group, stream)


def all_max(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The elementwise maximum of ``x`` over the processes of ``group``."""
    return _one_process(x, group, stream)


def all_min(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """The elementwise minimum of ``x`` over the processes of ``group``."""
    return _one_process(x, group, stream)


def all_gather(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """Every process's ``x`` concatenated along the first axis, in rank order."""
    return _one_process(x, group, stream)


def sum_scatter(
    x: _t.ArrayLike, *, group: Group | None = None, stream: _t.StreamLike | None = None
) -> _core.array:
    """``all_sum(x)`` split along the first axis into ``group.size()`` parts; this rank's part."""
    return _one_process(x, group, stream)


def _no_peer(verb: str, group: Group | None) -> ValueError:
    _check_group(group)
    return ValueError(f"Cannot {verb} a singleton group")


def send(
    x: _t.ArrayLike,
    dst: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """Sends ``x`` to the process of rank ``dst``; a group of one has no other process."""
    raise _no_peer("send to", group)


def recv(
    shape: Sequence[int],
    dtype: _core.Dtype,
    src: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """An array of ``shape`` and ``dtype`` received from the process of rank ``src``."""
    raise _no_peer("recv from", group)


def recv_like(
    x: _t.ArrayLike,
    src: int,
    *,
    group: Group | None = None,
    stream: _t.StreamLike | None = None,
) -> _core.array:
    """``recv(x.shape, x.dtype, src)``."""
    raise _no_peer("recv from", group)
