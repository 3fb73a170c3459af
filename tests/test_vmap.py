"""vmap: every op of the gradient registry (tests/test_grad_registry.py) and of EXTRA below, mapped
over a batch, must equal stacking the op over the examples, for in_axes 0, 1, -1 and mixes with
None. `test_every_public_op_is_batched` keeps the coverage complete: every op the op registry
(python/nuvec/_registry.py) calls batchable is in one of these registries, and every other row
carries its reason (NOT_BATCHABLE is read from the rows), so an op (or a primitive under it) added
without a vmap rule fails the suite. Then: trees of in_axes / out_axes, nesting, composition with
grad / vjp / jvp, updates, random keys, custom rules and the errors.
"""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng
from op_registry import registry
from test_grad_registry import REGISTRY, Case

F64 = mx.float64
BATCH = 3
TOL = 1e-5 if IS_MLX else 1e-10  # MLX computes some float64 ops in float32


def _i32(x):
    return mx.astype(x, mx.int32)


def _ints(rng, shape, lo=-8, hi=8):
    return rng.integers(lo, hi, shape).astype(np.float64)


# Ops that are not differentiable (so not in REGISTRY) but must vmap: inputs are float64; the
# functions convert where an op needs integers or bools.
EXTRA = {
    "comparisons": Case(
        lambda x, y: [
            mx.equal(x, y),
            mx.not_equal(x, y),
            mx.greater(x, y),
            mx.greater_equal(x, y),
            mx.less(x, y),
            mx.less_equal(x, y),
        ],
        gen=lambda rng: [_ints(rng, (3, 4), -2, 2), _ints(rng, (4,), -2, 2)],
        covers=("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"),
    ),
    "predicates": Case(
        lambda x: [
            mx.isfinite(1 / x),
            mx.isinf(1 / x),
            mx.isnan(x / x),
            mx.isneginf(1 / x),
            mx.isposinf(1 / x),
        ],
        gen=lambda rng: [_ints(rng, (3, 4), -1, 2)],
        covers=("isfinite", "isinf", "isnan", "isneginf", "isposinf"),
    ),
    "logical": Case(
        lambda x, y: [
            mx.logical_and(x > 0, y > 0),
            mx.logical_or(x > 0, y > 0),
            mx.logical_not(x > 0),
            mx.logical_xor(x > 0, y),
        ],
        shapes=((3, 4), (3, 1)),
        covers=("logical_and", "logical_or", "logical_not", "logical_xor"),
    ),
    "all_any": Case(
        lambda x: [mx.all(x > 0, axis=1), mx.any(x > 0), mx.all(x > -3, keepdims=True)],
        covers=("all", "any"),
    ),
    "closeness": Case(
        lambda x, y: [mx.isclose(x, y), mx.allclose(x, y), mx.array_equal(x, y)],
        gen=lambda rng: [_ints(rng, (3, 4), 0, 2), _ints(rng, (3, 4), 0, 2)],
        covers=("isclose", "allclose", "array_equal"),
    ),
    "argmax": Case(
        lambda x: [mx.argmax(x, axis=1), mx.argmax(x), mx.argmax(x, axis=0, keepdims=True)]
    ),
    "argmin": Case(lambda x: [mx.argmin(x, axis=0), mx.argmin(x, axis=-1, keepdims=True)]),
    "argsort": Case(
        lambda x: mx.argsort(x, axis=1), gen=lambda rng: [rng.permutation(12).reshape(3, 4) * 1.0]
    ),
    "argpartition": Case(
        lambda x: mx.sort(mx.argpartition(x, 1, axis=0)[:2], axis=0),
        gen=lambda rng: [rng.permutation(12).reshape(3, 4) * 1.0],
    ),
    "bitwise": Case(
        lambda x, y: [
            mx.bitwise_and(_i32(x), _i32(y)),
            mx.bitwise_or(_i32(x), _i32(y)),
            mx.bitwise_xor(_i32(x), _i32(y)),
            mx.bitwise_invert(_i32(x)),
            mx.left_shift(_i32(x), _i32(mx.abs(y))),
            mx.right_shift(_i32(x), _i32(mx.abs(y))),
            mx.bitwise_left_shift(_i32(x), 1),
            mx.bitwise_right_shift(_i32(x), _i32(mx.abs(y))),
        ],
        gen=lambda rng: [_ints(rng, (3, 4)), _ints(rng, (4,), -3, 3)],
        covers=(
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_invert",
            "left_shift",
            "right_shift",
            "bitwise_left_shift",
            "bitwise_right_shift",
        ),
    ),
    "searchsorted": Case(
        lambda a, v: [mx.searchsorted(mx.sort(a), v), mx.searchsorted(mx.sort(a), v, side="right")],
        gen=lambda rng: [_ints(rng, (6,), -3, 3), _ints(rng, (2, 3), -4, 4)],
    ),
    "count_nonzero": Case(
        lambda x: [mx.count_nonzero(x > 0, axis=1), mx.count_nonzero(x, keepdims=True)]
    ),
    "stop_gradient": Case(lambda x: mx.stop_gradient(x) * 2),
    "fp8": Case(
        lambda x: [mx.to_fp8(x), mx.from_fp8(mx.to_fp8(x * 100), mx.float32)],
        covers=("to_fp8", "from_fp8"),
    ),
    "quantize": Case(
        lambda x: [*mx.quantize(x, 32, 4), mx.dequantize(*mx.quantize(x, 32, 4), 32, 4)],
        shapes=((2, 64),),
        covers=("quantize", "dequantize"),
    ),
    "grad": Case(lambda x: mx.grad(lambda a: mx.sum(mx.sin(a) * a))(x), covers=("grad",)),
    "value_and_grad": Case(
        lambda x, y: mx.value_and_grad(lambda a, b: mx.sum(a @ b))(x, y), shapes=((2, 3), (3, 2))
    ),
    "vjp": Case(lambda x, v: mx.vjp(lambda a: mx.exp(a), [x], [v])[1], shapes=((3, 4), (3, 4))),
    "jvp": Case(
        lambda x, t: mx.jvp(lambda a: mx.tanh(a) * a, [x], [t])[1], shapes=((3, 4), (3, 4))
    ),
    "vmap": Case(lambda x: mx.vmap(lambda r: mx.sum(r * r))(x)),
}

# Public ops that cannot be mapped, with the registry's reason.
NOT_BATCHABLE = {
    op.name: op.batchable for op in registry.OPS if op.public and op.batchable is not True
}

CASES = {**{f"grad:{k}": c for k, c in REGISTRY.items()}, **EXTRA}


def test_every_public_op_is_batched():
    covered = set()
    for key, case in CASES.items():
        covered.update((key.split(":")[-1],) if case.covers is None else case.covers)
    ops = {op.name: op for op in registry.OPS if op.public}
    ops.update({alias: ops[target] for alias, target in registry.ALIASES.items()})
    missing = sorted(n for n, op in ops.items() if op.batchable is True and n not in covered)
    assert not missing, f"ops the registry calls batchable with no vmap case: {missing}"
    both = sorted(covered & set(NOT_BATCHABLE))
    assert not both, f"vmap cases for ops the registry calls not batchable: {both}"
    stale = sorted(covered - set(ops) - set(registry.NON_OPS))
    assert not stale, f"names in the vmap cases that are not public names of the registry: {stale}"
    assert all(isinstance(r, str) and r for r in NOT_BATCHABLE.values())


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _np(a):
    return np.array(a.astype(F64) if a.dtype not in (mx.bool_, F64) else a)


def _examples(case, rng):
    """BATCH examples of the case's inputs (each drawn from its domain)."""
    return [case.inputs(rng) for _ in range(BATCH)]


def _axes(mode, examples):
    n = len(examples[0])
    if mode == "none_mix":
        return [None] + [0] * (n - 1)
    ax = {"0": 0, "1": 1, "-1": -1}[mode]
    return [ax if (ax != 1 or x.ndim >= 1) else 0 for x in examples[0]]


def _batched(examples, axes):
    """The inputs of vmap: examples stacked along each axis (or example 0 alone for None)."""
    out = []
    for i, ax in enumerate(axes):
        if ax is None:
            out.append(mx.array(examples[0][i], dtype=F64))
        else:
            out.append(mx.array(np.stack([e[i] for e in examples], axis=ax), dtype=F64))
    return out


def _loop(fn, examples, axes):
    """fn over the examples (a shared input is example 0's), each output stacked along axis 0."""
    results = []
    for e in examples:
        xs = [
            mx.array(examples[0][i] if ax is None else e[i], dtype=F64) for i, ax in enumerate(axes)
        ]
        results.append([_np(o) for o in _as_list(fn(*xs))])
    return [np.stack(col) for col in zip(*results)]


def _check(got, want, what):
    got = [_np(g) for g in _as_list(got)]
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what}: output {k} has shape {g.shape}, expected {w.shape}"
        assert g.dtype == w.dtype, f"{what}: output {k} has dtype {g.dtype}, expected {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=f"{what}: output {k}")


def _params():
    for name, case in CASES.items():
        n = len(case.shapes) if case.gen is None else len(case.gen(np.random.default_rng(0)))
        for mode in ("0", "1", "-1") + (("none_mix",) if n > 1 else ()):
            yield pytest.param(name, case, mode, id=f"{name}-{mode}")


@pytest.mark.nuvec_only  # MLX's vmap lacks rules for several of these ops
@pytest.mark.parametrize("name,case,mode", list(_params()))
def test_vmap_equals_stacking_the_examples(name, case, mode):
    rng = seeded_rng("vmap", name)
    examples = _examples(case, rng)
    axes = _axes(mode, examples)
    got = mx.vmap(case.fn, in_axes=tuple(axes))(*_batched(examples, axes))
    _check(got, _loop(case.fn, examples, axes), f"{name} (in_axes={axes})")


# ----------------------------------------------------------------------------- trees and axes
def _arr(rng, *shape):
    return mx.array(rng.standard_normal(shape), dtype=F64)


@pytest.mark.nuvec_only
def test_trees_of_in_axes_and_out_axes():
    rng = seeded_rng("vmap", "trees")
    params = {"w": _arr(rng, 4, 2), "b": _arr(rng, 2)}
    xs = [_arr(rng, 5, 4), _arr(rng, 4, 5)]  # examples along axis 0 and along axis 1

    def f(p, pair):
        y = pair[0] @ p["w"] + pair[1] @ p["w"] + p["b"]
        return {"y": y, "s": mx.sum(y)}, p["b"]

    out, b = mx.vmap(f, in_axes=(None, [0, 1]), out_axes=({"y": 1, "s": 0}, None))(params, xs)
    w, bias = np.array(params["w"]), np.array(params["b"])
    want = np.stack([np.array(xs[0])[i] @ w + np.array(xs[1])[:, i] @ w + bias for i in range(5)])
    np.testing.assert_allclose(np.array(out["y"]), want.T, rtol=1e-12)
    np.testing.assert_allclose(np.array(out["s"]), want.sum(axis=1), rtol=1e-12)
    assert b.shape == (2,)  # shared by every example: left unbatched with out_axes None


def test_negative_axes_and_an_unbatched_output_is_broadcast():
    rng = seeded_rng("vmap", "negative")
    x = _arr(rng, 3, 4, 5)
    out = mx.vmap(lambda r, c: (r * 2, c + 1), in_axes=(-2, None), out_axes=(-1, 0))(
        x, mx.ones((2,), dtype=F64)
    )
    np.testing.assert_allclose(np.array(out[0]), np.moveaxis(np.array(x) * 2, 1, -1))
    assert out[1].shape == (4, 2)
    np.testing.assert_array_equal(np.array(out[1]), np.full((4, 2), 2.0))


def test_nested_vmap_is_an_outer_product():
    rng = seeded_rng("vmap", "nested")
    a, b = _arr(rng, 3, 4), _arr(rng, 5, 4)
    dot = lambda u, v: mx.sum(u * v)  # noqa: E731
    got = mx.vmap(mx.vmap(dot, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(np.array(got), np.array(a) @ np.array(b).T, rtol=1e-12)
    # in_axes 1 at both levels: the inner level maps what is left of axis 1
    x = _arr(rng, 2, 3, 4)
    got = mx.vmap(mx.vmap(lambda r: mx.cumsum(r), in_axes=1), in_axes=1)(x)
    np.testing.assert_allclose(
        np.array(got), np.cumsum(np.array(x).transpose(1, 2, 0), axis=-1), rtol=1e-12
    )


# ----------------------------------------------------------------------------- with grad
def _mlp_loss(p, x, y):
    h = mx.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return mx.mean(mx.square(out - y))


def _mlp(rng):
    params = {
        "w1": _arr(rng, 6, 8) * 0.5,
        "b1": _arr(rng, 8),
        "w2": _arr(rng, 8, 3),
        "b2": _arr(rng, 3),
    }
    return params, _arr(rng, 7, 6), _arr(rng, 7, 3)


def test_per_example_gradients_match_a_loop():
    params, x, y = _mlp(seeded_rng("vmap", "per-example"))
    got = mx.vmap(mx.grad(_mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    for i in range(x.shape[0]):
        g = mx.grad(_mlp_loss)(params, x[i], y[i])
        for k in params:
            np.testing.assert_allclose(
                np.array(got[k][i]), np.array(g[k]), rtol=1e-10, atol=1e-12, err_msg=k
            )


def test_grad_of_vmap_and_jvp_through_vmap():
    params, x, y = _mlp(seeded_rng("vmap", "grad-of-vmap"))
    batched = lambda p: mx.sum(mx.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, x, y))  # noqa: E731
    looped = lambda p: sum(_mlp_loss(p, x[i], y[i]) for i in range(x.shape[0]))  # noqa: E731
    g, want = mx.grad(batched)(params), mx.grad(looped)(params)
    for k in params:
        np.testing.assert_allclose(
            np.array(g[k]), np.array(want[k]), rtol=TOL, atol=1e-12, err_msg=k
        )
    t = _arr(seeded_rng("vmap", "tangent"), 7, 6)
    f = lambda a: mx.vmap(lambda r: mx.sin(r) * mx.sum(r))(a)  # noqa: E731
    _, (tan,) = mx.jvp(f, [x], [t])
    _, (want_t,) = mx.jvp(lambda a: mx.sin(a) * mx.sum(a, axis=1, keepdims=True), [x], [t])
    np.testing.assert_allclose(np.array(tan), np.array(want_t), rtol=TOL)
    # vmap of jvp: per-example directional derivatives
    got = mx.vmap(lambda a, b: mx.jvp(lambda r: mx.exp(r) * r, [a], [b])[1][0])(x, t)
    np.testing.assert_allclose(
        np.array(got), np.exp(np.array(x)) * (1 + np.array(x)) * np.array(t), rtol=TOL
    )


# ----------------------------------------------------------------------------- updates
@pytest.mark.nuvec_only  # MLX updates only the first example
def test_updates_apply_to_every_example():
    rng = seeded_rng("vmap", "updates")
    x, v = _arr(rng, 3, 4, 5), _arr(rng, 3, 5)

    def setitem(r, u):
        r = r * 1.0
        r[mx.array([2, 0])] = u
        return r

    def reference(r, u):
        r = np.array(r)
        r[[2, 0]] = u
        return r

    got = mx.vmap(setitem)(x, v)
    np.testing.assert_array_equal(
        np.array(got), np.stack([reference(x[i], v[i]) for i in range(3)])
    )
    got = mx.vmap(lambda r: r.at[mx.array([1, 1])].add(1.0))(x)
    want = np.array(x).copy()
    want[:, 1] += 1
    want[:, 1] += 1  # in order, as the repeated index accumulates
    np.testing.assert_array_equal(np.array(got), want)
    idx = mx.array(np.array([[0], [2], [3]], dtype=np.int32))  # one start per example
    got = mx.vmap(lambda r, i: mx.slice_update(r, mx.zeros((2, 2), dtype=F64), i, (1,)))(x, idx)
    want = np.array(x).copy()
    for e, s in enumerate([0, 2, 3]):
        want[e, :2, s : s + 2] = 0
    np.testing.assert_array_equal(np.array(got), want)


# ----------------------------------------------------------------------------- random, custom
def test_random_draws_with_a_batch_of_keys_match_each_key():
    keys = mx.random.split(mx.random.key(7), 4)
    got = mx.vmap(lambda k: mx.random.normal((3, 2), key=k))(keys)
    want = np.stack([np.array(mx.random.normal((3, 2), key=keys[i])) for i in range(4)])
    np.testing.assert_array_equal(np.array(got), want)
    got = mx.vmap(lambda k: mx.random.randint(0, 10, (5,), key=k), in_axes=1, out_axes=1)(
        mx.transpose(keys)
    )
    want = np.stack(
        [np.array(mx.random.randint(0, 10, (5,), key=keys[i])) for i in range(4)], axis=1
    )
    np.testing.assert_array_equal(np.array(got), want)


@pytest.mark.nuvec_only
def test_custom_function_vmap_rule_is_honoured():
    calls = []

    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vmap
    def f_vmap(inputs, axes):
        calls.append(axes)
        return mx.cos(inputs), axes  # a different function: shows the rule is used

    x = _arr(seeded_rng("vmap", "custom"), 3, 4)
    got = mx.vmap(f, in_axes=1)(x)
    assert calls == [1]  # as MLX: a one-argument function's rule gets that argument alone
    np.testing.assert_allclose(np.array(got), np.cos(np.array(x)).T, rtol=1e-12)
    # without a rule the function itself is mapped, and its custom vjp still applies under vmap
    g = mx.custom_function(lambda a: a * a)
    g.vjp(lambda primals, cot, out: (cot * 10.0,))
    got = mx.vmap(mx.grad(lambda a: mx.sum(g(a))))(x)
    np.testing.assert_array_equal(np.array(got), np.full((3, 4), 10.0))
    np.testing.assert_allclose(np.array(mx.vmap(g)(x)), np.array(x) ** 2, rtol=1e-12)


# ----------------------------------------------------------------------------- errors
@pytest.mark.nuvec_only  # messages and paths are nuvec's
@pytest.mark.parametrize(
    "call,match",
    [
        (lambda f, x: mx.vmap(f, in_axes=(0, 0))(x), r"do not match the tree at '0'"),
        (
            lambda f, x: mx.vmap(lambda a: a["w"], in_axes=({"v": 0},))({"w": x}),
            r"do not match the tree at '0'",
        ),
        (
            lambda f, x: mx.vmap(lambda a: a[1], in_axes=([None, 3],))([x, x]),
            r"out of range .* at '0.1'",
        ),
        (
            lambda f, x: mx.vmap(lambda a, b: a + b["k"][0])(x, {"k": [x[:2]]}),
            r"'0' has 3, '1.k.0' has 2",
        ),
        (
            lambda f, x: mx.vmap(lambda a, b: a, in_axes=(None, None))(x, x),
            r"maps over no argument",
        ),
        (lambda f, x: mx.vmap(lambda a, s: a * s)(x, 2.0), r"argument at '1' is a float"),
        (lambda f, x: mx.vmap(f, out_axes=(0, 1))(x), r"out_axes do not match"),
        (lambda f, x: mx.vmap(f, out_axes=None)(x), r"out_axes is None .* differs"),
        (lambda f, x: mx.vmap(f, out_axes=3)(x), r"out_axes 3 is out of range"),
        (
            lambda f, x: mx.vmap(lambda a: mx.sum(a).item())(x),
            r"cannot be read inside the vmapped function",
        ),
    ],
)
def test_bad_input_raises_a_clear_error(call, match):
    x = mx.ones((3, 4))
    with pytest.raises((ValueError, IndexError, RuntimeError), match=match):
        out = call(lambda a: a * 2, x)
        mx.eval(out)


# ----------------------------------------------------------------------------- against MLX
_MLX_FUNS = {
    "elementwise": (lambda m: lambda a, b: m.sin(a) * b + m.exp(b), (0, 1)),
    "reduce": (
        lambda m: lambda a, b: m.sum(a, axis=0) + m.max(b, axis=-1, keepdims=True),
        (1, None),
    ),
    "matmul": (lambda m: lambda a, b: a @ b.T, (0, None)),
    "softmax": (lambda m: lambda a, b: m.softmax(a + b, axis=-1), (-1, 0)),
    "layout": (lambda m: lambda a, b: m.reshape(m.outer(a, b), (-1,))[2:7] * b[0], (1, 0)),
    "gather": (
        lambda m: lambda a, b: a[m.array([3, 0, 3])] + m.take(b, m.array([1, 2]), axis=0).sum(),
        (0, 0),
    ),
    "per_example_grad": (lambda m: m.grad(lambda a, b: m.sum(m.tanh(a @ b.T))), (0, None)),
}


@pytest.mark.parametrize("name", list(_MLX_FUNS))
def test_same_as_mlx(name):
    if IS_MLX:
        pytest.skip("compares nuvec with MLX")
    mlx = pytest.importorskip("mlx.core")
    make, in_axes = _MLX_FUNS[name]
    rng = seeded_rng("vmap-mlx", name)
    a, b = (
        rng.standard_normal((4, 4)).astype(np.float32),
        rng.standard_normal((4, 4)).astype(np.float32),
    )
    got = np.array(mx.vmap(make(mx), in_axes=in_axes)(mx.array(a), mx.array(b)))
    want = np.array(mlx.vmap(make(mlx), in_axes=in_axes)(mlx.array(a), mlx.array(b)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
