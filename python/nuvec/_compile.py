"""compile, as MLX's ``mx.compile``: a function of trees of arrays is traced once per signature
(tree structure, constants, dtypes, shapes or, shapeless, ranks, and the default stream) into a
tape that the core simplifies and fuses (csrc/transforms/compile.cpp); later calls replay the
tape on their arrays. State named by ``inputs``/``outputs`` (a model's, an optimizer's, the
random key) is read before each call and written back after it. docs/compile.md describes it."""

import collections
import functools
import os
from collections.abc import Callable
from typing import Any

from . import _core

_array = _core.array
_signature = _core._compile_signature
_replay_one = _core._compile_replay_one
# Arguments that are not arrays are constants of the trace: part of the signature.
_CONSTANTS = (int, float, str, bool, complex, type(None))
# Traces kept per compiled function: each holds its graph and constants.
CACHE_SIZE = 64

_enabled = [os.environ.get("NUVEC_DISABLE_COMPILE", "") in ("", "0", "false", "False")]


def disable_compile() -> None:
    """Makes every compiled function call its Python function directly (as MLX's)."""
    _enabled[0] = False


def enable_compile() -> None:
    """Undoes :func:`disable_compile` (``NUVEC_DISABLE_COMPILE=1`` sets the starting state)."""
    _enabled[0] = True


def _flatten(tree, arrays, shapeless):
    """The signature of `tree`; its arrays are appended to `arrays`."""
    if isinstance(tree, _array):
        arrays.append(tree)
        return (tree.dtype, tree.ndim if shapeless else tree.shape)
    if isinstance(tree, (list, tuple)):  # a list and a tuple differ (MLX's key mixes them up)
        return (type(tree), tuple(_flatten(x, arrays, shapeless) for x in tree))
    if isinstance(tree, dict):
        return (dict, tuple(tree), tuple(_flatten(x, arrays, shapeless) for x in tree.values()))
    if isinstance(tree, float):  # by its bits: -0.0 is not 0.0, and a NaN is itself
        return (float, tree.hex())
    if isinstance(tree, _CONSTANTS):
        return (type(tree), repr(tree) if isinstance(tree, complex) else tree)
    raise ValueError(
        "[compile] Function arguments must be trees of arrays or constants (floats, ints, strings, "
        f"or None), but received type {type(tree).__qualname__}."
    )


def _map_leaves(tree, fn):
    """`tree` (lists, tuples, namedtuples and dicts) with each leaf replaced by fn(leaf)."""
    if isinstance(tree, (list, tuple)):
        items = [_map_leaves(x, fn) for x in tree]
        if isinstance(tree, list):
            return items
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return {k: _map_leaves(v, fn) for k, v in tree.items()}
    return fn(tree)


def _rebuild(tree, it):
    """`tree` with its arrays replaced, in order, from the iterator `it`."""
    return _map_leaves(tree, lambda x: next(it) if isinstance(x, _array) else x)


def _state_slots(tree, slots):
    """Appends (container, key) for each array leaf of a state tree (lists and dicts, as an
    nn.Module, an optimizer's state and ``random.state``), so the leaf can be replaced in place."""
    items = (
        tree.items()
        if isinstance(tree, dict)
        else enumerate(tree)
        if isinstance(tree, list)
        else ()
    )
    for k, v in items:
        if isinstance(v, _array):
            slots.append((tree, k))
        elif isinstance(v, (dict, list, tuple)):
            _state_slots(v, slots)
    if isinstance(tree, tuple):
        for v in tree:
            _state_slots(v, slots)
    return slots


def _state_signature(slots, shapeless):
    return tuple((id(c), k, c[k].dtype, c[k].ndim if shapeless else c[k].shape) for c, k in slots)


class _ArrayMark:
    """Where an array sits in a traced output structure."""


_ARRAY = _ArrayMark()


def _output_arrays(tree, arrays):
    """The structure of fun's output tree; its arrays are appended to `arrays` (other leaves are
    returned as they were at the trace, as MLX)."""

    def mark(x):
        if not isinstance(x, _array):
            return x
        arrays.append(x)
        return _ARRAY

    return _map_leaves(tree, mark)


def _fill(structure, it):
    """The output tree: each mark of `structure` replaced, in order, from the iterator `it`."""
    return _map_leaves(structure, lambda x: next(it) if x is _ARRAY else x)


class _Trace:
    __slots__ = ("tape", "structure", "num_outputs", "flat")

    def __init__(self, tape, structure, num_outputs):
        self.tape, self.structure, self.num_outputs = tape, structure, num_outputs
        # A plain tuple of arrays comes back without a walk over its leaves.
        self.flat = type(structure) is tuple and all(x is _ARRAY for x in structure)


class _Compiled:
    """What a compiled function keeps: its traces by signature, and the calls that miss the fast
    path (compile's closure takes the others)."""

    def __init__(self, fun, inputs, outputs, shapeless):
        self.fun, self.inputs, self.outputs, self.shapeless = fun, inputs, outputs, shapeless
        self.cache: collections.OrderedDict = collections.OrderedDict()
        # Calls of arrays only with an array or a flat tuple of arrays out (no state), by
        # signature: replayed without leaving C++. fast[None]: the key last moved to the cache's
        # end (a replay of that key leaves the order as it is).
        self.fast: dict = {}

    def _call(self, args, kwargs):
        shapeless = self.shapeless
        slots_in = []
        key = None if kwargs or self.inputs is not None else _signature(args, shapeless)
        if key is not None:
            arrays = list(args)
        else:
            arrays = []
            key = (_flatten(args, arrays, shapeless), _flatten(kwargs, arrays, shapeless))
            if self.inputs is not None:
                slots_in = _state_slots(self.inputs, [])
                key += (_state_signature(slots_in, shapeless),)
                arrays.extend(c[k] for c, k in slots_in)
            key += (_core.default_stream(_core.default_device()),)
        num_args = len(arrays) - len(slots_in)
        trace = self.cache.get(key)
        if trace is None:
            trace = self._trace(args, kwargs, arrays, num_args, slots_in)
            self.cache[key] = trace
            if len(self.cache) > CACHE_SIZE:
                self.cache.popitem(last=False)
                self.fast.clear()
            if type(key[0]) is int and self.outputs is None and trace.structure is _ARRAY:
                self.fast[key] = (trace.tape, key)
            elif type(key[0]) is int and self.outputs is None and trace.flat:
                self.fast[key] = (trace.tape, key, trace.num_outputs)
        else:
            self.cache.move_to_end(key)
        self.fast[None] = key
        results = trace.tape.replay(arrays)
        n = trace.num_outputs
        if self.outputs is not None:
            slots_out = _state_slots(self.outputs, [])
            if len(slots_out) != len(results) - n:
                raise ValueError(
                    f"[compile] the state named by outputs has {len(slots_out)} arrays, but "
                    f"{len(results) - n} were traced: its structure changed outside the function"
                )
            for (c, k), v in zip(slots_out, results[n:]):
                c[k] = v
        if trace.structure is _ARRAY:
            return results[0]
        if trace.flat:
            return tuple(results[:n])
        return _fill(trace.structure, iter(results[:n]))

    def _trace(self, args, kwargs, arrays, num_args, slots_in):
        record = {}

        def flat(placeholders):
            it = iter(placeholders[:num_args])
            a = _rebuild(args, it)
            kw = _rebuild(kwargs, it) if kwargs else {}
            for (c, k), p in zip(slots_in, placeholders[num_args:]):
                c[k] = p
            out: list = []
            record["structure"] = _output_arrays(self.fun(*a, **kw), out)
            record["num_outputs"] = len(out)
            if self.outputs is not None:
                out.extend(c[k] for c, k in _state_slots(self.outputs, []))
            return out

        originals = arrays[num_args:]
        try:
            tape = _core._compile_trace(flat, arrays, self.shapeless)
        finally:
            # The state leaves get back their arrays (the replay writes the new ones).
            for (c, k), v in zip(slots_in, originals):
                c[k] = v
        return _Trace(tape, record["structure"], record["num_outputs"])


def compile(
    fun: Callable, inputs: Any = None, outputs: Any = None, shapeless: bool = False
) -> Callable:
    """Returns a compiled version of ``fun`` (MLX's ``mx.compile``).

    ``fun`` takes and returns trees of arrays (and constants: ints, floats, strings, None, which
    are part of the signature, so a new value traces again). ``inputs`` and ``outputs`` name
    state the function reads and updates besides its arguments (trees of lists and dicts holding
    arrays, such as ``[model.state, optimizer.state, mx.random.state]``). With ``shapeless``,
    one trace serves every shape of the same ranks and dtypes."""
    c = _Compiled(fun, inputs, outputs, shapeless)
    fast, cache, call = c.fast, c.cache, c._call

    # A function, not the object's __call__: a plain call with its state in closure cells is
    # ~0.05 us cheaper than a method's (a 0-d 10-op call ~2.3 us).
    def compiled(*args, **kwargs):
        if not _enabled[0]:
            return fun(*args, **kwargs)
        if not kwargs:
            out = _replay_one(fast, args, shapeless, cache)
            if out is not None:
                return out
        return call(args, kwargs)

    functools.update_wrapper(compiled, fun)
    compiled.cache = cache  # the traces by signature, for inspection
    return compiled
