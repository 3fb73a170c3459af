"""Schedules as ``mlx.optimizers``'s: each function returns a callable of the step (an array, as
optimizers pass it, or a Python number) that gives the hyperparameter's value at that step."""

import math
from collections.abc import Callable, Sequence

from .. import _core as mx
from .._errors import op_error

__all__ = [
    "exponential_decay",
    "step_decay",
    "cosine_decay",
    "join_schedules",
    "linear_schedule",
]

_Schedule = Callable[[mx.array], mx.array]


def _positive(fn, name, value):
    if value < 1:
        raise op_error(fn, f"{name} must be greater than 0, but got {value}.")


def exponential_decay(init: float, decay_rate: float) -> _Schedule:
    """``init * decay_rate ** step``."""
    return lambda step: init * decay_rate**step


def step_decay(init: float, decay_rate: float, step_size: int) -> _Schedule:
    """``init * decay_rate ** (step // step_size)``: decays once every ``step_size`` steps."""
    _positive("step_decay", "step_size", step_size)
    return lambda step: init * (decay_rate ** (step // step_size))


def cosine_decay(init: float, decay_steps: int, end: float = 0.0) -> _Schedule:
    """Half a cosine from ``init`` down to ``end`` over ``decay_steps`` steps, then ``end``."""
    _positive("cosine_decay", "decay_steps", decay_steps)

    def schedule(step):
        s = mx.minimum(step, decay_steps)
        decay = 0.5 * (1.0 + mx.cos((math.pi / decay_steps) * s))
        return end + decay * (init - end)

    return schedule


def join_schedules(schedules: Sequence[_Schedule], boundaries: Sequence[int]) -> _Schedule:
    """``schedules[0]`` until ``boundaries[0]``, then ``schedules[1]`` called with the steps
    since that boundary, and so on."""
    if len(schedules) == 0:
        raise op_error("join_schedules", "Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise op_error(
            "join_schedules",
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}.",
        )

    def schedule(step):
        out = schedules[0](step)
        for boundary, later in zip(boundaries, schedules[1:]):
            out = mx.where(step < boundary, out, later(step - boundary))
        return out

    return schedule


def linear_schedule(init: float, end: float, steps: int) -> _Schedule:
    """From ``init`` to ``end`` in a straight line over ``steps`` steps, then ``end``."""
    _positive("linear_schedule", "steps", steps)

    def schedule(step):
        step = mx.minimum(step, steps)
        return step * ((end - init) / steps) + init

    return schedule
