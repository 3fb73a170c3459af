"""State captured by `compile` through `inputs=`/`outputs=`: a training step that updates a model,
its optimizer and the random key in place, run compiled and uncompiled from the same weights and
seed; and random numbers drawn inside compiled functions with and without the key captured.

Runs against MLX too (NUVEC_TEST_IMPL=mlx), which is where the expected behaviour comes from."""

import functools

import numpy as np
import pytest

from _impl import IS_MLX, mx
from compile_helpers import table_params

if IS_MLX:
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_flatten
else:
    import nuvec.nn as nn
    import nuvec.optimizers as optim
    from nuvec.utils import tree_flatten

STEPS = 30
OPTIMIZERS = {
    "adam": lambda: optim.Adam(learning_rate=1e-2),
    "sgd-momentum": lambda: optim.SGD(learning_rate=5e-2, momentum=0.9),
    "adamw": lambda: optim.AdamW(learning_rate=1e-2, weight_decay=0.1),
    # schedules keep their step in the optimizer's state
    "adam-cosine": lambda: optim.Adam(learning_rate=optim.cosine_decay(2e-2, STEPS)),
    "sgd-nesterov-warmup": lambda: optim.SGD(
        learning_rate=optim.join_schedules(
            [optim.linear_schedule(0, 5e-2, 5), optim.exponential_decay(5e-2, 0.95)], [5]
        ),
        momentum=0.9,
        nesterov=True,
    ),
    "lion": lambda: optim.Lion(learning_rate=3e-3),
    "adafactor": lambda: optim.Adafactor(learning_rate=1e-2),
    "rmsprop": lambda: optim.RMSprop(learning_rate=3e-3),
}


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 6)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
    return mx.array(x), mx.array(y)


def train(opt_name, compiled):
    """Losses, dropout masks, final parameters and final random key of STEPS training steps."""
    mx.random.seed(3)  # identical initial weights and dropout draws in both runs
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 1))
    opt = OPTIMIZERS[opt_name]()
    x, y = data()

    def loss_fn(model, x, y):
        return mx.mean(mx.square(model(x) - y))

    value_and_grad = nn.value_and_grad(model, loss_fn)

    traces = []

    def step(x, y):
        traces.append(1)
        loss, grads = value_and_grad(model, x, y)
        opt.update(model, grads)
        mask = model.layers[2](mx.ones((4, 16)))  # the layer's next mask, drawn like the model's
        return loss, mask

    if compiled:
        state = [model.state, opt.state, mx.random.state]
        step = functools.partial(mx.compile, inputs=state, outputs=state)(step)
    losses, masks = [], []
    for _ in range(STEPS):
        loss, mask = step(x, y)
        mx.eval(loss, mask, model.state, opt.state)
        losses.append(loss.item())
        masks.append(np.array(mask))
    params = {k: np.array(v) for k, v in tree_flatten(model.parameters())}
    # compiled: one trace before the optimizer has state and one after, then replays
    assert len(traces) == (2 if compiled else STEPS)
    return losses, masks, params, np.array(mx.random.state[0])


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_compiled_training_loop_equals_uncompiled(opt_name):
    want_losses, want_masks, want_params, want_key = train(opt_name, compiled=False)
    got_losses, got_masks, got_params, got_key = train(opt_name, compiled=True)
    # The loss falls: the loop trains (so equal runs are not equal by doing nothing)
    assert want_losses[-1] < 0.8 * want_losses[0]
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    assert got_params.keys() == want_params.keys()
    for k in want_params:
        np.testing.assert_allclose(got_params[k], want_params[k], rtol=1e-5, atol=1e-7, err_msg=k)
    # The captured key advances exactly as uncompiled code advances it: same masks, same key
    for got, want in zip(got_masks, want_masks):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_key, want_key)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_compiled_training_loop_is_bitwise(opt_name):
    """Bitwise holds too (on MLX 0.32 as well): the same ops on the same inputs."""
    want_losses, _, want_params, _ = train(opt_name, compiled=False)
    got_losses, _, got_params, _ = train(opt_name, compiled=True)
    assert got_losses == want_losses
    for k in want_params:
        np.testing.assert_array_equal(got_params[k], want_params[k], err_msg=k)


# (id, model, how it is called on x of shape (2, 10, 32))
MODELS = [
    ("attention", lambda: nn.MultiHeadAttention(32, 4), lambda m, x: m(x, x, x)),
    ("transformer", lambda: nn.TransformerEncoderLayer(32, 4, 64), lambda m, x: m(x, None)),
    (
        "norms-gelu",
        lambda: nn.Sequential(
            nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 32), nn.RMSNorm(32)
        ),
        lambda m, x: m(x),
    ),
    (
        "conv-groupnorm",
        lambda: nn.Sequential(nn.Conv2d(32, 8, 3, padding=1), nn.ReLU(), nn.GroupNorm(2, 8)),
        lambda m, x: m(x.reshape(2, 2, 5, 32)),
    ),
]


@pytest.mark.parametrize("name,make,call", MODELS, ids=[c[0] for c in MODELS])
def test_compiled_loss_and_gradients_of_layers(name, make, call):
    mx.random.seed(0)
    model, x = make(), mx.random.normal((2, 10, 32))

    def loss_fn(model, x):
        y = call(model, x)
        labels = mx.zeros((y.size // y.shape[-1],), mx.int32)
        ce = nn.losses.cross_entropy(y.reshape(-1, y.shape[-1]), labels, reduction="mean")
        return mx.mean(y * y) + ce

    value_and_grad = nn.value_and_grad(model, loss_fn)
    want_loss, want_grads = value_and_grad(model, x)
    compiled = mx.compile(lambda x: value_and_grad(model, x))
    for _ in range(2):  # the trace, then a replay
        loss, grads = compiled(x)
        close = np.testing.assert_allclose if IS_MLX else np.testing.assert_array_equal
        close(loss.item(), want_loss.item())
        for (k, g), (_, w) in zip(tree_flatten(grads), tree_flatten(want_grads)):
            close(np.array(g), np.array(w), err_msg=k)


# (id, layer, call): layers run shapeless over sequence lengths
SEQUENCE_LAYERS = [
    ("layer-norm", lambda: nn.LayerNorm(32), lambda m, x: m(x)),
    ("rms-norm", lambda: nn.RMSNorm(32), lambda m, x: m(x)),
    ("gelu", lambda: nn.GELU(), lambda m, x: m(x)),
    ("attention", lambda: nn.MultiHeadAttention(32, 4), lambda m, x: m(x, x, x)),
    ("linear", lambda: nn.Linear(32, 8), lambda m, x: m(x)),
]


@pytest.mark.parametrize(
    "name,make,call",
    table_params(
        SEQUENCE_LAYERS,
        mlx_fails={"linear"},  # MLX 0.32: "[reshape] Cannot reshape array" for a new length
        nuvec_bugs={
            "attention": "a reshape splitting an axis by numbers, (B, L, 32) -> (B, L, 4, -1), "
            "raises OpError for a new L (docs/compile.md); MLX 0.32 replays it"
        },
    ),
)
def test_shapeless_layers_over_sequence_lengths(name, make, call):
    mx.random.seed(0)
    model = make()
    mx.eval(model.parameters())
    traces = []
    f = mx.compile(lambda x: traces.append(1) or call(model, x), shapeless=True)
    for length in (5, 9, 2):
        x = mx.random.normal((2, length, 32))
        np.testing.assert_allclose(np.array(f(x)), np.array(call(model, x)), rtol=1e-5, atol=1e-6)
    assert len(traces) == 1


def test_step_traces_once_per_state_structure():
    mx.random.seed(0)
    model = nn.Linear(3, 2)
    opt = optim.Adam(learning_rate=1e-2)
    calls = []
    state = [model.state, opt.state]

    @functools.partial(mx.compile, inputs=state, outputs=state)
    def step(x):
        calls.append(1)
        loss, grads = nn.value_and_grad(model, lambda m, x: mx.sum(m(x) ** 2))(model, x)
        opt.update(model, grads)
        return loss

    for _ in range(5):
        step(mx.ones((4, 3)))
    # the optimizer's state appears on the first update: one trace before, one after
    assert len(calls) == 2


def test_state_updated_in_place_through_outputs():
    """A captured counter and buffer are written back after every call (outputs=), and read
    afresh on the next (inputs=), as MLX's compile does with any tree of arrays."""
    state = {"count": mx.array(0), "buf": mx.zeros((3,))}

    @functools.partial(mx.compile, inputs=state, outputs=state)
    def tick(x):
        state["count"] = state["count"] + 1
        state["buf"] = state["buf"] * 0.5 + x
        return state["buf"].sum()

    want_buf = np.zeros(3, np.float32)
    for i in range(1, 6):
        x = np.full(3, i, np.float32)
        total = tick(mx.array(x))
        want_buf = want_buf * 0.5 + x
        assert state["count"].item() == i
        np.testing.assert_array_equal(np.array(state["buf"]), want_buf)
        assert total.item() == pytest.approx(want_buf.sum())
    state["buf"] = mx.full((3,), 10.0)  # replaced from outside: the next call reads the new one
    tick(mx.zeros((3,)))
    np.testing.assert_array_equal(np.array(state["buf"]), np.full(3, 5.0, np.float32))


def uniform_plus(x):
    return x + mx.random.uniform(shape=x.shape)


def test_random_with_captured_key_advances_as_uncompiled():
    x = mx.zeros((5,))
    mx.random.seed(0)
    want = [np.array(uniform_plus(x)) for _ in range(4)]
    want_key = np.array(mx.random.state[0])
    state = [mx.random.state]
    f = functools.partial(mx.compile, inputs=state, outputs=state)(uniform_plus)
    mx.random.seed(0)  # reseeding replaces the key inside the captured list
    got = [np.array(f(x)) for _ in range(4)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(np.array(mx.random.state[0]), want_key)


def test_random_without_captured_key_replays_the_traced_draw():
    """Uncaptured, the key is read once at trace time: the trace draws as uncompiled code would
    (advancing the global key once) and every replay repeats that draw, whatever the seed."""
    x = mx.zeros((5,))
    mx.random.seed(0)
    first, second = np.array(uniform_plus(x)), np.array(uniform_plus(x))
    f = mx.compile(uniform_plus)
    mx.random.seed(0)
    got = np.array(f(x))
    key_after_one = np.array(mx.random.state[0])
    np.testing.assert_array_equal(got, first)
    for seed in (0, 7):
        np.testing.assert_array_equal(np.array(f(x)), first)
        mx.random.seed(seed)
    mx.random.seed(0)
    mx.random.uniform(shape=(5,))
    np.testing.assert_array_equal(key_after_one, np.array(mx.random.state[0]))
    assert not np.array_equal(first, second)


def test_random_with_key_argument():
    def fn(x, key):
        return x + mx.random.normal(x.shape, key=key)

    f = mx.compile(fn)
    x = mx.zeros((4, 3))
    for k in range(3):
        key = mx.random.key(k)
        np.testing.assert_array_equal(np.array(f(x, key)), np.array(fn(x, key)))


def test_nested_compiled_functions_share_captured_state():
    state = {"count": mx.array(0.0)}
    capture = functools.partial(mx.compile, inputs=state, outputs=state)

    @capture
    def inner(x):
        state["count"] = state["count"] + x.sum()
        return x * 2

    outer = capture(lambda x: inner(x) + inner(x * 0.5))
    for i in range(1, 4):
        np.testing.assert_array_equal(np.array(outer(mx.ones((3,)))), np.full(3, 3.0, np.float32))
        assert state["count"].item() == 4.5 * i


def test_nested_compiled_functions_advance_the_captured_key():
    state = [mx.random.state]
    capture = functools.partial(mx.compile, inputs=state, outputs=state)
    draw = capture(uniform_plus)
    twice = capture(lambda x: draw(x) + draw(x))
    x = mx.zeros((4,))
    mx.random.seed(0)
    got = [np.array(twice(x)) for _ in range(2)]
    mx.random.seed(0)
    for g in got:
        np.testing.assert_array_equal(g, np.array(uniform_plus(x) + uniform_plus(x)))


@pytest.mark.nuvec_only  # MLX 0.32 crashes (SIGSEGV)
def test_outputs_state_changed_outside_raises():
    state = {"a": mx.zeros((2,))}

    def fn(x):
        state["a"] = x * 2
        return x

    f = mx.compile(fn, outputs=state)
    f(mx.ones((2,)))
    state["b"] = mx.zeros((2,))  # not traced: the replay cannot fill it
    with pytest.raises(ValueError, match="outputs"):
        f(mx.ones((2,)))
