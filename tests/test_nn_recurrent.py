"""nn.RNN, nn.GRU and nn.LSTM: parameters and their initial values, outputs against float64 NumPy
references written from the formulas, against mlx.nn and torch.nn with copied weights, gradients
against finite differences, and errors."""

import importlib
import itertools

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng

nn = importlib.import_module("mlx.nn" if IS_MLX else "nuvec.nn")
utils = importlib.import_module("mlx.utils" if IS_MLX else "nuvec.utils")


# ----------------------------------------------------------------------------- references
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _zeros_state(x, hidden_size):
    return np.zeros(x.shape[:-2] + (hidden_size,))


def rnn_ref(p, x, hidden=None, act=np.tanh):
    h = _zeros_state(x, p["Whh"].shape[0]) if hidden is None else hidden
    out = []
    for t in range(x.shape[-2]):
        h = act(x[..., t, :] @ p["Wxh"].T + h @ p["Whh"].T + p.get("bias", 0.0))
        out.append(h)
    return (np.stack(out, axis=-2),)


def gru_ref(p, x, hidden=None):
    size = p["Wh"].shape[1]
    h = _zeros_state(x, size) if hidden is None else hidden
    b = p.get("b", np.zeros(3 * size))
    bhn = p.get("bhn", np.zeros(size))
    wxr, wxz, wxn = np.split(p["Wx"], 3)
    whr, whz, whn = np.split(p["Wh"], 3)
    br, bz, bn = np.split(b, 3)
    out = []
    for t in range(x.shape[-2]):
        xt = x[..., t, :]
        r = _sigmoid(xt @ wxr.T + br + h @ whr.T)
        z = _sigmoid(xt @ wxz.T + bz + h @ whz.T)
        n = np.tanh(xt @ wxn.T + bn + r * (h @ whn.T + bhn))
        h = (1 - z) * n + z * h
        out.append(h)
    return (np.stack(out, axis=-2),)


def lstm_ref(p, x, hidden=None, cell=None):
    size = p["Wh"].shape[1]
    h = _zeros_state(x, size) if hidden is None else hidden
    c = _zeros_state(x, size) if cell is None else cell
    hs, cs = [], []
    for t in range(x.shape[-2]):
        gates = x[..., t, :] @ p["Wx"].T + h @ p["Wh"].T + p.get("bias", 0.0)
        i, f, g, o = np.split(gates, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        hs.append(h)
        cs.append(c)
    return np.stack(hs, axis=-2), np.stack(cs, axis=-2)


def _relu(x):
    return mx.maximum(x, 0)


# name -> (reference, state argument names, parameter shapes for D=3, H=4 with bias)
LAYERS = {
    "RNN": (rnn_ref, ("hidden",), {"Wxh": (4, 3), "Whh": (4, 4), "bias": (4,)}),
    "GRU": (gru_ref, ("hidden",), {"Wx": (12, 3), "Wh": (12, 4), "b": (12,), "bhn": (4,)}),
    "LSTM": (lstm_ref, ("hidden", "cell"), {"Wx": (16, 3), "Wh": (16, 4), "bias": (16,)}),
}
BIAS_NAMES = {"bias", "b", "bhn"}
D, H = 3, 4
# input shapes: batched, unbatched, one step, extra leading axis
SHAPES = [(2, 5, D), (5, D), (3, 1, D), (2, 2, 3, D)]
# which states are passed: none, each, all
STATE_SETS = [(), ("hidden",), ("cell",), ("hidden", "cell")]

CASES = [
    (name, bias, shape, states)
    for name, bias, shape, states in itertools.product(LAYERS, (True, False), SHAPES, STATE_SETS)
    if set(states) <= set(LAYERS[name][1])
]


def _case_id(case):
    name, bias, shape, states = case
    return f"{name}-bias{int(bias)}-{'x'.join(map(str, shape))}-{'+'.join(states) or 'nostate'}"


def _make(name, bias=True, **kw):
    return getattr(nn, name)(D, H, bias=bias, **kw)


def _params_np(layer):
    return {k: np.array(v, dtype=np.float64) for k, v in utils.tree_flatten(layer.parameters())}


def _inputs(case, dtype=np.float32):
    name, _, shape, states = case
    rng = seeded_rng("recurrent", _case_id(case))
    x = rng.standard_normal(shape).astype(dtype)
    st = {s: rng.standard_normal(shape[:-2] + (H,)).astype(dtype) for s in states}
    return x, st


def _arr(a):
    """An array of a's dtype (a float64 ndarray would otherwise become float32, as in MLX)."""
    return mx.array(a, dtype=mx.float64 if a.dtype == np.float64 else mx.float32)


def _run(layer, x, states):
    out = layer(_arr(x), **{k: _arr(v) for k, v in states.items()})
    return out if isinstance(out, tuple) else (out,)


def _close(got, want, rtol=1e-5, atol=1e-6, msg=""):
    assert len(got) == len(want), msg
    for g, w in zip(got, want):
        assert tuple(g.shape) == w.shape, f"{msg}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(np.array(g), w, rtol=rtol, atol=atol, err_msg=msg)


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_names_shapes_and_initial_range(name, bias):
    layer = _make(name, bias)
    shapes = {k: tuple(v.shape) for k, v in utils.tree_flatten(layer.parameters())}
    want = {k: s for k, s in LAYERS[name][2].items() if bias or k not in BIAS_NAMES}
    assert shapes == want
    assert list(shapes) == list(want)  # MLX's order, so flattened trees line up
    for k, v in utils.tree_flatten(layer.parameters()):
        assert v.dtype == mx.float32
        assert np.all(np.abs(np.array(v)) <= 1 / np.sqrt(H)), k


@pytest.mark.parametrize("name", LAYERS)
def test_initial_values_are_uniform(name):
    size = 64
    layer = getattr(nn, name)(size, size)
    w = np.concatenate([np.array(v).ravel() for _, v in utils.tree_flatten(layer.parameters())])
    scale = 1 / np.sqrt(size)
    assert np.abs(w).max() <= scale and np.abs(w).max() > 0.99 * scale
    assert abs(w.mean()) < 0.02 * scale
    np.testing.assert_allclose(w.std(), scale / np.sqrt(3), rtol=0.02)


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize("bias", [True, False])
def test_same_seed_gives_mlx_initial_values(name, bias):
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core
    import mlx.utils as mlx_utils

    mlx_core.random.seed(7)
    want = mlx_utils.tree_flatten(getattr(mnn, name)(D, H, bias=bias).parameters())
    mx.random.seed(7)
    got = utils.tree_flatten(_make(name, bias).parameters())
    assert [k for k, _ in got] == [k for k, _ in want]
    for (k, g), (_, w) in zip(got, want):
        np.testing.assert_array_equal(np.array(g), np.array(w), err_msg=k)


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
@pytest.mark.parametrize("bias", [True, False])
def test_extra_repr_matches_mlx(name, bias):
    mnn = pytest.importorskip("mlx.nn")
    assert _make(name, bias)._extra_repr() == getattr(mnn, name)(D, H, bias=bias)._extra_repr()


def test_rnn_rejects_a_nonlinearity_that_is_not_callable():
    with pytest.raises(ValueError, match="callable"):
        nn.RNN(D, H, nonlinearity=3)


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_numpy_reference(case):
    name, bias, _, _ = case
    layer = _make(name, bias)
    x, states = _inputs(case)
    want = LAYERS[name][0](
        _params_np(layer),
        x.astype(np.float64),
        **{k: v.astype(np.float64) for k, v in states.items()},
    )
    _close(_run(layer, x, states), want, msg=_case_id(case))


def test_rnn_custom_nonlinearity():
    layer = nn.RNN(D, H, nonlinearity=_relu)
    x = seeded_rng("rnn relu").standard_normal((2, 6, D)).astype(np.float32)
    want = rnn_ref(_params_np(layer), x.astype(np.float64), act=lambda v: np.maximum(v, 0))
    _close(_run(layer, x, {}), want)


@pytest.mark.nuvec_only  # MLX's float64 sigmoid is only float32-accurate
def test_float64_layer_computes_in_float64():
    layer = nn.LSTM(D, H)
    layer.set_dtype(mx.float64)
    x = seeded_rng("lstm f64").standard_normal((2, 4, D))
    got = _run(layer, x, {})
    assert all(g.dtype == mx.float64 for g in got)
    _close(got, lstm_ref(_params_np(layer), x), rtol=1e-12, atol=1e-13)


def _copy_params(src_params, dst):
    """Load a flattened parameter tree from another framework into dst."""
    flat = [(k, mx.array(np.array(v))) for k, v in src_params]
    dst.update(utils.tree_unflatten(flat))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_mlx(case):
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core
    import mlx.utils as mlx_utils

    name, bias, _, _ = case
    ref = getattr(mnn, name)(D, H, bias=bias)
    layer = _make(name, bias)
    _copy_params(mlx_utils.tree_flatten(ref.parameters()), layer)
    x, states = _inputs(case)
    want = ref(mlx_core.array(x), **{k: mlx_core.array(v) for k, v in states.items()})
    want = want if isinstance(want, tuple) else (want,)
    _close(
        _run(layer, x, states),
        [np.array(w) for w in want],
        rtol=2e-6,
        atol=2e-7,
        msg=_case_id(case),
    )


# ----------------------------------------------------------------------------- torch
def _torch_weights(name, p):
    """PyTorch's weight_ih/weight_hh/bias_ih/bias_hh for MLX's parameters.

    Gate orders agree (GRU r, z, n; LSTM i, f, g, o); MLX has one input-side bias, plus for the GRU
    the bias inside the reset product (bhn), which is PyTorch's b_hn.
    """
    w_ih = p.get("Wxh", p.get("Wx"))
    w_hh = p.get("Whh", p.get("Wh"))
    out = {"weight_ih_l0": w_ih, "weight_hh_l0": w_hh}
    if "bias" in p or "b" in p:
        b = p.get("bias", p.get("b"))
        b_hh = np.zeros_like(b)
        if name == "GRU":
            b_hh[-H:] = p["bhn"]
        out.update(bias_ih_l0=b, bias_hh_l0=b_hh)
    return out


@pytest.mark.parametrize("case", [c for c in CASES if len(c[2]) <= 3], ids=_case_id)
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    name, bias, shape, states = case
    layer = _make(name, bias)
    p = _params_np(layer)
    ref = getattr(torch.nn, name)(D, H, bias=bias, batch_first=True).double()
    with torch.no_grad():
        for k, v in _torch_weights(name, p).items():
            getattr(ref, k).copy_(torch.from_numpy(v))
    x, st = _inputs(case)
    zeros = np.zeros(shape[:-2] + (H,), np.float32)
    # PyTorch takes the states with a leading layer axis, and an LSTM needs both or neither.
    t_states = [torch.from_numpy(st.get(s, zeros)).double().unsqueeze(0) for s in LAYERS[name][1]]
    t_arg = None if not states else (tuple(t_states) if name == "LSTM" else t_states[0])
    out, last = ref(torch.from_numpy(x).double(), t_arg)
    got = _run(layer, x, st)
    np.testing.assert_allclose(np.array(got[0]), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    if name == "LSTM":
        np.testing.assert_allclose(
            np.array(got[1])[..., -1, :], last[1][0].detach().numpy(), rtol=1e-5, atol=1e-6
        )


# ----------------------------------------------------------------------------- gradients
def _fd_grad(f, arrays, eps=1e-6):
    """Central differences of the scalar f(arrays) for every entry of every array."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + eps
            hi = f()
            a[i] = old - eps
            lo = f()
            a[i] = old
            g[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


GRAD_CASES = [
    ("RNN", True, ("hidden",)),
    ("RNN", False, ()),
    ("GRU", True, ("hidden",)),
    ("GRU", True, ()),
    ("GRU", False, ("hidden",)),
    ("LSTM", True, ("hidden", "cell")),
    ("LSTM", False, ()),
]


@pytest.mark.parametrize("name,bias,states", GRAD_CASES)
def test_gradients_match_finite_differences(name, bias, states):
    layer = _make(name, bias)
    layer.set_dtype(mx.float64)
    rng = seeded_rng("recurrent grad", name, bias, states)
    x = rng.standard_normal((2, 3, D))
    st = {s: rng.standard_normal((2, H)) for s in states}
    p = _params_np(layer)
    ref, _, _ = LAYERS[name]
    weights = [rng.standard_normal((2, 3, H)) for _ in LAYERS[name][1]]

    def np_loss():
        return sum(float((w * o).sum()) for w, o in zip(weights, ref(p, x, **st)))

    def mx_loss(params, x_, st_):
        layer.update(params)
        out = layer(x_, **st_)
        out = out if isinstance(out, tuple) else (out,)
        return sum((_arr(w) * o).sum() for w, o in zip(weights, out))

    g_params, g_x, g_st = mx.grad(mx_loss, argnums=(0, 1, 2))(
        layer.parameters(), _arr(x), {k: _arr(v) for k, v in st.items()}
    )
    keys = list(p)
    want = _fd_grad(np_loss, [p[k] for k in keys] + [x] + [st[k] for k in st])
    got = [dict(utils.tree_flatten(g_params))[k] for k in keys] + [g_x] + [g_st[k] for k in st]
    for label, g, w in zip(keys + ["x"] + list(st), got, want):
        np.testing.assert_allclose(
            np.array(g), w, rtol=1e-6, atol=1e-7, err_msg=f"{name} d/d{label}"
        )


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize(
    "x_shape,states",
    [
        ((2, 5, D + 1), {}),
        # MLX fails with an IndexError inside the layer here
        pytest.param((D,), {}, marks=pytest.mark.nuvec_only),
        ((2, 0, D), {}),
        ((2, 5, D), {"hidden": (2, H + 1)}),
    ],
    ids=["features", "rank1", "empty", "hidden-size"],
)
def test_bad_input_raises(name, x_shape, states):
    layer = _make(name)
    args = {k: mx.zeros(s) for k, s in states.items()}
    with pytest.raises(ValueError) as info:
        mx.eval(layer(mx.zeros(x_shape), **args))
    if not IS_MLX:
        assert isinstance(info.value, mx.OpError)
        assert str(info.value).startswith(f"{name}:"), str(info.value)
        assert info.value.filename == __file__


def test_lstm_bad_cell_size_raises():
    with pytest.raises(ValueError) as info:
        mx.eval(nn.LSTM(D, H)(mx.zeros((2, 5, D)), cell=mx.zeros((2, H - 1))))
    if not IS_MLX:
        assert isinstance(info.value, mx.OpError) and "LSTM" in str(info.value)
