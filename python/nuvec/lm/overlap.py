"""How nuvec.lm's decode loops queue a step: built on the previous step's lazy tokens, then either
evaluated beside the caller (``async_eval``, so Python builds step n+1 while step n runs, as
mlx-lm's loop does) or at once.

Overlapping gains only where the computation leaves the caller a core: on the GPU, or with fewer
CPU threads than cores. Where the thread pool takes every core, the caller's thread preempts a
worker in the middle of a node, and the node waits for the scheduler to bring the worker back: on
the 2-core machine decode ran 7-19% slower overlapped than evaluated at once (docs/lm.md,
"Overlap"), so there it evaluates at once."""

from __future__ import annotations

import os
from typing import Any

from .. import _core as mx

__all__ = ["ORDER_AHEAD", "OVERLAP", "overlaps", "queue"]

# Whether an overlapped step is ordered with nuvec.schedule on the caller's thread before it is
# queued (else async_eval walks on the worker); the same tokens either way.
ORDER_AHEAD = True
# None: overlap where overlaps() finds a free core; True or False forces it.
OVERLAP: bool | None = None


def overlaps() -> bool:
    """Whether queue() evaluates beside the caller (see the module's text)."""
    if OVERLAP is not None:
        return OVERLAP
    if mx.default_device().type == mx.DeviceType.gpu:
        return True
    return len(os.sched_getaffinity(0)) > mx.get_num_threads()


def queue(*arrays: Any) -> None:
    """Starts evaluating ``arrays`` beside the caller, or evaluates them now (overlaps())."""
    if not overlaps():
        mx.eval(*arrays)
    elif ORDER_AHEAD:
        mx.schedule(*arrays).async_eval()
    else:
        mx.async_eval(*arrays)
