"""vmap: every op of the gradient registry (tests/test_grad_registry.py) and of EXTRA below, mapped
over a batch, must equal stacking the op over the examples, for in_axes 0, 1, -1 and mixes with
None. `test_every_public_op_is_batched` keeps the coverage complete: every public callable is in
one of the registries or in NOT_BATCHABLE with a reason, so an op (or a primitive under it) added
without a vmap rule fails the suite. Then: trees of in_axes / out_axes, nesting, composition with
grad / vjp / jvp, updates, random keys, custom rules and the errors.
"""

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import seeded_rng
from test_grad_registry import REGISTRY, Case, _public_callables

F64 = mx.float64
BATCH = 3


def _i32(x):
    return mx.astype(x, mx.int32)


def _ints(rng, shape, lo=-8, hi=8):
    return rng.integers(lo, hi, shape).astype(np.float64)


# Ops that are not differentiable (so not in REGISTRY) but must vmap: inputs are float64; the
# functions convert where an op needs integers or bools.
EXTRA = {
    "comparisons": Case(lambda x, y: [mx.equal(x, y), mx.not_equal(x, y), mx.greater(x, y),
                                      mx.greater_equal(x, y), mx.less(x, y), mx.less_equal(x, y)],
                        gen=lambda rng: [_ints(rng, (3, 4), -2, 2), _ints(rng, (4,), -2, 2)],
                        covers=("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")),
    "predicates": Case(lambda x: [mx.isfinite(1 / x), mx.isinf(1 / x), mx.isnan(x / x), mx.isneginf(1 / x),
                                  mx.isposinf(1 / x)],
                       gen=lambda rng: [_ints(rng, (3, 4), -1, 2)],
                       covers=("isfinite", "isinf", "isnan", "isneginf", "isposinf")),
    "logical": Case(lambda x, y: [mx.logical_and(x > 0, y > 0), mx.logical_or(x > 0, y > 0),
                                  mx.logical_not(x > 0)],
                    shapes=((3, 4), (3, 1)), covers=("logical_and", "logical_or", "logical_not")),
    "all_any": Case(lambda x: [mx.all(x > 0, axis=1), mx.any(x > 0), mx.all(x > -3, keepdims=True)],
                    covers=("all", "any")),
    "closeness": Case(lambda x, y: [mx.isclose(x, y), mx.allclose(x, y), mx.array_equal(x, y)],
                      gen=lambda rng: [_ints(rng, (3, 4), 0, 2), _ints(rng, (3, 4), 0, 2)],
                      covers=("isclose", "allclose", "array_equal")),
    "argmax": Case(lambda x: [mx.argmax(x, axis=1), mx.argmax(x), mx.argmax(x, axis=0, keepdims=True)]),
    "argmin": Case(lambda x: [mx.argmin(x, axis=0), mx.argmin(x, axis=-1, keepdims=True)]),
    "argsort": Case(lambda x: mx.argsort(x, axis=1), gen=lambda rng: [rng.permutation(12).reshape(3, 4) * 1.0]),
    "argpartition": Case(lambda x: mx.sort(mx.argpartition(x, 1, axis=0)[:2], axis=0),
                         gen=lambda rng: [rng.permutation(12).reshape(3, 4) * 1.0]),
    "bitwise": Case(lambda x, y: [mx.bitwise_and(_i32(x), _i32(y)), mx.bitwise_or(_i32(x), _i32(y)),
                                  mx.bitwise_xor(_i32(x), _i32(y)), mx.bitwise_invert(_i32(x)),
                                  mx.left_shift(_i32(x), _i32(mx.abs(y))), mx.right_shift(_i32(x), _i32(mx.abs(y)))],
                    gen=lambda rng: [_ints(rng, (3, 4)), _ints(rng, (4,), -3, 3)],
                    covers=("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "left_shift",
                            "right_shift")),
    "stop_gradient": Case(lambda x: mx.stop_gradient(x) * 2),
    "grad": Case(lambda x: mx.grad(lambda a: mx.sum(mx.sin(a) * a))(x), covers=("grad",)),
    "value_and_grad": Case(lambda x, y: mx.value_and_grad(lambda a, b: mx.sum(a @ b))(x, y),
                           shapes=((2, 3), (3, 2))),
    "vjp": Case(lambda x, v: mx.vjp(lambda a: mx.exp(a), [x], [v])[1], shapes=((3, 4), (3, 4))),
    "jvp": Case(lambda x, t: mx.jvp(lambda a: mx.tanh(a) * a, [x], [t])[1], shapes=((3, 4), (3, 4))),
    "vmap": Case(lambda x: mx.vmap(lambda r: mx.sum(r * r))(x)),
}

NOT_BATCHABLE = {
    **{n: "creation op: no array input to map over" for n in
       ("arange", "linspace", "eye", "identity", "tri", "zeros", "ones")},
    "from_dlpack": "imports a buffer, not an op on arrays",
    "nonzero": "its output shape depends on the values (raises inside vmap)",
    "issubdtype": "dtype predicate, not an array op",
    **{n: "evaluation" for n in ("eval", "async_eval", "synchronize")},
    **{n: "memory management" for n in ("clear_cache", "get_active_memory", "get_cache_memory", "get_peak_memory",
                                        "reset_peak_memory", "set_cache_limit", "set_memory_limit")},
    **{n: "devices and streams" for n in ("default_device", "set_default_device", "is_available", "default_stream",
                                          "set_default_stream", "new_stream", "stream")},
    **{n: "thread setting" for n in ("get_num_threads", "set_num_threads")},
    **{n: "file I/O" for n in ("load", "load_into", "save", "save_tree", "save_safetensors", "savez",
                               "savez_compressed")},
}

CASES = {**{f"grad:{k}": c for k, c in REGISTRY.items()}, **EXTRA}


@pytest.mark.nuvec_only  # MLX's namespace has other names
def test_every_public_op_is_batched():
    public = _public_callables(mx)
    covered = set()
    for key, case in CASES.items():
        covered.update((key.split(":")[-1],) if case.covers is None else case.covers)
    both = sorted(covered & set(NOT_BATCHABLE))
    assert not both, f"in both a registry and NOT_BATCHABLE: {both}"
    missing = sorted(public - covered - set(NOT_BATCHABLE))
    assert not missing, f"public callables with neither a vmap case nor a NOT_BATCHABLE reason: {missing}"
    stale = sorted(set(NOT_BATCHABLE) - public)
    assert not stale, f"NOT_BATCHABLE names that are not public callables: {stale}"


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
        xs = [mx.array(examples[0][i] if ax is None else e[i], dtype=F64) for i, ax in enumerate(axes)]
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
