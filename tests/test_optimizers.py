"""Every optimizer, step by step over a nested tree (dicts, lists, a tuple, shapes from () to
3-D): against a float64 NumPy reference of its documented rule (optim_reference.py), and,
where MLX is installed, against mlx.optimizers on the same gradients: the parameters and the
whole state bit for bit where the rule is element-wise, within a few ulps where it reduces
(Adafactor's means) or multiplies matrices (Muon)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _impl import IS_MLX, mx
from optim_reference import REFERENCES, flatten, initial_state, random_tree

if IS_MLX:
    import mlx.optimizers as optim
else:
    import nuvec.optimizers as optim

STEPS = 5
# Which cases sum or multiply matrices (so differ from MLX by ulps, not bits).
REDUCING = ("Adafactor", "Muon")

CASES = [
    ("SGD", {}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"momentum": 0.8, "nesterov": True, "weight_decay": 0.05}),
    ("RMSprop", {}),
    ("RMSprop", {"alpha": 0.9, "eps": 1e-6}),
    ("Adagrad", {}),
    ("Adagrad", {"eps": 1e-4}),
    ("AdaDelta", {}),
    ("AdaDelta", {"rho": 0.5, "eps": 1e-4}),
    ("Adam", {}),
    ("Adam", {"bias_correction": True}),
    ("Adam", {"betas": (0.8, 0.99), "eps": 1e-6, "bias_correction": True}),
    ("AdamW", {}),
    ("AdamW", {"weight_decay": 0.1, "bias_correction": True}),
    ("Adamax", {}),
    ("Adamax", {"betas": (0.5, 0.9), "eps": 1e-3}),
    ("Lion", {}),
    ("Lion", {"weight_decay": 0.1, "betas": (0.8, 0.95)}),
    ("Adafactor", {}),
    ("Adafactor", {"relative_step": False, "beta_1": 0.9, "weight_decay": 0.01}),
    ("Adafactor", {"warmup_init": True, "scale_parameter": False, "clip_threshold": 0.5}),
    ("Muon", {}),
    ("Muon", {"nesterov": False, "weight_decay": 0.0, "momentum": 0.9, "ns_steps": 3}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for n, kw in CASES]
# The reference's names for the state MLX keeps per parameter.
STATE_NAMES = {
    "row": "exp_avg_sq_row",
    "col": "exp_avg_sq_col",
    "sq": "exp_avg_sq",
    "avg": "exp_avg",
}


def make(name, kw, lr=0.01):
    if name == "Adafactor" and kw.get("relative_step", True):
        return getattr(optim, name)(**kw)
    return getattr(optim, name)(learning_rate=lr, **kw)


def to_mx(tree, lib=mx):
    return rebuild_with(tree, lambda a: lib.array(a))


def rebuild_with(tree, fn):
    if isinstance(tree, dict):
        return {k: rebuild_with(v, fn) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(rebuild_with(v, fn) for v in tree)
    return fn(tree)


def as_numpy(tree):
    """{path: ndarray} of an (MLX or nuvec) tree, the state's scalars included."""
    return {k: np.asarray(v) for k, v in flatten(tree)}


def reference_run(name, kw, params, grads, lr_at=lambda t: 0.01):
    """(parameters, state) after each step of the float64 reference, flattened by path."""
    leaves = {k: v.astype(np.float64) for k, v in flatten(params)}
    states = {k: initial_state(name, kw, p) for k, p in leaves.items()}
    history = []
    for t, g in enumerate(grads, 1):
        for k, gk in flatten(g):
            leaves[k] = REFERENCES[name](
                kw, lr_at(t), t, gk.astype(np.float64), leaves[k], states[k]
            )
        state = {f"{k}.{STATE_NAMES.get(n, n)}": v for k, s in states.items() for n, v in s.items()}
        history.append((dict(leaves), state))
    return history


def framework_run(opt, params, grads, lib=mx):
    """(parameters, state) after each step of ``opt`` (an MLX or a nuvec optimizer)."""
    params = to_mx(params, lib)
    history = []
    for g in grads:
        params = opt.apply_gradients(to_mx(g, lib), params)
        lib.eval(params, opt.state)
        history.append((as_numpy(params), as_numpy(opt.state)))
    return history


def trees(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return random_tree(rng, dtype=dtype), [random_tree(rng, dtype=dtype) for _ in range(STEPS)]


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_matches_the_float64_reference(name, kw):
    params, grads = trees()
    got = framework_run(make(name, kw), params, grads)
    want = reference_run(name, kw, params, grads)
    for step, ((p, s), (p_ref, s_ref)) in enumerate(zip(got, want), 1):
        assert set(p) == set(p_ref)
        assert set(s) == set(s_ref) | {"step", "learning_rate"} - (
            {"learning_rate"} if name == "Adafactor" and kw.get("relative_step", True) else set()
        )
        assert int(s["step"]) == step and s["step"].dtype == np.uint64
        for k in p_ref:
            np.testing.assert_allclose(p[k], p_ref[k], rtol=2e-5, atol=2e-6, err_msg=k)
            assert p[k].dtype == np.float32 and p[k].shape == p_ref[k].shape
        for k in s_ref:
            np.testing.assert_allclose(s[k], s_ref[k], rtol=2e-5, atol=1e-6, err_msg=k)


def _assert_close_to_mlx(ours, theirs, name):
    assert set(ours) == set(theirs)
    for k in ours:
        assert ours[k].dtype == theirs[k].dtype and ours[k].shape == theirs[k].shape, k
        if name in REDUCING:  # a few ulps, of each value or of the array's largest
            ulp = float(np.finfo(np.float32).eps)
            atol = 4 * ulp * float(np.abs(theirs[k]).max(initial=0))
            np.testing.assert_allclose(ours[k], theirs[k], rtol=4 * ulp, atol=atol, err_msg=k)
        else:
            np.testing.assert_array_equal(ours[k], theirs[k], err_msg=k)


@pytest.mark.nuvec_only
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_matches_mlx(name, kw):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    params, grads = trees(1)
    ours = framework_run(make(name, kw), params, grads)
    theirs = framework_run(getattr(mlx_optim, name)(**make_kwargs(name, kw)), params, grads, mlx)
    for (p, s), (p_mlx, s_mlx) in zip(ours, theirs):
        _assert_close_to_mlx(p, p_mlx, name)
        _assert_close_to_mlx(s, s_mlx, name)


def make_kwargs(name, kw):
    lr = {} if name == "Adafactor" and kw.get("relative_step", True) else {"learning_rate": 0.01}
    return {**lr, **kw}


HALF_CASES = [c for c in CASES if c[0] in ("SGD", "Adam", "AdamW", "Lion", "RMSprop")]


@pytest.mark.nuvec_only
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("name", "kw"), HALF_CASES, ids=[IDS[CASES.index(c)] for c in HALF_CASES])
def test_half_precision_parameters_match_mlx(name, kw, dtype):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    params, grads = trees(2)

    def run(lib, opt):
        cast = getattr(lib, dtype)
        p = rebuild_with(params, lambda a: lib.array(a).astype(cast))
        out = []
        for g in grads:
            p = opt.apply_gradients(rebuild_with(g, lambda a: lib.array(a).astype(cast)), p)
            out.append({k: np.asarray(v.astype(lib.float32)) for k, v in flatten(p)})
        return out

    ours = run(mx, make(name, kw))
    theirs = run(mlx, getattr(mlx_optim, name)(**make_kwargs(name, kw)))
    for p, p_mlx in zip(ours, theirs):
        _assert_close_to_mlx(p, p_mlx, name)


SCHEDULED = [
    ("Adam", {"bias_correction": True}, lambda: optim.cosine_decay(0.1, 4, 0.01)),
    ("SGD", {"momentum": 0.9}, lambda: optim.exponential_decay(0.1, 0.5)),
    ("Lion", {}, lambda: optim.linear_schedule(0.0, 0.1, 3)),
]
CLOSED_FORMS = {  # the schedules above at optimizer step t (called with the step count t - 1)
    "Adam": lambda t: 0.01 + 0.5 * (1 + math.cos(math.pi * min(t - 1, 4) / 4)) * 0.09,
    "SGD": lambda t: 0.1 * 0.5 ** (t - 1),
    "Lion": lambda t: 0.1 * min(t - 1, 3) / 3,
}


@pytest.mark.parametrize(("name", "kw", "schedule"), SCHEDULED, ids=[s[0] for s in SCHEDULED])
def test_a_scheduled_learning_rate_is_read_before_each_step(name, kw, schedule):
    params, grads = trees(3)
    opt = getattr(optim, name)(learning_rate=schedule(), **kw)
    got = framework_run(opt, params, grads)
    want = reference_run(name, kw, params, grads, CLOSED_FORMS[name])
    for t, ((p, s), (p_ref, _)) in enumerate(zip(got, want), 1):
        np.testing.assert_allclose(s["learning_rate"], CLOSED_FORMS[name](t), rtol=1e-6, atol=1e-9)
        for k in p_ref:
            np.testing.assert_allclose(p[k], p_ref[k], rtol=2e-5, atol=2e-6, err_msg=k)


@pytest.mark.parametrize("form", ["float", "array", "setter"])
def test_learning_rate_as_a_float_an_array_or_set(form):
    params, grads = trees(4)
    lr = mx.array(0.01) if form == "array" else 0.01
    opt = optim.Adam(learning_rate=0.5 if form == "setter" else lr)
    if form == "setter":
        opt.learning_rate = 0.01
    assert isinstance(opt.learning_rate, mx.array) and opt.learning_rate.dtype == mx.float32
    got = framework_run(opt, params, grads)
    want = reference_run("Adam", {}, params, grads)
    for k in want[-1][0]:
        np.testing.assert_allclose(got[-1][0][k], want[-1][0][k], rtol=2e-5, atol=2e-6)


ELEMENTWISE = {  # name: hyperparameters drawn for it
    "SGD": lambda d: {
        "momentum": d(st.sampled_from([0.0, 0.5, 0.9])),
        "weight_decay": d(st.sampled_from([0.0, 1e-2])),
        "dampening": d(st.sampled_from([0.0, 0.1])),
    },
    "RMSprop": lambda d: {
        "alpha": d(st.floats(0.0, 0.999)),
        "eps": d(st.sampled_from([1e-8, 1e-3])),
    },
    "Adagrad": lambda d: {"eps": d(st.sampled_from([1e-8, 1e-2]))},
    "AdaDelta": lambda d: {"rho": d(st.floats(0.0, 0.99)), "eps": d(st.sampled_from([1e-6, 1e-3]))},
    "Adam": lambda d: {
        "betas": (d(st.floats(0.0, 0.99)), d(st.floats(0.0, 0.9999))),
        "bias_correction": d(st.booleans()),
    },
    "AdamW": lambda d: {
        "weight_decay": d(st.floats(0.0, 0.5)),
        "bias_correction": d(st.booleans()),
    },
    "Adamax": lambda d: {"betas": (d(st.floats(0.0, 0.99)), d(st.floats(0.0, 0.999)))},
    "Lion": lambda d: {"weight_decay": d(st.sampled_from([0.0, 0.1]))},
}


@pytest.mark.nuvec_only
@given(st.data())
def test_random_trees_and_hyperparameters_match_mlx_bit_for_bit(data):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    name = data.draw(st.sampled_from(sorted(ELEMENTWISE)))
    kw = ELEMENTWISE[name](data.draw)
    shapes = data.draw(st.lists(st.lists(st.integers(0, 4), max_size=3), min_size=1, max_size=3))
    lr = data.draw(st.sampled_from([1e-3, 0.1, 1.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    params = {f"p{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    grads = [{k: rng.standard_normal(v.shape).astype(np.float32) for k, v in params.items()}]
    grads *= data.draw(st.integers(1, 3))
    ours = framework_run(getattr(optim, name)(learning_rate=lr, **kw), params, grads)
    theirs = framework_run(getattr(mlx_optim, name)(learning_rate=lr, **kw), params, grads, mlx)
    for (p, s), (p_mlx, s_mlx) in zip(ours, theirs):
        _assert_close_to_mlx(p, p_mlx, name)
        _assert_close_to_mlx(s, s_mlx, name)
