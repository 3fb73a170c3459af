"""The optimizer's state: its tree mirrors the parameters, it saves and restores through
tree_flatten + save_safetensors / load and through save_tree / load_into, and training resumed
from a checkpoint continues bit for bit as the uninterrupted run. Also MultiOptimizer, update
on a model, and the argument errors."""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from test_optimizers import CASES, IDS, as_numpy, make, to_mx, trees

if IS_MLX:
    import mlx.optimizers as optim
    import mlx.utils as utils
else:
    import nuvec.optimizers as optim
    import nuvec.utils as utils


def test_init_builds_a_state_tree_that_mirrors_the_parameters():
    params, _ = trees()
    opt = optim.Adam(learning_rate=0.1)
    opt.init(to_mx(params))
    state = opt.state
    assert set(state) == {"step", "learning_rate", *params}
    assert isinstance(state["blocks"], list) and isinstance(state["blocks"][1], tuple)
    assert set(state["layer"]["weight"]) == {"m", "v"}
    for path, leaf in as_numpy(params).items():
        for name in ("m", "v"):
            got = np.asarray(utils.tree_flatten(state, destination={})[f"{path}.{name}"])
            assert got.shape == leaf.shape and not got.any()
    assert state["step"].item() == 0 and state["step"].dtype == mx.uint64


def test_init_keeps_the_state_it_has():
    params, grads = trees()
    opt = optim.SGD(learning_rate=0.1, momentum=0.9)
    opt.apply_gradients(to_mx(grads[0]), to_mx(params))
    v = opt.state["layer"]["weight"]["v"]
    opt.init(to_mx(params))
    assert opt.state["layer"]["weight"]["v"] is v


def test_gradients_may_cover_part_of_the_parameters():
    params, grads = trees()
    opt = optim.SGD(learning_rate=0.5)
    out = opt.apply_gradients({"layer": to_mx(grads[0]["layer"])}, to_mx(params))
    assert set(out) == {"layer"}
    want = params["layer"]["bias"] - np.float32(0.5) * grads[0]["layer"]["bias"]
    np.testing.assert_array_equal(np.asarray(out["layer"]["bias"]), want)


def _run(opt, params, grads):
    for g in grads:
        params = opt.apply_gradients(to_mx(g), params)
        mx.eval(params, opt.state)
    return params


def _save_flat(path, tree):
    mx.save_safetensors(str(path), dict(utils.tree_flatten(tree)))


def _load_flat(path):
    return utils.tree_unflatten(list(mx.load(str(path)).items()))


def _resume_with_files(name, kw, tmp_path, save, restore):
    """(uninterrupted run, run checkpointed after 3 steps and resumed in a new optimizer)."""
    params, grads = trees(5)
    full = _run(make(name, kw), to_mx(params), grads)
    first = make(name, kw)
    half = _run(first, to_mx(params), grads[:3])
    save(tmp_path / "params.safetensors", half)
    save(tmp_path / "optimizer.safetensors", first.state)
    second = make(name, kw)
    restored_params = restore(tmp_path / "params.safetensors", to_mx(params), second)
    resumed = _run(second, restored_params, grads[3:])
    assert second.step.item() == len(grads)
    return as_numpy(full), as_numpy(resumed)


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_resumed_training_is_bitwise_the_uninterrupted_run(name, kw, tmp_path):
    def restore(params_path, params, opt):
        opt.state = _load_flat(tmp_path / "optimizer.safetensors")
        return _load_flat(params_path)

    full, resumed = _resume_with_files(name, kw, tmp_path, _save_flat, restore)
    assert set(full) == set(resumed)
    for k in full:
        np.testing.assert_array_equal(full[k], resumed[k], err_msg=k)


@pytest.mark.nuvec_only  # save_tree / load_into are nuvec's
@pytest.mark.parametrize("name", ["Adam", "SGD", "Adafactor", "Muon"])
def test_resume_through_save_tree_and_load_into(name, tmp_path):
    kw = {"momentum": 0.9} if name == "SGD" else {}

    def restore(params_path, params, opt):
        opt.init(params)  # the state's structure, filled by the file
        mx.load_into(opt.state, tmp_path / "optimizer.safetensors")
        return mx.load_into(params, params_path)

    full, resumed = _resume_with_files(name, kw, tmp_path, mx.save_tree, restore)
    for k in full:
        np.testing.assert_array_equal(full[k], resumed[k], err_msg=k)


@pytest.mark.nuvec_only
def test_load_into_refuses_a_state_of_another_shape(tmp_path):
    params, grads = trees()
    opt = optim.Adam(learning_rate=0.1)
    opt.init(to_mx(params))
    mx.save_tree(tmp_path / "s.safetensors", opt.state)
    other = optim.SGD(learning_rate=0.1, momentum=0.5)  # "v" only: "m" is unexpected
    other.init(to_mx(params))
    with pytest.raises(mx.OpError, match="unexpected"):
        mx.load_into(other.state, tmp_path / "s.safetensors")


def test_setting_the_state_keeps_its_arrays():
    params, grads = trees()
    opt = optim.Adam(learning_rate=0.1)
    _run(opt, to_mx(params), grads[:2])
    fresh = optim.Adam(learning_rate=0.1)
    fresh.state = opt.state
    assert fresh.step.item() == 2
    m = fresh.state["layer"]["weight"]["m"]
    fresh.apply_gradients(to_mx(grads[2]), to_mx(params))
    assert fresh.step.item() == 3 and fresh.state["layer"]["weight"]["m"] is not m


def _is_bias(path, g):
    return path.endswith("bias") or g.ndim < 2


def test_multi_optimizer_splits_by_filter():
    params, grads = trees(6)
    multi = optim.MultiOptimizer(
        [optim.SGD(learning_rate=0.1), optim.Adam(learning_rate=0.01)], [_is_bias]
    )
    out = _run(multi, to_mx(params), grads)
    flat = dict(utils.tree_flatten(to_mx(params)))
    for path, p in flat.items():  # each parameter alone, with its own optimizer
        opt = optim.SGD(learning_rate=0.1) if _is_bias(path, p) else optim.Adam(learning_rate=0.01)
        q = p
        for g in grads:
            gp = mx.array(dict(utils.tree_flatten(to_mx(g)))[path])
            q = opt.apply_gradients({"x": gp}, {"x": q})["x"]
        got = dict(utils.tree_flatten(out))[path]
        np.testing.assert_array_equal(np.asarray(got), np.asarray(q), err_msg=path)
    states = multi.state["states"]
    assert len(states) == 2 and "bias" in states[0]["layer"] and "weight" in states[1]["layer"]
    assert multi.learning_rate.item() == pytest.approx(0.1)
    multi.learning_rate = 0.5
    assert [o.learning_rate.item() for o in multi.optimizers] == [0.5, 0.5]


@pytest.mark.nuvec_only
def test_multi_optimizer_matches_mlx():
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    params, grads = trees(7)

    def run(lib, o):
        multi = o.MultiOptimizer(
            [o.Lion(learning_rate=0.01), o.AdamW(learning_rate=0.01)], [_is_bias]
        )
        p = to_mx(params, lib)
        for g in grads:
            p = multi.apply_gradients(to_mx(g, lib), p)
        return as_numpy(p), as_numpy(multi.state)

    (p, s), (p_mlx, s_mlx) = run(mx, optim), run(mlx, mlx_optim)
    assert set(p) == set(p_mlx) and set(s) == set(s_mlx)
    for k in p:
        np.testing.assert_array_equal(p[k], p_mlx[k], err_msg=k)
    for k in s:
        np.testing.assert_array_equal(s[k], s_mlx[k], err_msg=k)


def test_multi_optimizer_state_round_trip_and_errors():
    multi = optim.MultiOptimizer(
        [optim.SGD(learning_rate=0.1), optim.Adam(learning_rate=0.1)], [_is_bias]
    )
    multi.state = {"states": [{"step": mx.array(4, mx.uint64)}, {"step": mx.array(2, mx.uint64)}]}
    assert [o.step.item() for o in multi.optimizers] == [4, 2]
    with pytest.raises(ValueError):
        multi.state = {"states": [{}]}
    with pytest.raises(ValueError):
        optim.MultiOptimizer([optim.SGD(learning_rate=0.1)], [_is_bias])


def test_update_applies_the_step_to_a_model():
    params, grads = trees(8)
    model = to_mx(params)  # a dict is a model as far as update goes: it has .update
    opt = optim.SGD(learning_rate=0.25)
    opt.update(model, to_mx(grads[0]))
    want = params["head"] - np.float32(0.25) * grads[0]["head"]
    np.testing.assert_array_equal(np.asarray(model["head"]), want)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: optim.SGD(learning_rate=0.1, nesterov=True),
        lambda: optim.SGD(learning_rate=0.1, momentum=0.9, dampening=0.1, nesterov=True),
        lambda: optim.RMSprop(learning_rate=0.1, alpha=-0.1),
        lambda: optim.RMSprop(learning_rate=0.1, eps=0.0),
        lambda: optim.Adagrad(learning_rate=0.1, eps=0.0),
        lambda: optim.AdaDelta(learning_rate=0.1, rho=-1.0),
        lambda: optim.AdaDelta(learning_rate=0.1, eps=0.0),
        lambda: optim.Adam(learning_rate=0.1, betas=(1.0, 0.9)),
        lambda: optim.AdamW(learning_rate=0.1, betas=(0.9, -0.1)),
        lambda: optim.Adam(learning_rate=0.1, eps=-1.0),
        lambda: optim.Adamax(learning_rate=0.1, betas=(0.9, 1.5)),
        lambda: optim.Lion(learning_rate=0.1, betas=(1.0, 0.5)),
    ],
)
def test_bad_hyperparameters_raise_value_error(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.nuvec_only
def test_bad_hyperparameters_raise_op_error_naming_the_optimizer():
    with pytest.raises(mx.OpError, match="Adam: beta1 should be in"):
        optim.Adam(learning_rate=0.1, betas=(1.0, 0.9))


@pytest.mark.nuvec_only  # MLX calls apply_single(None, ...) and fails
def test_none_in_a_gradient_tree_is_skipped():
    opt = optim.SGD(learning_rate=0.5)
    out = opt.apply_gradients({"a": mx.ones((2,)), "b": None}, {"a": mx.ones((2,)), "b": None})
    assert out["b"] is None and out["a"].tolist() == [0.5, 0.5]


@pytest.mark.nuvec_only  # MLX fails later, on a KeyError or a TypeError
def test_parameters_must_be_a_dict_at_the_top():
    with pytest.raises(mx.OpError, match="must be a dict"):
        optim.Adam(learning_rate=0.1).apply_gradients([mx.ones((2,))], [mx.ones((2,))])
