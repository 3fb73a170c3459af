"""custom_function (its vjp / jvp overrides, and its default behaviour without them) and
checkpoint (equal gradients, fewer live intermediates, the same random numbers on
recomputation)."""

import gc

import numpy as np
import pytest

from _impl import mx
from helpers import seeded_rng


def _f32(a):
    return mx.array(np.asarray(a, dtype=np.float32))


def _close(got, want, rtol=2e-5, atol=2e-6, msg=""):
    assert hasattr(got, "shape") and not isinstance(got, np.ndarray), f"{msg}: not an array"
    np.testing.assert_allclose(np.array(got), np.asarray(want), rtol=rtol, atol=atol, err_msg=msg)


X = np.array([0.5, -1.0, 2.0])
Y = np.array([2.0, 3.0, -0.5])


# ----------------------------------------------------------------------------- custom_function
def test_vjp_override_is_used_by_grad_and_vjp():
    calls = []

    @mx.custom_function
    def f(x, y):
        return mx.sin(x) * y

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        calls.append(len(primals))
        x, y = primals
        return cotangents * 100.0, cotangents * outputs * 1000.0

    x, y = _f32(X), _f32(Y)
    _close(f(x, y), np.sin(X) * Y)  # the forward is the function's
    gx, gy = mx.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)
    _close(gx, np.full(3, 100.0))
    _close(gy, 1000.0 * np.sin(X) * Y, rtol=1e-5)
    assert calls == [2]
    c = _f32([1.0, 2.0, -1.0])
    out, (vx, vy) = mx.vjp(f, [x, y], [c])
    _close(out[0], np.sin(X) * Y)
    _close(vx, 100.0 * np.array([1.0, 2.0, -1.0]))
    _close(vy, 1000.0 * np.array([1.0, 2.0, -1.0]) * np.sin(X) * Y, rtol=1e-5)


def test_vjp_override_receives_primals_cotangents_and_outputs():
    seen = {}

    @mx.custom_function
    def f(x, y):
        return x * y + 1.0

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        seen["primals"] = [np.array(p) for p in primals]
        seen["cot"] = np.array(cotangents)
        seen["out"] = np.array(outputs)
        return cotangents * primals[1], cotangents * primals[0]

    x, y = _f32(X), _f32(Y)
    gx, gy = mx.grad(lambda a, b: (f(a, b) * _f32([1.0, 2.0, 3.0])).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(seen["primals"][0], X)
    np.testing.assert_allclose(seen["primals"][1], Y)
    np.testing.assert_allclose(seen["cot"], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(seen["out"], X * Y + 1)
    _close(gx, Y * [1.0, 2.0, 3.0])
    _close(gy, X * [1.0, 2.0, 3.0])


def test_vjp_override_enters_the_chain_rule():
    @mx.custom_function
    def clip_grad(x):
        return x

    @clip_grad.vjp
    def clip_grad_vjp(primals, cotangents, outputs):
        return mx.clip(cotangents, -1.0, 1.0)

    x = _f32(X)
    # d/dx sum(10 * sin(clip_grad(x)) ** 2): cotangent into clip_grad is 20 sin cos, clipped
    g = mx.grad(lambda a: (10 * mx.sin(clip_grad(a)) ** 2).sum())(x)
    _close(g, np.clip(20 * np.sin(X) * np.cos(X), -1, 1), rtol=1e-5)
    # and a function applied after the gradient has been clipped still multiplies in
    g = mx.grad(lambda a: (clip_grad(a * 3) * 5).sum())(x)
    _close(g, np.full(3, 3.0))


def test_vjp_override_under_second_order():
    @mx.custom_function
    def f(x):
        return mx.exp(x)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent * output * 3  # output = f(x): its derivative goes through this rule again

    x = _f32(X)
    _close(mx.grad(lambda a: f(a).sum())(x), 3 * np.exp(X), rtol=1e-5)
    _close(mx.grad(lambda a: mx.grad(lambda b: f(b).sum())(a).sum())(x), 9 * np.exp(X), rtol=1e-5)


def test_jvp_override_is_used_by_jvp():
    @mx.custom_function
    def f(x, y):
        return mx.sin(x) * y

    @f.jvp
    def f_jvp(primals, tangents):
        tx, ty = tangents  # MLX gives None for an input that carries no tangent
        return tx * 7.0 + (0.0 if ty is None else ty * 11.0)

    x, y = _f32(X), _f32(Y)
    out, (t,) = mx.jvp(f, [x, y], [mx.ones_like(x), mx.zeros_like(y)])
    _close(out[0], np.sin(X) * Y)
    _close(t, np.full(3, 7.0))
    _, (t,) = mx.jvp(f, [x, y], [_f32([1.0, 0.0, 2.0]), _f32([0.0, 1.0, 1.0])])
    _close(t, [7.0, 11.0, 25.0])
    # inside a larger function: the chain rule applies around the override
    _, (t,) = mx.jvp(lambda a: mx.exp(f(a * 2, y)), [x], [mx.ones_like(x)])
    _close(t, np.exp(np.sin(2 * X) * Y) * 14.0, rtol=1e-5)


def test_jvp_override_receives_primals_and_tangents():
    seen = {}

    @mx.custom_function
    def f(x, y):
        return x * y

    @f.jvp
    def f_jvp(primals, tangents):
        assert len(primals) == 2 and len(tangents) == 2
        seen["p"] = [np.array(p) for p in primals]
        seen["t"] = [np.array(t) for t in tangents]
        return primals[0] * tangents[1] + primals[1] * tangents[0]

    x, y = _f32(X), _f32(Y)
    _, (t,) = mx.jvp(f, [x, y], [_f32(Y), _f32([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(seen["p"][0], X)
    np.testing.assert_allclose(seen["p"][1], Y)
    np.testing.assert_allclose(seen["t"][0], Y)
    np.testing.assert_allclose(seen["t"][1], [1.0, 2.0, 3.0])
    _close(t, X * [1.0, 2.0, 3.0] + Y * Y)


def test_one_input_rules_receive_the_arrays_themselves():
    @mx.custom_function
    def f(x):
        return x * x

    @f.vjp
    def f_vjp(primal, cotangent, output):
        return 2 * primal * cotangent

    @f.jvp
    def f_jvp(primal, tangent):
        return 2 * primal * tangent

    x = _f32(X)
    _close(mx.grad(lambda a: f(a).sum())(x), 2 * X)
    _, (t,) = mx.jvp(f, [x], [_f32(Y)])
    _close(t, 2 * X * Y)


def test_only_the_overridden_transform_changes():
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vjp
    def f_vjp(primals, cotangent, output):
        return cotangent * 100.0

    @mx.custom_function
    def g(x):
        return mx.sin(x)

    @g.jvp
    def g_jvp(primals, tangents):
        return tangents[0] * 100.0

    x = _f32(X)
    _, (t,) = mx.jvp(f, [x], [mx.ones_like(x)])
    _close(t, np.cos(X))  # f has no jvp override: the function's own derivative
    _close(mx.grad(lambda a: g(a).sum())(x), np.cos(X))  # g has no vjp override


def _plain2(x, y):
    return mx.sin(x) * mx.exp(y) + x * x * y


def test_without_overrides_equals_the_plain_function():
    f = mx.custom_function(_plain2)
    x, y = _f32(X), _f32(Y)
    _close(f(x, y), np.array(_plain2(x, y)))
    want = mx.grad(lambda a, b: _plain2(a, b).sum(), argnums=(0, 1))(x, y)
    got = mx.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)
    _close(got[0], np.array(want[0]), rtol=1e-6)
    _close(got[1], np.array(want[1]), rtol=1e-6)
    t = [_f32([1.0, -1.0, 0.5]), _f32([0.5, 2.0, 1.0])]
    _close(mx.jvp(f, [x, y], t)[1][0], np.array(mx.jvp(_plain2, [x, y], t)[1][0]), rtol=1e-6)
    # second order too
    h = lambda fn: mx.grad(lambda a: mx.grad(lambda b: fn(b, y).sum())(a).sum())(x)  # noqa: E731
    _close(h(f), np.array(h(_plain2)), rtol=1e-5)


def test_several_inputs_and_outputs():
    @mx.custom_function
    def f(x, y):
        return x * y, x + y

    @f.vjp
    def f_vjp(primals, cotangents, outputs):
        assert isinstance(cotangents, (tuple, list)) and len(cotangents) == 2
        assert isinstance(outputs, (tuple, list)) and len(outputs) == 2
        a, b = cotangents
        return a * 2 + b, a * 3

    @f.jvp
    def f_jvp(primals, tangents):
        tx, ty = tangents
        return tx * 5, ty * 6

    x, y = _f32(X), _f32(Y)
    outs = f(x, y)
    assert isinstance(outs, (tuple, list)) and len(outs) == 2
    _close(outs[0], X * Y)
    _close(outs[1], X + Y)
    ones = mx.ones_like(x)
    out, (gx, gy) = mx.vjp(f, [x, y], [ones, ones * 10])
    _close(gx, np.full(3, 12.0))
    _close(gy, np.full(3, 3.0))
    out, (t0, t1) = mx.jvp(f, [x, y], [ones, ones])
    _close(t0, np.full(3, 5.0))
    _close(t1, np.full(3, 6.0))
    # grad through one combination of both outputs
    gx, gy = mx.grad(lambda a, b: (lambda o: (o[0] + 10 * o[1]).sum())(f(a, b)), argnums=(0, 1))(
        x, y
    )
    _close(gx, np.full(3, 12.0))
    _close(gy, np.full(3, 3.0))


def test_several_outputs_used_separately():
    f = mx.custom_function(lambda u: (u * 2, mx.sin(u)))
    x = _f32(X)
    # each output reaches the loss on its own path
    _close(
        mx.grad(lambda a: (lambda o: o[0].sum() + o[1].sum())(f(a)))(x), 2 + np.cos(X), rtol=1e-5
    )
    # only one output is used
    _close(mx.grad(lambda a: f(a)[1].sum())(x), np.cos(X), rtol=1e-5)
    # and the same through checkpoint
    ck = mx.checkpoint(lambda u: (u * 2, mx.sin(u)))
    _close(mx.grad(lambda a: sum(o.sum() for o in ck(a)))(x), 2 + np.cos(X), rtol=1e-5)


def test_keyword_and_non_array_arguments_are_constants():
    f = mx.custom_function(lambda u, n, scale=1.0: u * n * scale)
    x = _f32(X)
    _close(mx.grad(lambda a: f(a, 3, scale=2.0).sum())(x), np.full(3, 6.0))


# ----------------------------------------------------------------------------- checkpoint
def _mlp(params, x):
    for w, b in params:
        x = mx.tanh(x @ w + b)
    return x


def _mlp_params(rng, sizes):
    return [
        (_f32(rng.standard_normal((m, n)) / np.sqrt(m)), _f32(rng.standard_normal(n) * 0.1))
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def test_checkpoint_gives_the_plain_functions_gradients_on_an_mlp():
    rng = seeded_rng("checkpoint-mlp")
    params = _mlp_params(rng, [5, 8, 8, 8, 3])
    x = _f32(rng.standard_normal((4, 5)))

    def loss(ps, inp, ck):
        h = inp
        for layer in ps:
            f = mx.checkpoint(_mlp) if ck else _mlp
            h = f([layer], h)
        return (h * h).sum()

    v0, g0 = mx.value_and_grad(lambda ps: loss(ps, x, False))(params)
    v1, g1 = mx.value_and_grad(lambda ps: loss(ps, x, True))(params)
    _close(v1, float(v0), rtol=1e-6)
    for (w0, b0), (w1, b1) in zip(g0, g1):
        _close(w1, np.array(w0), rtol=1e-5, atol=1e-6)
        _close(b1, np.array(b0), rtol=1e-5, atol=1e-6)
    # the whole network as one checkpoint, differentiated with respect to the input
    gx0 = mx.grad(lambda inp: (_mlp(params, inp) ** 2).sum())(x)
    gx1 = mx.grad(lambda inp: (mx.checkpoint(_mlp)(params, inp) ** 2).sum())(x)
    _close(gx1, np.array(gx0), rtol=1e-5, atol=1e-6)


def test_checkpoint_under_jvp_and_second_order():
    f = lambda u: mx.sin(u) * u  # noqa: E731
    ck = mx.checkpoint(f)
    x = _f32(X)
    _close(ck(x), np.sin(X) * X)
    _, (t,) = mx.jvp(ck, [x], [_f32(Y)])
    _close(t, (np.sin(X) + X * np.cos(X)) * Y, rtol=1e-5)
    g2 = mx.grad(lambda a: mx.grad(lambda b: ck(b).sum())(a).sum())(x)
    _close(g2, 2 * np.cos(X) - X * np.sin(X), rtol=1e-5)
    # nested checkpoints
    ck2 = mx.checkpoint(lambda u: ck(ck(u)) * 2)
    g = mx.grad(lambda a: ck2(a).sum())(x)
    want = mx.grad(lambda a: (f(f(a)) * 2).sum())(x)
    _close(g, np.array(want), rtol=1e-5)


def test_checkpoint_with_explicit_random_key():
    key = mx.random.key(3)
    x = _f32(X)

    def f(u):
        return (u * mx.random.normal(u.shape, key=key)).sum()

    noise = np.array(mx.random.normal(x.shape, key=key))
    _close(mx.grad(mx.checkpoint(f))(x), noise)


@pytest.mark.nuvec_only  # MLX draws new numbers when it recomputes (and advances the state twice)
def test_random_inside_checkpoint_draws_the_same_numbers_on_recomputation():
    x = _f32(X)

    def f(u):
        n = mx.random.normal(u.shape)
        return (mx.sin(u) * n).sum()

    mx.random.seed(7)
    v_ck, g_ck = mx.value_and_grad(mx.checkpoint(f))(x)
    mx.eval(v_ck, g_ck)
    after_ck = np.array(mx.random.normal((4,)))

    mx.random.seed(7)
    v_plain, g_plain = mx.value_and_grad(f)(x)
    mx.eval(v_plain, g_plain)
    after_plain = np.array(mx.random.normal((4,)))

    mx.random.seed(7)
    noise = np.array(mx.random.normal(x.shape))

    _close(g_plain, np.cos(X) * noise, rtol=1e-5)
    _close(g_ck, np.array(g_plain), rtol=1e-6)
    _close(v_ck, float(v_plain), rtol=1e-6)
    # the checkpoint consumed as many random numbers as the plain function
    np.testing.assert_array_equal(after_ck, after_plain)
    # jvp too
    mx.random.seed(7)
    _, (t,) = mx.jvp(mx.checkpoint(f), [x], [mx.ones_like(x)])
    _close(t, float((np.cos(X) * noise).sum()), rtol=1e-5)


# Each layer keeps K intermediates alive for the backward pass (sin's input); checkpointed, only
# the layer's input stays and the K intermediates of one layer at a time are recomputed.
_N, _LAYERS, _K = 1 << 18, 10, 4


def _deep_chain_peak(checkpointed):
    ws = [mx.array(0.9 + 0.001 * i) for i in range(_LAYERS)]

    def layer(x, w):
        for _ in range(_K):
            x = mx.sin(x) * w
        return x

    f = mx.checkpoint(layer) if checkpointed else layer

    def loss(x):
        for w in ws:
            x = f(x, w)
        return x.sum()

    x = mx.random.normal((_N,), key=mx.random.key(0))
    mx.eval(x)
    gc.collect()
    mx.clear_cache()
    mx.reset_peak_memory()
    base = mx.get_active_memory()
    g = mx.grad(loss)(x)
    mx.eval(g)
    peak = mx.get_peak_memory() - base
    value = np.array(g[:8])
    del g
    return peak, value


def test_checkpoint_lowers_peak_memory():
    plain, g_plain = _deep_chain_peak(False)
    ck, g_ck = _deep_chain_peak(True)
    np.testing.assert_allclose(g_ck, g_plain, rtol=1e-5, atol=1e-6)
    one = 4 * _N
    # without checkpointing about _LAYERS * _K intermediates are alive at once
    assert plain >= _LAYERS * _K * one * 0.5, (plain, one)
    assert ck < 0.75 * plain, (
        f"checkpointed peak {ck / one:.1f} arrays, plain {plain / one:.1f} arrays"
    )
