"""Function transforms over trees of arrays: vjp, jvp, grad, value_and_grad, custom_function and
checkpoint, as MLX's. The compiled core differentiates flat lists of arrays; this module maps
trees (tuples, lists, dicts, namedtuples, dataclasses) to those lists and back. Errors have MLX's
exception types (docs/transforms.md lists them)."""

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

from . import _core
from . import _typing as _t
from . import random as _random
from ._errors import op_error
from .utils import tree_flatten, tree_map

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _is_array(x):
    return isinstance(x, _core.array)


def _leaves(tree, what, error=ValueError):
    """[(path, leaf)] of a tree whose leaves must all be arrays (None counts as a leaf here, as
    in MLX's strict flattening); any other leaf raises ``error``."""
    flat = tree_flatten(tree, is_leaf=lambda x: x is None or _is_array(x))
    for path, leaf in flat:
        if not _is_array(leaf):
            where = f" at '{path}'" if path else ""
            raise error(
                f"{what}: the differentiated argument{where} is a {type(leaf).__name__}, "
                "not an array; only arrays can be differentiated"
            )
    return flat


def _replace(tree, values):
    """The tree with its array leaves replaced, in order, by `values`."""
    it = iter(values)
    return tree_map(lambda x: next(it) if _is_array(x) else x, tree, is_leaf=_is_array)


def _arrays(tree):
    return [leaf for _, leaf in tree_flatten(tree, is_leaf=_is_array) if _is_array(leaf)]


def _output_arrays(outs, what):
    """The array leaves of fun's outputs; any other leaf raises (None is an empty subtree)."""
    flat = tree_flatten(outs, is_leaf=_is_array)
    for path, leaf in flat:
        if not _is_array(leaf):
            where = f"at '{path}'" if path else "at the top level"
            raise ValueError(
                f"{what}: the function's output {where} is a {type(leaf).__name__}, not an array"
            )
    return [leaf for _, leaf in flat]


def _check_cotangents(outputs, cotangents, what):
    """As MLX: a cotangent for each output (extra ones are ignored), of the output's shape."""
    outs = tree_flatten(outputs, is_leaf=_is_array)
    cots = tree_flatten(cotangents, is_leaf=_is_array)
    if len(cots) < len(outs):
        raise ValueError(f"{what}: {len(cots)} cotangents for {len(outs)} outputs")
    for (path, o), (_, c) in zip(outs, cots):
        if tuple(o.shape) != tuple(c.shape):
            raise ValueError(
                f"{what}: the cotangent at '{path or '0'}' has shape {tuple(c.shape)}, "
                f"but the output there has shape {tuple(o.shape)}"
            )


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _check_callable(fun, what):
    if not callable(fun):
        raise TypeError(f"{what}: fun must be callable, not a {type(fun).__name__}")


def vjp(
    fun: Callable[..., Any], primals: _t.Tree, cotangents: _t.Tree
) -> tuple[list[Any], list[Any]]:
    """(fun(*primals), the cotangents of the primals given `cotangents` of fun's outputs).

    primals and cotangents are lists (one entry per argument / output) or trees matching them;
    their leaves must be arrays (TypeError otherwise, as MLX)."""
    _check_callable(fun, "vjp")
    primals, cotangents = _as_list(primals), _as_list(cotangents)
    flat = [leaf for _, leaf in _leaves(primals, "vjp", TypeError)]
    cots = [leaf for _, leaf in _leaves(cotangents, "vjp", TypeError)]
    result = {}

    def flat_fun(xs):
        outs = _as_list(fun(*_replace(primals, xs)))
        arrays = _output_arrays(outs, "vjp")
        _check_cotangents(outs, cotangents, "vjp")
        result["outputs"] = outs
        return arrays

    _, grads = _core._vjp_flat(flat_fun, flat, cots)
    return result["outputs"], _replace(primals, grads)


def jvp(
    fun: Callable[..., Any], primals: _t.Tree, tangents: _t.Tree
) -> tuple[list[Any], list[Any]]:
    """(fun(*primals), the tangents of fun's outputs given `tangents` of the primals)."""
    _check_callable(fun, "jvp")
    primals = _as_list(primals)
    flat = [leaf for _, leaf in _leaves(primals, "jvp", TypeError)]
    flat_t = [leaf for _, leaf in _leaves(_as_list(tangents), "jvp", TypeError)]
    if len(flat_t) != len(flat):
        raise ValueError(f"jvp: {len(flat_t)} tangents for {len(flat)} primal arrays")
    result = {}

    def flat_fun(xs):
        outs = _as_list(fun(*_replace(primals, xs)))
        result["outputs"] = outs
        return _output_arrays(outs, "jvp")

    _, tans = _core._jvp_flat(flat_fun, flat, flat_t)
    return result["outputs"], _replace(result["outputs"], tans)


def _normalize_argnums(argnums, argnames, what):
    """(sorted argument numbers, whether one was given alone, argument names), checked as MLX
    checks them when the transform is made."""
    if argnames is None or isinstance(argnames, str):
        argnames = [] if argnames is None else [argnames]
    elif not isinstance(argnames, (list, tuple, set)) or not all(
        isinstance(n, str) for n in argnames
    ):
        raise TypeError(f"{what}: argnames must be a str or a sequence of str")
    argnames = list(dict.fromkeys(argnames))
    if argnums is None:
        argnums = () if argnames else 0
    try:  # integer-like objects (NumPy integers) count as ints, as in MLX
        nums = [argnums] if not isinstance(argnums, (list, tuple)) else list(argnums)
        nums = sorted(operator.index(i) for i in nums)
    except TypeError:
        raise TypeError(f"{what}: argnums must be an int or a sequence of int") from None
    if not nums and not argnames:
        raise ValueError(f"{what}: gradient with respect to no argument requested")
    if nums and nums[0] < 0:
        raise ValueError(f"{what}: can't compute the gradient of negative argument index {nums[0]}")
    for a, b in zip(nums, nums[1:]):
        if a == b:
            raise ValueError(f"{what}: duplicate argument index {a} is not allowed")
    # As MLX: one argument number (int or 1-tuple) gives its gradient alone; several give a
    # tuple in increasing order.
    return nums, len(nums) == 1, argnames


def value_and_grad(
    fun: Callable[_P, _R],
    argnums: int | Sequence[int] | None = None,
    argnames: str | Sequence[str] | None = None,
) -> Callable[_P, tuple[_R, Any]]:
    """A function returning (fun(...), gradient of fun's scalar output) for the arguments at
    `argnums` (int or sequence) and the keyword arguments named in `argnames`. fun may return a
    tuple (loss, aux...): the gradient is of loss and the whole output is returned unchanged."""
    return _value_and_grad(fun, argnums, argnames, "value_and_grad")


def _loss(out, what, aux_allowed):
    """fun's scalar loss: its output, or (value_and_grad) the first element of a tuple."""
    loss = out
    if not _is_array(out):
        kind = type(out).__name__
        if not aux_allowed:
            raise ValueError(
                f"{what}: the function must return a scalar array, but it returned a {kind}"
            )
        if not isinstance(out, tuple) or not out or not _is_array(out[0]):
            first = (
                f" whose first element is a {type(out[0]).__name__}"
                if kind == "tuple" and out
                else ""
            )
            raise ValueError(
                f"{what}: the function must return a scalar array or a non-empty tuple whose "
                f"first element is one, but it returned a {kind}{first}"
            )
        loss = out[0]
    if loss.ndim != 0:
        raise ValueError(
            f"{what}: the function's output must be a scalar to take its gradient, "
            f"got shape {tuple(loss.shape)}"
        )
    return loss


def _value_and_grad(fun, argnums, argnames, _name):
    _check_callable(fun, _name)
    nums, single, names = _normalize_argnums(argnums, argnames, _name)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if nums and nums[-1] >= len(args):
            raise ValueError(
                f"{_name}: can't compute the gradient of argument index {nums[-1]}: the "
                f"function is called with {len(args)} positional arguments"
            )
        for n in names:
            if n not in kwargs:
                raise ValueError(f"{_name}: argnames '{n}' is not among the keyword arguments")
        targets = [args[i] for i in nums] + [kwargs[n] for n in names]
        # Paths in errors name the argument: its position, or its keyword.
        labelled = {str(i): args[i] for i in nums}
        labelled.update({n: kwargs[n] for n in names})
        flat = [leaf for _, leaf in _leaves(labelled, _name)]
        if not flat:
            raise ValueError(f"{_name}: the differentiated arguments hold no array")
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
            return [_loss(out, _name, _name == "value_and_grad")]

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
    """A function returning the gradient of fun's scalar output (an array; MLX's grad takes no
    auxiliary outputs: value_and_grad does)."""
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
            # A one-argument rule returns that argument's cotangent tree (an array, or a list or
            # dict for a tree argument); a tuple is the per-argument form. Both as MLX.
            if isinstance(grads, _core.array) or (len(args) == 1 and not isinstance(grads, tuple)):
                grads = (grads,)
            return _arrays(list(grads)[: len(args)])  # extra entries are ignored, as MLX

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
            inputs = _replace(list(args), ps)
            # As MLX: a one-argument function's rule gets that argument and its axes alone.
            if len(args) == 1:
                ret = self._vmap(inputs[0], in_axes[0])
            else:
                ret = self._vmap(tuple(inputs), tuple(in_axes))
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
