"""nn.MultiHeadAttention and the Transformer layers and stacks: parameters, outputs against float64
NumPy references written from the formulas, against mlx.nn and torch.nn.MultiheadAttention with
copied weights, gradients against finite differences, checkpointing, dropout and errors."""

import importlib

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng

nn = importlib.import_module("mlx.nn" if IS_MLX else "nuvec.nn")
utils = importlib.import_module("mlx.utils" if IS_MLX else "nuvec.utils")


# ----------------------------------------------------------------------------- references
def _linear(p, prefix, x):
    y = x @ p[prefix + ".weight"].T
    return y + p[prefix + ".bias"] if prefix + ".bias" in p else y


def _softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mha_ref(p, q, k, v, mask, num_heads, prefix=""):
    """Multi-head attention in float64: project, split heads, softmax(q k^T / sqrt(d) + mask) v, merge, project."""

    def heads(x):
        return x.reshape(x.shape[:2] + (num_heads, -1)).transpose(0, 2, 1, 3)

    q = heads(_linear(p, prefix + "query_proj", q))
    k = heads(_linear(p, prefix + "key_proj", k))
    v = heads(_linear(p, prefix + "value_proj", v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if isinstance(mask, str):  # "causal": aligned to the last key
        lq, lk = s.shape[-2:]
        mask = np.arange(lq)[:, None] + (lk - lq) >= np.arange(lk)[None]
    if mask is not None and mask.dtype == bool:
        s = np.where(mask, s, np.finfo(np.float64).min)
    elif mask is not None:
        s = s + mask
    o = _softmax(s) @ v
    o = o.transpose(0, 2, 1, 3).reshape(o.shape[0], o.shape[2], -1)
    return _linear(p, prefix + "out_proj", o)


def layer_norm_ref(p, prefix, x, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p[prefix + ".weight"] + p[prefix + ".bias"]


def _relu_np(x):
    return np.maximum(x, 0)


def _block(p, pre, ln, norm_first, x, f):
    """Residual block: pre-norm x + f(ln(x)), or post-norm ln(x + f(x))."""
    if norm_first:
        return x + f(layer_norm_ref(p, pre + ln, x))
    return layer_norm_ref(p, pre + ln, x + f(x))


def _mlp_ref(p, pre, act):
    return lambda y: _linear(p, pre + "linear2", act(_linear(p, pre + "linear1", y)))


def encoder_layer_ref(p, x, mask, heads, norm_first=True, act=_relu_np, pre=""):
    x = _block(
        p, pre, "ln1", norm_first, x, lambda y: mha_ref(p, y, y, y, mask, heads, pre + "attention.")
    )
    return _block(p, pre, "ln2", norm_first, x, _mlp_ref(p, pre, act))


def decoder_layer_ref(p, x, mem, x_mask, mem_mask, heads, norm_first=True, act=_relu_np, pre=""):
    x = _block(
        p,
        pre,
        "ln1",
        norm_first,
        x,
        lambda y: mha_ref(p, y, y, y, x_mask, heads, pre + "self_attention."),
    )
    x = _block(
        p,
        pre,
        "ln2",
        norm_first,
        x,
        lambda y: mha_ref(p, y, mem, mem, mem_mask, heads, pre + "cross_attention."),
    )
    return _block(p, pre, "ln3", norm_first, x, _mlp_ref(p, pre, act))


def encoder_ref(p, n, x, mask, heads, norm_first=True, act=_relu_np, pre=""):
    for i in range(n):
        x = encoder_layer_ref(p, x, mask, heads, norm_first, act, f"{pre}layers.{i}.")
    return layer_norm_ref(p, pre + "ln", x)


def decoder_ref(p, n, x, mem, x_mask, mem_mask, heads, norm_first=True, act=_relu_np, pre=""):
    for i in range(n):
        x = decoder_layer_ref(
            p, x, mem, x_mask, mem_mask, heads, norm_first, act, f"{pre}layers.{i}."
        )
    return layer_norm_ref(p, pre + "ln", x)


# ----------------------------------------------------------------------------- helpers
def _params_np(model):
    return {k: np.array(v, dtype=np.float64) for k, v in utils.tree_flatten(model.parameters())}


def _arr(a):
    """An array of a's dtype (a float64 ndarray would otherwise become float32, as in MLX)."""
    if a.dtype == bool:
        return mx.array(a)
    return mx.array(a, dtype=mx.float64 if a.dtype == np.float64 else mx.float32)


def _mask_arg(mask):
    return mask if mask is None or isinstance(mask, str) else _arr(mask)


def _close(got, want, rtol=1e-5, atol=1e-5, msg=""):
    assert tuple(got.shape) == want.shape, f"{msg}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(np.array(got), want, rtol=rtol, atol=atol, err_msg=msg)


def _copy_from_mlx(ref, model):
    import mlx.utils as mlx_utils

    flat = [(k, mx.array(np.array(v))) for k, v in mlx_utils.tree_flatten(ref.parameters())]
    model.update(utils.tree_unflatten(flat), strict=True) if not IS_MLX else model.update(
        utils.tree_unflatten(flat)
    )


def _to_mlx(a):
    import mlx.core as mlx_core

    return a if a is None or isinstance(a, str) else mlx_core.array(a)


# ----------------------------------------------------------------------------- MultiHeadAttention
B, LQ, LK = 2, 3, 5

# (constructor arguments, query/key/value feature sizes)
MHA_CONFIGS = {
    "plain": (dict(dims=8, num_heads=2), (8, 8, 8)),
    "one-head-bias": (dict(dims=6, num_heads=1, bias=True), (6, 6, 6)),
    "input-dims": (
        dict(dims=8, num_heads=4, query_input_dims=5, key_input_dims=3, value_input_dims=7),
        (5, 3, 7),
    ),
    "value-defaults-to-key": (dict(dims=8, num_heads=2, key_input_dims=3), (8, 3, 3)),
    "value-dims": (
        dict(dims=8, num_heads=2, value_dims=12, value_output_dims=5, bias=True),
        (8, 8, 8),
    ),
}


def _bool_mask(shape):
    m = seeded_rng("mask", shape).random(shape) < 0.6
    m[..., 0] = True  # most rows keep a key; one row below is fully masked
    m.reshape(-1, shape[-1])[-1] = False
    return m


# mask name -> builder(lq, lk)
MASKS = {
    "none": lambda lq, lk: None,
    "causal": lambda lq, lk: "causal",
    "bool": lambda lq, lk: _bool_mask((lq, lk)),
    "bool-per-head": lambda lq, lk: _bool_mask((B, 1, lq, lk)),
    "additive": lambda lq, lk: (
        seeded_rng("additive", lq, lk).standard_normal((lq, lk)).astype(np.float32)
    ),
    "additive-inf": lambda lq, lk: np.where(
        _bool_mask((lq, lk)) | (np.arange(lk) == 0), 0, -np.inf
    ).astype(np.float32),
}


def _mha_inputs(sizes, lq, lk, dtype=np.float32):
    rng = seeded_rng("mha inputs", sizes, lq, lk)
    q = rng.standard_normal((B, lq, sizes[0])).astype(dtype)
    k = rng.standard_normal((B, lk, sizes[1])).astype(dtype)
    v = rng.standard_normal((B, lk, sizes[2])).astype(dtype)
    return q, k, v


MHA_CASES = [(c, m, lk) for c in MHA_CONFIGS for m in MASKS for lk in (LQ, LK)]


def _mha_id(case):
    return f"{case[0]}-{case[1]}-lk{case[2]}"


@pytest.mark.parametrize("config", MHA_CONFIGS)
def test_mha_parameters(config):
    kw, (dq, dk, dv) = MHA_CONFIGS[config]
    m = nn.MultiHeadAttention(**kw)
    dims, vdims = kw["dims"], kw.get("value_dims", kw["dims"])
    out = kw.get("value_output_dims", dims)
    want = {
        "query_proj.weight": (dims, dq),
        "key_proj.weight": (dims, dk),
        "value_proj.weight": (vdims, dv),
        "out_proj.weight": (out, vdims),
    }
    if kw.get("bias"):
        want.update(
            {
                "query_proj.bias": (dims,),
                "key_proj.bias": (dims,),
                "value_proj.bias": (vdims,),
                "out_proj.bias": (out,),
            }
        )
    got = {k: tuple(v.shape) for k, v in utils.tree_flatten(m.parameters())}
    assert got == want
    assert m.num_heads == kw["num_heads"]


@pytest.mark.parametrize("case", MHA_CASES, ids=_mha_id)
def test_mha_matches_numpy_reference(case):
    config, mask_name, lk = case
    kw, sizes = MHA_CONFIGS[config]
    m = nn.MultiHeadAttention(**kw)
    q, k, v = _mha_inputs(sizes, LQ, lk)
    mask = MASKS[mask_name](LQ, lk)
    want = mha_ref(
        _params_np(m),
        q.astype(np.float64),
        k.astype(np.float64),
        v.astype(np.float64),
        mask,
        kw["num_heads"],
    )
    _close(m(_arr(q), _arr(k), _arr(v), mask=_mask_arg(mask)), want, msg=_mha_id(case))


@pytest.mark.parametrize("case", MHA_CASES, ids=_mha_id)
def test_mha_matches_mlx(case):
    mnn = pytest.importorskip("mlx.nn")
    config, mask_name, lk = case
    kw, sizes = MHA_CONFIGS[config]
    ref = mnn.MultiHeadAttention(**kw)
    m = nn.MultiHeadAttention(**kw)
    _copy_from_mlx(ref, m)
    q, k, v = _mha_inputs(sizes, LQ, lk)
    mask = MASKS[mask_name](LQ, lk)
    want = np.array(ref(_to_mlx(q), _to_mlx(k), _to_mlx(v), mask=_to_mlx(mask)))
    _close(
        m(_arr(q), _arr(k), _arr(v), mask=_mask_arg(mask)),
        want,
        rtol=1e-5,
        atol=1e-6,
        msg=_mha_id(case),
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_mha_half_precision_matches_mlx(dtype):
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core

    ref = mnn.MultiHeadAttention(8, 2, bias=True)
    m = nn.MultiHeadAttention(8, 2, bias=True)
    _copy_from_mlx(ref, m)
    ref.set_dtype(getattr(mlx_core, dtype))
    m.set_dtype(getattr(mx, dtype))
    q, k, v = _mha_inputs((8, 8, 8), LQ, LK)
    mask = MASKS["bool"](LQ, LK)
    want = ref(
        *(_to_mlx(a).astype(getattr(mlx_core, dtype)) for a in (q, k, v)), mask=_to_mlx(mask)
    )
    got = m(*(_arr(a).astype(getattr(mx, dtype)) for a in (q, k, v)), mask=_arr(mask))
    assert got.dtype == getattr(mx, dtype)
    tol = 1e-2 if dtype == "float16" else 5e-2
    np.testing.assert_allclose(
        np.array(got.astype(mx.float32)),
        np.array(want.astype(mlx_core.float32)),
        rtol=tol,
        atol=tol,
    )


# PyTorch projects queries from embed_dim features and values back to embed_dim.
@pytest.mark.parametrize("config", ["plain", "one-head-bias", "value-defaults-to-key"])
@pytest.mark.parametrize("mask_name", ["none", "bool", "additive-inf"])
def test_mha_matches_torch(config, mask_name):
    torch = pytest.importorskip("torch")
    kw, sizes = MHA_CONFIGS[config]
    dims = kw["dims"]
    m = nn.MultiHeadAttention(**kw)
    p = _params_np(m)
    ref = torch.nn.MultiheadAttention(
        dims,
        kw["num_heads"],
        bias=kw.get("bias", False),
        kdim=sizes[1],
        vdim=sizes[2],
        batch_first=True,
    ).double()
    t = {k: torch.from_numpy(v) for k, v in p.items()}
    with torch.no_grad():
        if ref._qkv_same_embed_dim:
            ref.in_proj_weight.copy_(
                torch.cat([t["query_proj.weight"], t["key_proj.weight"], t["value_proj.weight"]])
            )
        else:
            for short, name in (("q", "query"), ("k", "key"), ("v", "value")):
                getattr(ref, f"{short}_proj_weight").copy_(t[f"{name}_proj.weight"])
        ref.out_proj.weight.copy_(t["out_proj.weight"])
        if kw.get("bias"):
            ref.in_proj_bias.copy_(
                torch.cat([t["query_proj.bias"], t["key_proj.bias"], t["value_proj.bias"]])
            )
            ref.out_proj.bias.copy_(t["out_proj.bias"])
    q, k, v = _mha_inputs(sizes, LQ, LK)
    mask = MASKS[mask_name](LQ, LK)
    if mask is not None and mask.dtype == bool:
        mask[-1, 0] = True  # PyTorch gives NaN on a fully masked row; MLX averages
    # PyTorch's boolean mask marks the positions NOT attended to.
    t_mask = (
        None
        if mask is None
        else torch.from_numpy(~mask if mask.dtype == bool else mask.astype(np.float64))
    )
    want, _ = ref(
        *(torch.from_numpy(a).double() for a in (q, k, v)), attn_mask=t_mask, need_weights=False
    )
    _close(
        m(_arr(q), _arr(k), _arr(v), mask=_mask_arg(mask)),
        want.detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [1, 4])
def test_create_additive_causal_mask(dtype, n):
    got = nn.MultiHeadAttention.create_additive_causal_mask(n, getattr(mx, dtype))
    assert got.dtype == getattr(mx, dtype) and tuple(got.shape) == (n, n)
    low = float(mx.finfo(getattr(mx, dtype)).min)
    want = np.where(np.arange(n)[:, None] < np.arange(n)[None], low, 0.0)
    np.testing.assert_array_equal(np.array(got.astype(mx.float32)), want.astype(np.float32))
    assert nn.MultiHeadAttention.create_additive_causal_mask(n).dtype == mx.float32


# ----------------------------------------------------------------------------- gradients
def _fd_grad(f, arrays, eps=1e-6):
    """Central differences of the scalar f() for every entry of every array (changed in place)."""
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


# MLX's float64 transcendental functions are only float32-accurate.
GRAD_RTOL = 1e-5 if IS_MLX else 1e-6


def _check_grads(model, np_forward, inputs, mx_forward):
    """Gradients of sum(w * model(inputs)) with respect to the parameters and inputs, against central differences."""
    model.set_dtype(mx.float64)
    p = _params_np(model)
    w = seeded_rng("grad weights", type(model).__name__).standard_normal(
        np_forward(p, *inputs).shape
    )

    def mx_loss(params, *xs):
        model.update(params)
        return (_arr(w) * mx_forward(*xs)).sum()

    argnums = tuple(range(len(inputs) + 1))
    grads = mx.grad(mx_loss, argnums=argnums)(model.parameters(), *(_arr(a) for a in inputs))
    keys = list(p)
    want = _fd_grad(
        lambda: float((w * np_forward(p, *inputs)).sum()), [p[k] for k in keys] + list(inputs)
    )
    flat = dict(utils.tree_flatten(grads[0]))
    got = [flat[k] for k in keys] + list(grads[1:])
    for label, g, ww in zip(keys + [f"input{i}" for i in range(len(inputs))], got, want):
        np.testing.assert_allclose(
            np.array(g), ww, rtol=GRAD_RTOL, atol=GRAD_RTOL / 10, err_msg=label
        )


@pytest.mark.parametrize("mask_name", ["none", "causal", "bool"])
def test_mha_gradients_match_finite_differences(mask_name):
    m = nn.MultiHeadAttention(4, 2, key_input_dims=3, bias=True)
    rng = seeded_rng("mha grad", mask_name)
    q, k, v = (
        rng.standard_normal((2, 2, 4)),
        rng.standard_normal((2, 3, 3)),
        rng.standard_normal((2, 3, 3)),
    )
    mask = MASKS[mask_name](2, 3)
    _check_grads(
        m,
        lambda p, q, k, v: mha_ref(p, q, k, v, mask, 2),
        (q, k, v),
        lambda q, k, v: m(q, k, v, mask=_mask_arg(mask)),
    )


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_layer_gradients_match_finite_differences(norm_first):
    layer = nn.TransformerEncoderLayer(4, 2, mlp_dims=6, norm_first=norm_first)
    x = seeded_rng("enc grad", norm_first).standard_normal((2, 3, 4))
    _check_grads(
        layer,
        lambda p, x: encoder_layer_ref(p, x, "causal", 2, norm_first),
        (x,),
        lambda x: layer(x, "causal"),
    )


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_layer_gradients_match_finite_differences(norm_first):
    layer = nn.TransformerDecoderLayer(4, 2, mlp_dims=5, norm_first=norm_first)
    rng = seeded_rng("dec grad", norm_first)
    x, mem = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 2, 4))
    _check_grads(
        layer,
        lambda p, x, mem: decoder_layer_ref(p, x, mem, "causal", None, 2, norm_first),
        (x, mem),
        lambda x, mem: layer(x, mem, "causal", None),
    )


# ----------------------------------------------------------------------------- layers and stacks
DIMS, HEADS = 8, 2


def _tanh_np(x):
    return np.tanh(x)


# name -> (constructor, forward(model, x, mem, masks), reference(p, x, mem, masks, norm_first, act))
def _enc_ref(p, x, mem, masks, nf, act):
    return encoder_layer_ref(p, x, masks[0], HEADS, nf, act)


def _dec_ref(p, x, mem, masks, nf, act):
    return decoder_layer_ref(p, x, mem, masks[0], masks[1], HEADS, nf, act)


def _encs_ref(p, x, mem, masks, nf, act):
    return encoder_ref(p, 2, x, masks[0], HEADS, nf, act)


def _decs_ref(p, x, mem, masks, nf, act):
    return decoder_ref(p, 2, x, mem, masks[0], masks[1], HEADS, nf, act)


def _transformer_ref(p, x, mem, masks, nf, act):
    memory = encoder_ref(p, 2, mem, masks[2], HEADS, nf, act, "encoder.")
    return decoder_ref(p, 1, x, memory, masks[0], masks[1], HEADS, nf, act, "decoder.")


def _build(lib, name, nf, act, **kw):
    args = dict(mlp_dims=12, norm_first=nf, **kw)
    if act is not None:
        args["activation"] = act
    if name == "TransformerEncoderLayer":
        return lib.TransformerEncoderLayer(DIMS, HEADS, **args)
    if name == "TransformerDecoderLayer":
        return lib.TransformerDecoderLayer(DIMS, HEADS, **args)
    if name in ("TransformerEncoder", "TransformerDecoder"):
        return getattr(lib, name)(2, DIMS, HEADS, **args)
    return lib.Transformer(DIMS, HEADS, num_encoder_layers=2, num_decoder_layers=1, **args)


def _forward(model, x, mem, masks):
    name = type(model).__name__
    if name in ("TransformerEncoderLayer", "TransformerEncoder"):
        return model(x, masks[0])
    if name in ("TransformerDecoderLayer", "TransformerDecoder"):
        return model(x, mem, masks[0], masks[1])
    return model(mem, x, masks[2], masks[0], masks[1])


STACK_REFS = {
    "TransformerEncoderLayer": _enc_ref,
    "TransformerDecoderLayer": _dec_ref,
    "TransformerEncoder": _encs_ref,
    "TransformerDecoder": _decs_ref,
    "Transformer": _transformer_ref,
}


def _additive_causal(n):
    return np.where(np.arange(n)[:, None] < np.arange(n)[None], np.finfo(np.float32).min, 0).astype(
        np.float32
    )


# (x mask, memory mask, source mask): numpy arrays or "causal" or None
MASK_SETS = {
    "causal": lambda: ("causal", None, None),
    "arrays": lambda: (
        _additive_causal(4),
        _bool_mask((4, 6)),
        seeded_rng("src mask").standard_normal((6, 6)).astype(np.float32),
    ),
}


STACK_CASES = [
    (name, nf, act, masks)
    for name in STACK_REFS
    for nf in (True, False)
    for act in ("default", "tanh")
    for masks in MASK_SETS
]


def _stack_id(case):
    return f"{case[0]}-{'pre' if case[1] else 'post'}-{case[2]}-{case[3]}"


def _stack_inputs():
    rng = seeded_rng("stack inputs")
    return rng.standard_normal((2, 4, DIMS)).astype(np.float32), rng.standard_normal(
        (2, 6, DIMS)
    ).astype(np.float32)


def _act(lib_mx, act):
    return None if act == "default" else lib_mx.tanh


@pytest.mark.parametrize("case", STACK_CASES, ids=_stack_id)
def test_stack_matches_numpy_reference(case):
    name, nf, act, mask_set = case
    model = _build(nn, name, nf, _act(mx, act))
    x, mem = _stack_inputs()
    masks = MASK_SETS[mask_set]()
    want = STACK_REFS[name](
        _params_np(model),
        x.astype(np.float64),
        mem.astype(np.float64),
        masks,
        nf,
        _relu_np if act == "default" else _tanh_np,
    )
    got = _forward(model, _arr(x), _arr(mem), [_mask_arg(m) for m in masks])
    _close(got, want, rtol=1e-4, atol=1e-5, msg=_stack_id(case))


@pytest.mark.parametrize("case", STACK_CASES, ids=_stack_id)
def test_stack_matches_mlx(case):
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core

    name, nf, act, mask_set = case
    ref = _build(mnn, name, nf, _act(mlx_core, act))
    model = _build(nn, name, nf, _act(mx, act))
    _copy_from_mlx(ref, model)
    x, mem = _stack_inputs()
    masks = MASK_SETS[mask_set]()
    want = np.array(_forward(ref, _to_mlx(x), _to_mlx(mem), [_to_mlx(m) for m in masks]))
    got = _forward(model, _arr(x), _arr(mem), [_mask_arg(m) for m in masks])
    _close(got, want, rtol=1e-5, atol=2e-6, msg=_stack_id(case))


@pytest.mark.parametrize("name", STACK_REFS)
def test_stack_parameters_and_initial_values_match_mlx(name):
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core
    import mlx.utils as mlx_utils

    mlx_core.random.seed(3)
    want = mlx_utils.tree_flatten(_build(mnn, name, True, None).parameters())
    mx.random.seed(3)
    got = utils.tree_flatten(_build(nn, name, True, None).parameters())
    assert [k for k, _ in got] == [k for k, _ in want]
    for (k, g), (_, w) in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), k
        np.testing.assert_array_equal(np.array(g), np.array(w), err_msg=k)


def test_defaults():
    layer = nn.TransformerEncoderLayer(8, 2)
    assert tuple(layer.linear1.weight.shape) == (32, 8)  # mlp_dims = 4 * dims
    assert layer.norm_first is True
    x = _arr(seeded_rng("relu default").standard_normal((1, 3, 8)).astype(np.float32))
    p = _params_np(layer)
    _close(
        layer(x, None),
        encoder_layer_ref(p, np.array(x, dtype=np.float64), None, 2),
        rtol=1e-4,
        atol=1e-5,
    )
    t = nn.Transformer()
    assert len(t.encoder.layers) == 6 and len(t.decoder.layers) == 6
    assert tuple(t.encoder.layers[0].attention.query_proj.weight.shape) == (512, 512)
    assert tuple(t.decoder.layers[5].linear1.weight.shape) == (2048, 512)
    assert t.encoder.checkpoint is False


def test_dropout_is_inactive_in_eval_mode_and_active_in_training():
    model = nn.TransformerEncoder(2, DIMS, HEADS, mlp_dims=12, dropout=0.5)
    x, _ = _stack_inputs()
    want = encoder_ref(_params_np(model), 2, x.astype(np.float64), None, HEADS)
    model.eval()
    _close(model(_arr(x), None), want, rtol=1e-4, atol=1e-5)
    model.train()
    got = np.array(model(_arr(x), None))
    assert np.abs(got - want).max() > 1e-2


def test_custom_encoder_and_decoder_are_used():
    class Scale(nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = mx.array([s])

        def __call__(self, x, *rest):
            return x * self.s + (rest[0] if len(rest) == 3 else 0)

    t = nn.Transformer(DIMS, HEADS, custom_encoder=Scale(2.0), custom_decoder=Scale(3.0))
    assert set(t.parameters()) == {"encoder", "decoder"}
    src, tgt = _stack_inputs()
    # decoder(tgt, memory, ...) = 3 * tgt + memory, memory = 2 * src
    got = t(_arr(tgt), _arr(tgt), None, None, None)
    _close(got, 5 * tgt.astype(np.float64), rtol=1e-6, atol=1e-6)
    t2 = nn.Transformer(DIMS, HEADS, num_decoder_layers=1, custom_encoder=Scale(1.0))
    assert isinstance(t2.decoder, nn.TransformerDecoder)


@pytest.mark.parametrize("name", ["TransformerEncoder", "TransformerDecoder", "Transformer"])
def test_checkpoint_gives_the_same_values_and_gradients(name):
    plain = _build(nn, name, True, None)
    ckpt = _build(nn, name, True, None, checkpoint=True)
    ckpt.update(plain.parameters())
    x, mem = _stack_inputs()
    masks = [_mask_arg(m) for m in MASK_SETS["causal"]()]

    def loss(model):
        def f(params, x):
            model.update(params)
            return (_forward(model, x, _arr(mem), masks) ** 2).sum()

        return mx.grad(f, argnums=(0, 1))(model.parameters(), _arr(x)), f(
            model.parameters(), _arr(x)
        )

    (gp, gx), v = loss(plain)
    (gp_c, gx_c), v_c = loss(ckpt)
    np.testing.assert_allclose(np.array(v_c), np.array(v), rtol=1e-6)
    np.testing.assert_allclose(np.array(gx_c), np.array(gx), rtol=1e-5, atol=1e-6)
    for (k, a), (_, b) in zip(utils.tree_flatten(gp_c), utils.tree_flatten(gp)):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6, err_msg=k)


# ----------------------------------------------------------------------------- errors
def _raises(fn, layer="MultiHeadAttention"):
    with pytest.raises(ValueError) as info:
        mx.eval(fn())
    if not IS_MLX and isinstance(info.value, mx.OpError):
        assert str(info.value).startswith(f"{layer}:"), str(info.value)
        assert info.value.filename == __file__
    return info.value


def test_heads_must_divide_dims():
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(10, 3)


@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 3, 8), (2, 5, 7), (2, 5, 8)),  # key features
        ((2, 3, 9), (2, 5, 8), (2, 5, 8)),  # query features
        ((2, 3, 8), (2, 5, 8), (2, 5, 6)),  # value features
        ((2, 3, 8), (2, 4, 8), (2, 5, 8)),  # keys and values differ in length
    ],
    ids=["keys", "queries", "values", "lengths"],
)
def test_mha_bad_shapes_raise(shapes):
    m = nn.MultiHeadAttention(8, 2)
    err = _raises(lambda: m(*(mx.zeros(s) for s in shapes)))
    if not IS_MLX:
        assert isinstance(err, mx.OpError)


@pytest.mark.nuvec_only  # MLX fails inside its transpose; nuvec names the layer
def test_mha_unbatched_input_raises_naming_the_layer():
    m = nn.MultiHeadAttention(8, 2)
    err = _raises(lambda: m(mx.zeros((3, 8)), mx.zeros((3, 8)), mx.zeros((3, 8))))
    assert isinstance(err, mx.OpError) and "rank-3" in str(err) and "queries" in str(err)


@pytest.mark.parametrize(
    "mask",
    [lambda: "foo", lambda: mx.zeros((3, 5), dtype=mx.float64), lambda: mx.zeros((4, 5))],
    ids=["bad-string", "float64-mask", "bad-shape"],
)
def test_mha_bad_mask_raises(mask):
    m = nn.MultiHeadAttention(8, 2)
    q, k = mx.zeros((2, 3, 8)), mx.zeros((2, 5, 8))
    _raises(lambda: m(q, k, k, mask=mask()))


def test_post_norm_encoder_layer_bad_input_raises_naming_attention():
    layer = nn.TransformerEncoderLayer(8, 2, norm_first=False)
    _raises(lambda: layer(mx.zeros((2, 3, 8 + 1)), None))


def test_training_dropout_matches_mlx_under_the_same_seed():
    mnn = pytest.importorskip("mlx.nn")
    import mlx.core as mlx_core

    ref = mnn.Transformer(DIMS, HEADS, 1, 1, mlp_dims=12, dropout=0.3)
    model = nn.Transformer(DIMS, HEADS, 1, 1, mlp_dims=12, dropout=0.3)
    _copy_from_mlx(ref, model)
    x, mem = _stack_inputs()
    mlx_core.random.seed(11)
    want = np.array(ref(_to_mlx(mem), _to_mlx(x), None, "causal", None))
    mx.random.seed(11)
    got = model(_arr(mem), _arr(x), None, "causal", None)
    _close(got, want, rtol=1e-5, atol=2e-6)
