"""The schedules at chosen steps (against their closed forms and, where installed, MLX's bits),
their use by an optimizer (MLX's documented examples), and clip_grad_norm."""

import math

import numpy as np
import pytest

from _impl import IS_MLX, mx

if IS_MLX:
    import mlx.optimizers as optim
else:
    import nuvec.optimizers as optim

STEPS = [0, 1, 2, 5, 9, 10, 11, 99, 100, 101, 1000, 5000]


def _exp(t):
    return 0.1 * 0.9**t


def _step(t):
    return 0.1 * 0.9 ** (t // 10)


def _cos(t):
    return 0.01 + 0.5 * (1 + math.cos(math.pi * min(t, 100) / 100)) * (0.1 - 0.01)


def _lin(t):
    return 0.02 + min(t, 100) * (0.1 - 0.02) / 100


def _joined(t):
    if t < 10:
        return 1e-3 * min(t, 10)
    return _cos(t - 10) if t < 500 else _exp(t - 500)


SCHEDULES = {  # name: (make the schedule, its closed form)
    "exponential_decay": (lambda: optim.exponential_decay(0.1, 0.9), _exp),
    "step_decay": (lambda: optim.step_decay(0.1, 0.9, 10), _step),
    "cosine_decay": (lambda: optim.cosine_decay(0.1, 100, 0.01), _cos),
    "cosine_decay_to_zero": (
        lambda: optim.cosine_decay(0.1, 100),
        lambda t: 0.5 * (1 + math.cos(math.pi * min(t, 100) / 100)) * 0.1,
    ),
    "linear_schedule": (lambda: optim.linear_schedule(0.02, 0.1, 100), _lin),
    "join_schedules": (
        lambda: optim.join_schedules(
            [
                optim.linear_schedule(0.0, 1e-2, 10),
                optim.cosine_decay(0.1, 100, 0.01),
                optim.exponential_decay(0.1, 0.9),
            ],
            [10, 500],
        ),
        _joined,
    ),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_its_closed_form(name):
    make, closed = SCHEDULES[name]
    schedule = make()
    for t in STEPS:
        got = schedule(mx.array(t, mx.uint64))  # as an optimizer calls it
        assert got.dtype == mx.float32 and got.shape == ()
        # atol: float32's rounding of values of order init (0.1), where 1 + cos(...) cancels
        np.testing.assert_allclose(got.item(), closed(t), rtol=3e-6, atol=1e-8, err_msg=str(t))


@pytest.mark.nuvec_only
@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_mlx_bit_for_bit(name):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    ours = SCHEDULES[name][0]()
    global optim
    saved, optim = optim, mlx_optim
    try:
        theirs = SCHEDULES[name][0]()
    finally:
        optim = saved
    for t in STEPS:
        a = np.asarray(ours(mx.array(t, mx.uint64)))
        b = np.asarray(theirs(mlx.array(t, mlx.uint64)))
        if "cos" in name or "join" in name:
            # nuvec's float32 cos is MLX's within an ulp; 1 + cos(...) cancels near the end, so
            # the values agree within an ulp of the initial value (0.1), not of their own.
            np.testing.assert_allclose(a, b, rtol=0, atol=float(np.spacing(np.float32(0.1))))
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"step {t}")


def test_plain_python_steps_give_python_numbers():
    assert optim.exponential_decay(0.5, 0.5)(2) == 0.125
    assert optim.step_decay(1.0, 0.5, 3)(7) == 0.25


@pytest.mark.parametrize(
    ("make", "updates", "want"),
    [  # MLX's documented examples: the learning rate after some updates
        (lambda: optim.SGD(learning_rate=optim.exponential_decay(1e-1, 0.9)), 5, 0.06561),
        (lambda: optim.SGD(learning_rate=optim.step_decay(1e-1, 0.9, 10)), 21, 0.081),
        (lambda: optim.SGD(learning_rate=optim.cosine_decay(1e-1, 1000)), 5, 0.0999961),
        (
            lambda: optim.Adam(
                learning_rate=optim.join_schedules(
                    [optim.linear_schedule(0, 1e-1, steps=10), optim.cosine_decay(1e-1, 200)],
                    [10],
                )
            ),
            12,
            0.0999938,
        ),
        (lambda: optim.Adam(learning_rate=optim.linear_schedule(0, 1e-1, 100)), 101, 0.1),
    ],
)
def test_an_optimizer_advances_its_schedule(make, updates, want):
    opt = make()
    for _ in range(updates):
        opt.update({}, {})
    assert opt.step.item() == updates
    np.testing.assert_allclose(opt.learning_rate.item(), want, rtol=1e-5)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: optim.step_decay(0.1, 0.9, 0),
        lambda: optim.cosine_decay(0.1, 0),
        lambda: optim.linear_schedule(0.0, 0.1, 0),
        lambda: optim.join_schedules([], []),
        lambda: optim.join_schedules([optim.exponential_decay(0.1, 0.9)], [3]),
    ],
)
def test_bad_schedule_arguments_raise_value_error(bad):
    with pytest.raises(ValueError):
        bad()


def _grads(rng):
    return {
        "a": rng.standard_normal((5, 3)).astype(np.float32),
        "b": [
            rng.standard_normal(4).astype(np.float32) * 3,
            np.float16(300) * np.ones(2, np.float16),
        ],
    }


def _flat(tree):
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _flat(v)]
    if isinstance(tree, list):
        return [x for v in tree for x in _flat(v)]
    return [tree]


@pytest.mark.parametrize("max_norm", [0.0, 1.0, 50.0, 1e6])
def test_clip_grad_norm(max_norm):
    g = _grads(np.random.default_rng(0))
    leaves = [x.astype(np.float64) for x in _flat(g)]
    norm = math.sqrt(sum(float((x * x).sum()) for x in leaves))  # 600 from the float16 leaf
    scale = min(max_norm / (norm + 1e-6), 1.0)
    tree = {"a": mx.array(g["a"]), "b": [mx.array(x) for x in g["b"]]}
    clipped, total = optim.clip_grad_norm(tree, max_norm)
    np.testing.assert_allclose(total.item(), norm, rtol=1e-6)
    got = _flat(clipped)
    assert [x.dtype for x in got] == [mx.float32, mx.float32, mx.float16]
    for x, want in zip(got, leaves):
        rtol = 1e-3 if x.dtype == mx.float16 else 1e-6
        np.testing.assert_allclose(np.asarray(x.astype(mx.float32)), want * scale, rtol=rtol)
    if scale == 1.0:  # under the limit: the gradients come back unchanged
        for x, original in zip(got, _flat(tree)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(original))


@pytest.mark.nuvec_only
def test_clip_grad_norm_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    g = _grads(np.random.default_rng(1))
    ours = optim.clip_grad_norm({"a": mx.array(g["a"]), "b": [mx.array(x) for x in g["b"]]}, 2.0)
    theirs = mlx_optim.clip_grad_norm(
        {"a": mlx.array(g["a"]), "b": [mlx.array(x) for x in g["b"]]}, 2.0
    )
    np.testing.assert_allclose(ours[1].item(), theirs[1].item(), rtol=2e-7)
    for x, y in zip(_flat(ours[0]), _flat(theirs[0])):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=5e-7)


def test_clip_grad_norm_rejects_a_negative_norm():
    with pytest.raises(ValueError):
        optim.clip_grad_norm({"a": mx.ones((2,))}, -1.0)
