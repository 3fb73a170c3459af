"""Optimizers on nn.Modules: `update(model, grads)` changes the model in place as
`model.update(apply_gradients(grads, model))`, the state mirrors `trainable_parameters()`,
frozen parameters stay put, a training loop with `nn.value_and_grad` follows MLX's step for step,
and a model checkpointed with `save_weights` and the optimizer state resumes bit for bit."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

if IS_MLX:
    import mlx.nn as nn
    import mlx.optimizers as optim
    import mlx.utils as utils
else:
    import nuvec.nn as nn
    import nuvec.optimizers as optim
    import nuvec.utils as utils

RNG_SEED = 0


def mlp(lib_nn=nn):
    return lib_nn.Sequential(lib_nn.Linear(6, 8), lib_nn.Linear(8, 8), lib_nn.Linear(8, 3))


def set_weights(model, weights, lib=mx):
    model.update(utils.tree_unflatten([(k, lib.array(v)) for k, v in weights.items()]))


def random_weights(model, seed=RNG_SEED):
    rng = np.random.default_rng(seed)
    flat = utils.tree_flatten(model.parameters())
    return {k: rng.standard_normal(tuple(v.shape)).astype(np.float32) * 0.5 for k, v in flat}


def data(seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((16, 6)).astype(np.float32), rng.standard_normal((16, 3)).astype(
        np.float32
    )


def flat_numpy(tree):
    return {k: np.asarray(v) for k, v in utils.tree_flatten(tree)}


def test_update_changes_the_model_in_place():
    model = mlp()
    set_weights(model, random_weights(model))
    before = flat_numpy(model.parameters())
    grads = utils.tree_map(lambda p: mx.ones_like(p) * 0.5, model.trainable_parameters())
    layer = model.layers[1]
    optim.SGD(learning_rate=0.1).update(model, grads)
    assert model.layers[1] is layer and isinstance(layer, nn.Linear)
    after = flat_numpy(model.parameters())
    assert set(after) == set(before)
    for k in before:
        np.testing.assert_array_equal(after[k], before[k] - np.float32(0.1) * np.float32(0.5))


def test_state_mirrors_the_trainable_parameters():
    model = nn.Linear(2, 2)
    opt = optim.SGD(learning_rate=1e-1, momentum=0.9)
    opt.init(model.trainable_parameters())
    assert list(opt.state.keys()) == ["step", "learning_rate", "weight", "bias"]  # MLX's example
    seq = mlp()
    adam = optim.Adam(learning_rate=1e-3)
    adam.init(seq.trainable_parameters())
    assert isinstance(adam.state["layers"], list) and len(adam.state["layers"]) == 3
    assert set(adam.state["layers"][2]) == {"weight", "bias"}
    assert adam.state["layers"][2]["weight"]["m"].shape == (3, 8)


def test_frozen_parameters_are_not_updated():
    model = mlp()
    set_weights(model, random_weights(model))
    model.layers[0].freeze()
    x, y = data()
    before = flat_numpy(model.parameters())

    def loss(x, y):
        return ((model(x) - y) ** 2).mean()

    _, grads = nn.value_and_grad(model, loss)(mx.array(x), mx.array(y))
    assert "weight" not in grads["layers"][0]
    opt = optim.Adam(learning_rate=1e-2)
    opt.update(model, grads)
    after = flat_numpy(model.parameters())
    for k in before:
        changed = not np.array_equal(before[k], after[k])
        assert changed == (not k.startswith("layers.0.")), k


def train(lib, lib_nn, lib_optim, weights, steps, opt=None, model=None):
    """(model, optimizer, losses) after `steps` AdamW steps with a cosine schedule."""
    if model is None:
        model = mlp(lib_nn)
        set_weights(model, weights, lib)
    if opt is None:
        opt = lib_optim.AdamW(learning_rate=lib_optim.cosine_decay(1e-2, 20), weight_decay=0.05)
    x, y = (lib.array(a) for a in data())

    def loss(x, y):
        return ((model(x) - y) ** 2).mean()

    step = lib_nn.value_and_grad(model, loss)
    losses = []
    for _ in range(steps):
        value, grads = step(x, y)
        grads, _ = lib_optim.clip_grad_norm(grads, 5.0)
        opt.update(model, grads)
        lib.eval(model.parameters(), opt.state)
        losses.append(value.item())
    return model, opt, losses


def test_training_loop_lowers_the_loss():
    model = mlp()
    _, _, losses = train(mx, nn, optim, random_weights(model), 15)
    assert losses[-1] < 0.7 * losses[0]


@pytest.mark.nuvec_only
def test_training_loop_follows_mlx():
    mlx = pytest.importorskip("mlx.core")
    mlx_nn = pytest.importorskip("mlx.nn")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    weights = random_weights(mlp())
    ours, _, our_losses = train(mx, nn, optim, weights, 8)
    theirs, _, their_losses = train(mlx, mlx_nn, mlx_optim, weights, 8)
    # The matrix products sum in another order than MLX's: ulps, not bits.
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    a, b = flat_numpy(ours.parameters()), flat_numpy(theirs.parameters())
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_resume_from_save_weights_and_the_state_is_bitwise(tmp_path):
    weights = random_weights(mlp())
    full, _, full_losses = train(mx, nn, optim, weights, 6)
    half, opt, losses = train(mx, nn, optim, weights, 3)
    half.save_weights(str(tmp_path / "model.safetensors"))
    mx.save_safetensors(str(tmp_path / "opt.safetensors"), dict(utils.tree_flatten(opt.state)))

    model = mlp()
    model.load_weights(str(tmp_path / "model.safetensors"))
    resumed_opt = optim.AdamW(learning_rate=optim.cosine_decay(1e-2, 20), weight_decay=0.05)
    resumed_opt.state = utils.tree_unflatten(
        list(mx.load(str(tmp_path / "opt.safetensors")).items())
    )
    resumed, _, more = train(mx, nn, optim, None, 3, opt=resumed_opt, model=model)
    assert losses + more == full_losses
    a, b = flat_numpy(full.parameters()), flat_numpy(resumed.parameters())
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
