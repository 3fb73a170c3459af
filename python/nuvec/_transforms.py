"""Function transforms over trees of arrays: vjp, jvp, grad, value_and_grad, custom_function and
checkpoint, as MLX's. The compiled core differentiates flat lists of arrays; this module maps
trees (tuples, lists, dicts, namedtuples, dataclasses) to those lists and back."""

import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

from . import _core
from . import _typing as _t
from . import random as _random
from ._errors import op_error
from .utils import tree_flatten, tree_map

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _leaves(tree, what, allow_constants=False):
    """[(path, leaf)] of a tree; non-array leaves raise unless they may stay constant."""
    flat = tree_flatten(tree, is_leaf=lambda x: isinstance(x, _core.array))
    if not allow_constants:
        for path, leaf in flat:
            if not isinstance(leaf, _core.array):
                where = f" at '{path}'" if path else ""
                raise ValueError(
                    f"{what}: the differentiated argument{where} is a {type(leaf).__name__}, "
                    "not an array; only arrays can be differentiated"
                )
    return flat


def _replace(tree, values):
    """The tree with its array leaves replaced, in order, by `values`."""
    it = iter(values)
    return tree_map(
        lambda x: next(it) if isinstance(x, _core.array) else x,
        tree,
        is_leaf=lambda x: isinstance(x, _core.array),
    )


def _arrays(tree):
    return [
        leaf
        for _, leaf in tree_flatten(tree, is_leaf=lambda x: isinstance(x, _core.array))
        if isinstance(leaf, _core.array)
    ]


def _check_cotangents(outputs, cotangents, what):
    outs, cots = _leaves(outputs, what, True), _leaves(cotangents, what, True)
    if len(outs) != len(cots):
        raise ValueError(f"{what}: {len(cots)} cotangents for {len(outs)} outputs")
    for (path, o), (_, c) in zip(outs, cots):
        if tuple(o.shape) != tuple(c.shape):
            raise ValueError(
                f"{what}: the cotangent at '{path or '0'}' has shape {tuple(c.shape)}, "
                f"but the output there has shape {tuple(o.shape)}"
            )


def vjp(
    fun: Callable[..., Any], primals: _t.Tree, cotangents: _t.Tree
) -> tuple[list[Any], list[Any]]:
    """(fun(*primals), the cotangents of the primals given `cotangents` of fun's outputs).

    primals and cotangents are lists (one entry per argument / output) or trees matching them."""
    primals = list(primals) if isinstance(primals, (list, tuple)) else [primals]
    flat = [leaf for _, leaf in _leaves(primals, "vjp")]
    result = {}

    def flat_fun(xs):
        out = fun(*_replace(primals, xs))
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        _check_cotangents(
            outs, cotangents if isinstance(cotangents, (list, tuple)) else [cotangents], "vjp"
        )
        result["outputs"] = outs
        return _arrays(outs)

    cots = _arrays(cotangents)
    _, grads = _core._vjp_flat(flat_fun, flat, cots)
    return result["outputs"], _replace(primals, grads)


def jvp(
    fun: Callable[..., Any], primals: _t.Tree, tangents: _t.Tree
) -> tuple[list[Any], list[Any]]:
    """(fun(*primals), the tangents of fun's outputs given `tangents` of the primals)."""
    primals = list(primals) if isinstance(primals, (list, tuple)) else [primals]
    flat = [leaf for _, leaf in _leaves(primals, "jvp")]
    flat_t = _arrays(list(tangents) if isinstance(tangents, (list, tuple)) else [tangents])
    if len(flat_t) != len(flat):
        raise ValueError(f"jvp: {len(flat_t)} tangents for {len(flat)} primal arrays")
    result = {}

    def flat_fun(xs):
        out = fun(*_replace(primals, xs))
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        result["outputs"] = outs
        return _arrays(outs)

    _, tans = _core._jvp_flat(flat_fun, flat, flat_t)
    return result["outputs"], _replace(result["outputs"], tans)


def _normalize_argnums(argnums, argnames):
    argnames = [argnames] if isinstance(argnames, str) else list(argnames or [])
    if argnums is None and not argnames:
        argnums = 0
    nums = () if argnums is None else ((argnums,) if isinstance(argnums, int) else tuple(argnums))
    if argnums is not None and not nums and not argnames:
        raise ValueError(
            "grad: argnums is empty and no argnames are given: nothing to differentiate"
        )
    # As MLX: one argument number (int or 1-tuple) gives its gradient alone.
    single = len(nums) == 1
    return nums, single, argnames


def value_and_grad(
    fun: Callable[_P, _R],
    argnums: int | Sequence[int] | None = None,
    argnames: str | Sequence[str] | None = None,
) -> Callable[_P, tuple[_R, Any]]:
    """A function returning (fun(...), gradient of fun's scalar output) for the arguments at
    `argnums` (int or tuple) and the keyword arguments named in `argnames`. fun may return
    (loss, aux...): the gradient is of loss and the whole output is returned unchanged."""
    return _value_and_grad(fun, argnums, argnames, "value_and_grad")


def _value_and_grad(fun, argnums, argnames, _name):
    nums, single, names = _normalize_argnums(argnums, argnames)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"{_name}: argnums {i} is out of range for {len(args)} positional arguments"
                )
        for n in names:
            if n not in kwargs:
                raise ValueError(f"{_name}: argnames '{n}' is not among the keyword arguments")
        targets = [args[i] for i in nums] + [kwargs[n] for n in names]
        # Paths in errors name the argument: its position, or its keyword.
        labelled = {str(i): args[i] for i in nums}
        labelled.update({n: kwargs[n] for n in names})
        _leaves(labelled, _name)
        flat = [leaf for _, leaf in _leaves(targets, _name)]
        result = {}

        def flat_fun(xs):
            new = _replace(targets, xs)
            a, kw = list(args), dict(kwargs)
            for k, i in enumerate(nums):
                a[i] = new[k]
            for k, n in enumerate(names):
                kw[n] = new[len(nums) + k]
            out = fun(*a, **kw)
            result["out"] = out
            loss = out[0] if isinstance(out, (list, tuple)) else out
            if not isinstance(loss, _core.array):
                raise ValueError(
                    f"{_name}: the function must return an array (or a tuple whose first "
                    f"element is one), not a {type(loss).__name__}"
                )
            if loss.size != 1:
                raise ValueError(
                    f"{_name}: the function's output must be a scalar to take its gradient, "
                    f"got shape {tuple(loss.shape)}"
                )
            return [loss]

        _, grads = _core._vjp_flat(flat_fun, flat, [])
        grads = _replace(targets, grads)
        g_nums = grads[: len(nums)]
        g_nums = g_nums[0] if single else (tuple(g_nums) if nums else None)
        if names:
            g_nums = (g_nums, {n: grads[len(nums) + k] for k, n in enumerate(names)})
        return result["out"], g_nums

    return wrapped


def grad(
    fun: Callable[_P, Any],
    argnums: int | Sequence[int] | None = None,
    argnames: str | Sequence[str] | None = None,
) -> Callable[_P, Any]:
    """A function returning the gradient of fun's scalar output (see value_and_grad)."""
    vg = _value_and_grad(fun, argnums, argnames, "grad")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    return wrapped


class custom_function(Generic[_P, _R]):
    """A function with its own vjp / jvp / vmap rules, as MLX's ``mx.custom_function``::

        @custom_function
        def f(x, y): ...

        @f.vjp
        def f_vjp(primals, cotangents, outputs): return (dx, dy)

        @f.vmap
        def f_vmap(inputs, axes): return outputs, out_axes  # axes: one int or None per argument

    Without a vjp (or jvp) rule the transform recomputes the function from its inputs, which is
    also what ``checkpoint`` does; without a vmap rule, vmap maps the function itself."""

    def __init__(self, fun: Callable[_P, _R]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._vjp = self._jvp = self._vmap = None

    def vjp(self, rule: Callable[..., Any]) -> "custom_function[_P, _R]":
        self._vjp = rule
        return self

    def jvp(self, rule: Callable[..., Any]) -> "custom_function[_P, _R]":
        self._jvp = rule
        return self

    def vmap(self, rule: Callable[..., Any]) -> "custom_function[_P, _R]":
        self._vmap = rule
        return self

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        primals = _arrays(list(args))
        # The state of the random generator, so a recomputation draws the same numbers.
        rng = list(_random.state)

        def run(xs):
            saved = list(_random.state)
            _random.state[:] = rng
            try:
                return self.fun(*_replace(list(args), xs), **kwargs)
            finally:
                _random.state[:] = saved

        out = self.fun(*_replace(list(args), [_core._untraced_alias(p) for p in primals]), **kwargs)
        single = isinstance(out, _core.array)
        outs = _arrays([out])

        def flat(xs):
            return _arrays([run(xs)])

        def vjp_rule(ps, cots, outputs):
            if self._vjp is None:
                return _core._vjp_flat(flat, ps, cots)[1]
            unflat = lambda v: v[0] if single else _replace(out, v)
            prims = _replace(list(args), ps)
            # As MLX: a one-argument function's rule gets that argument, not a 1-tuple.
            grads = self._vjp(
                prims[0] if len(args) == 1 else tuple(prims), unflat(cots), unflat(outputs)
            )
            grads = (grads,) if isinstance(grads, _core.array) else grads
            return _arrays(list(grads))

        def jvp_rule(ps, tans, outputs):
            if self._jvp is None:
                return _core._jvp_flat(flat, ps, tans)[1]
            prims, tanv = _replace(list(args), ps), _replace(list(args), tans)
            res = self._jvp(
                prims[0] if len(args) == 1 else tuple(prims),
                tanv[0] if len(args) == 1 else tuple(tanv),
            )
            return _arrays([res])

        def vmap_rule(ps, axes):
            if self._vmap is None:  # the function itself, vmapped
                return _core._vmap_flat(flat, ps, axes)
            in_axes = _replace(list(args), [None if a < 0 else a for a in axes])
            ret = self._vmap(tuple(_replace(list(args), ps)), tuple(in_axes))
            if not isinstance(ret, tuple) or len(ret) != 2:  # as MLX
                raise op_error(
                    "custom_function", "the vmap rule must return a tuple (outputs, output axes)"
                )
            res, res_axes = ret
            res_axes = [res_axes] if isinstance(res, _core.array) else list(res_axes)
            return _arrays([res]), [-1 if a is None else a for a in res_axes]

        results = _core._custom(primals, outs, vjp_rule, jvp_rule, vmap_rule)
        return results[0] if single else _replace(out, results)


def checkpoint(fun: Callable[_P, _R]) -> custom_function[_P, _R]:
    """fun, recomputed in the backward pass instead of keeping its intermediates (the same random
    numbers are drawn again)."""
    return custom_function(fun)
