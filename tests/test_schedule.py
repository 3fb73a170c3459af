"""nuvec.schedule (a nuvec extension: MLX has no schedule): the work a graph needs, ordered now and
run later by `.eval()` or `.async_eval()`. Results equal plain `eval` bit for bit, whatever was
evaluated in between and whatever the thread count."""

import hashlib
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import nuvec as mx

pytestmark = pytest.mark.nuvec_only


def _graph(seed, n=64):
    """A small model-like graph: products, a softmax, a norm, a gather; returns a tree."""
    rng = np.random.default_rng(seed)
    x = mx.array(rng.standard_normal((n, n)).astype(np.float32))
    w = mx.array(rng.standard_normal((n, n)).astype(np.float32))
    h = mx.softmax(x @ w, axis=-1)
    g = mx.fast.rms_norm(h * 3 + x, mx.ones((n,)), 1e-5)
    top = mx.argmax(g, axis=-1)
    return {"h": h, "out": [g.sum(axis=0), mx.take(g, top, axis=1)], "top": top}


def _bytes(tree):
    return [np.array(a).tobytes() for _, a in mx.utils.tree_flatten(tree)]


def _plain(seed):
    tree = _graph(seed)
    mx.eval(tree)
    return _bytes(tree)


@pytest.mark.parametrize("run", ["eval", "async_eval"])
def test_equals_plain_eval_bit_for_bit(run):
    tree = _graph(1)
    s = mx.schedule(tree)
    assert s.nodes > 5 and "Schedule(" in repr(s)
    getattr(s, run)()
    assert _bytes(tree) == _plain(1)


def test_eval_twice_and_after_async():
    tree = _graph(2)
    s = mx.schedule(tree, [mx.array(1.0) + 1])  # several arguments, as eval
    s.async_eval()
    s.eval()
    s.eval()
    s.async_eval()
    assert _bytes(tree) == _plain(2)


def test_nothing_to_do():
    a = mx.array([1.0, 2.0])
    mx.eval(a)
    for args in [(), (a,), ({"x": a, "n": 3},)]:
        s = mx.schedule(*args)
        assert s.nodes == 0
        s.eval()
        s.async_eval()


def test_orders_only_what_is_unevaluated():
    tree = _graph(3)
    mx.eval(tree["h"])
    whole = mx.schedule(_graph(3)).nodes
    assert 0 < mx.schedule(tree).nodes < whole


@pytest.mark.parametrize("part", ["h", "top", "out"])
def test_graph_partly_evaluated_in_between(part):
    # The schedule's listed nodes ran meanwhile: it walks again and still gives eval's bits.
    tree = _graph(4)
    s = mx.schedule(tree)
    mx.eval(tree[part])
    s.eval()
    assert _bytes(tree) == _plain(4)


def test_graph_extended_in_between():
    # New work recorded on the scheduled arrays after ordering is not part of the schedule.
    tree = _graph(5)
    s = mx.schedule(tree)
    later = tree["h"] * 2
    s.eval()
    assert _bytes(tree) == _plain(5)
    np.testing.assert_array_equal(np.array(later), np.array(tree["h"]) * 2)


def test_intermediates_are_kept_alive_when_their_users_ran():
    # The users of an intermediate are evaluated (dropping their inputs) before the schedule runs;
    # the schedule still holds the intermediate and walks again safely.
    x = mx.arange(1000, dtype=mx.float32)
    mid = mx.exp(x * 1e-3)
    a, b = mid + 1, mid * 2
    s = mx.schedule(a, b)
    del mid
    mx.eval(a)
    s.eval()
    want = mx.exp(mx.arange(1000, dtype=mx.float32) * 1e-3) * 2
    assert np.array(b).tobytes() == np.array(want).tobytes()


def test_sibling_outputs():
    x = mx.array(np.random.default_rng(6).standard_normal((7, 9)).astype(np.float32))
    q, r = mx.linalg.qr(x, stream=mx.cpu)
    s = mx.schedule(r)
    s.eval()
    mx.eval(q)
    q2, r2 = mx.linalg.qr(x, stream=mx.cpu)
    mx.eval(q2, r2)
    assert np.array(q).tobytes() == np.array(q2).tobytes()
    assert np.array(r).tobytes() == np.array(r2).tobytes()


def _chain(steps, scheduled):
    """A decode-like loop: step n+1 is built (and ordered) while step n runs on the worker."""
    rng = np.random.default_rng(7)
    w = mx.array(rng.standard_normal((256, 256)).astype(np.float32) / 16)
    state = mx.array(rng.standard_normal((1, 256)).astype(np.float32))
    cache = [state]
    out = []
    for _ in range(steps):
        state = mx.tanh(state @ w + cache[-1] * 0.5)
        cache.append(state)
        token = mx.argmax(state, axis=-1)
        if scheduled:
            mx.schedule(token, state).async_eval()
        else:
            mx.async_eval(token, state)
        out.append(token)
    return [t.item() for t in out], np.array(state).tobytes()


def test_overlapped_chain_equals_plain():
    assert _chain(40, True) == _chain(40, False)


def test_ordered_while_an_evaluation_runs():
    # The walk stops at the nodes the running evaluation claimed (ordering only sin, sum and add);
    # the run then finds them done. Whether the worker has started is up to the OS: retried.
    x = mx.array(np.random.default_rng(8).standard_normal((512, 512)).astype(np.float32))
    stopped = False
    for _ in range(20):
        first = x
        for _ in range(20):
            first = mx.tanh(first @ x * 0.01)
        mx.async_eval(first)
        time.sleep(0.005)
        second = mx.sin(first) + first.sum()
        s = mx.schedule(second)
        s.eval()
        stopped |= s.nodes == 3
        want = np.array(mx.sin(first) + first.sum())
        assert np.array(second).tobytes() == want.tobytes()
        if stopped:
            break
    assert stopped


def test_threads_share_a_graph():
    tree = _graph(9)
    errors = []

    def work(k):
        try:
            s = mx.schedule(tree["out"][k % 2])
            s.eval()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    mx.eval(tree)
    assert _bytes(tree) == _plain(9)


def test_errors():
    with pytest.raises(TypeError):
        mx.Schedule()
    with pytest.raises(ValueError, match="schedule"):
        mx.grad(lambda x: (mx.schedule(x * 2), x.sum())[1])(mx.array([1.0]))
    with pytest.raises(ValueError, match="schedule"):
        mx.vmap(lambda x: (mx.schedule(x * 2), x)[1])(mx.array([1.0, 2.0]))
    # An evaluation error surfaces from eval, naming the op; after async_eval, from the array.
    bad = mx.take(mx.arange(4), mx.array([7]))
    with pytest.raises(mx.EvalIndexError, match="take|gather"):
        mx.schedule(bad).eval()
    bad = mx.take(mx.arange(4), mx.array([9]))
    mx.schedule(bad).async_eval()
    with pytest.raises(mx.EvalIndexError):
        bad.item()


_SCRIPT = r"""
import hashlib, sys
sys.path.insert(0, {tests!r})
from test_schedule import _chain, _graph, _bytes
import nuvec as mx
tree = _graph(10)
mx.schedule(tree).eval()
tokens, state = _chain(12, True)
print(hashlib.sha256(b"".join(_bytes(tree)) + state + bytes(tokens)).hexdigest())
"""


def test_same_bits_for_any_thread_count():
    tests = os.path.dirname(os.path.abspath(__file__))
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, NUVEC_NUM_THREADS=threads)
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT.format(tests=tests)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        digests.add(out.stdout.strip())
    tree = _graph(10)
    mx.eval(tree)
    tokens, state = _chain(12, False)
    assert digests == {hashlib.sha256(b"".join(_bytes(tree)) + state + bytes(tokens)).hexdigest()}
