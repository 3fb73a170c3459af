"""A compiled call as one node (csrc/transforms/compile_plan.cpp): the same values as the graph of
its steps, buffers written in place only where the graph would write them, errors that name the
step, and the profile's rows per step."""

import functools

import numpy as np
import pytest

import nuvec as mx


@pytest.fixture
def plans():
    """Runs a test body with plans on, then off; restores the setting."""
    before = mx._core._compile_plans(True)
    yield lambda on: mx._core._compile_plans(on)
    mx._core._compile_plans(before)


def _data_address(a):
    mx.eval(a)
    return np.asarray(a).__array_interface__["data"][0]


def _mixed(x, w, idx):
    """Products, reductions, views, a gather, a two-output op and element-wise chains."""
    h = mx.tanh(x @ w) * 0.5 + x[:, :3].sum(axis=1, keepdims=True)
    q, r = mx.divmod(h * 7.0, 3.0)
    s = mx.sort(h, axis=-1)
    g = mx.take(h, idx, axis=0)
    return q - r, s.T.reshape(-1)[:5], g.max(axis=0), mx.softmax(h, axis=-1)


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x = mx.array(rng.standard_normal((6, 5)).astype(np.float32))
    w = mx.array(rng.standard_normal((5, 5)).astype(np.float32))
    return x, w, mx.array([4, 0, 2, 2])


def test_one_node_per_call(plans):
    cf = mx.compile(_mixed)
    args = _inputs(0)
    assert mx.schedule(cf(*args)).nodes == 1
    plans(False)
    assert mx.schedule(cf(*args)).nodes > 10


@pytest.mark.parametrize("seed", range(3))
def test_same_bits_as_the_graph_and_uncompiled(plans, seed):
    cf = mx.compile(_mixed)
    args = _inputs(seed)
    got = [np.array(a) for a in cf(*args)]
    plans(False)
    graph = [np.array(a) for a in cf(*args)]
    plain = [np.array(a) for a in _mixed(*args)]
    for a, b, c in zip(got, graph, plain):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_outputs_that_are_inputs_constants_or_repeated(plans):
    c = mx.arange(3.0)

    def f(x, y):
        z = x * 2 + y
        return x, z, z, c, y + 0

    cf = mx.compile(f)
    x, y = mx.ones((3,)), mx.full((3,), 5.0)
    mx.eval(x, y)
    out = cf(x, y)
    assert mx.schedule(out).nodes == 1
    want = [[1, 1, 1], [7, 7, 7], [7, 7, 7], [0, 1, 2], [5, 5, 5]]
    assert [a.tolist() for a in out] == want
    # An output shared by two results is never written in place through either.
    z1, z2 = out[1], out[2]
    z1 += 1
    assert z2.tolist() == [7, 7, 7] and z1.tolist() == [8, 8, 8]


def test_an_input_passed_twice(plans):
    cf = mx.compile(lambda a, b: (a * b + a, a - b))
    x = mx.array([1.0, 2.0, 3.0])
    p, q = cf(x, x)
    assert p.tolist() == [2, 6, 12] and q.tolist() == [0, 0, 0]
    assert x.tolist() == [1, 2, 3]


def test_held_inputs_are_never_written_in_place(plans):
    # A two-output fused group reads y twice: the graph's kernels count each output node as a
    # holder of y, so the plan must hand them the same count (y once overwritten, 2026-12-04).
    rng = np.random.default_rng(1)
    x = mx.array(rng.standard_normal((8, 3)).astype(np.float32))
    y = mx.array(rng.standard_normal((8, 1)).astype(np.float32))
    state = {"w": mx.array(rng.standard_normal((1, 3)).astype(np.float32))}
    loss_and_grad = mx.value_and_grad(lambda w: mx.mean((x @ w.T - y) ** 2))

    @functools.partial(mx.compile, inputs=[state], outputs=[state])
    def step():
        loss, g = loss_and_grad(state["w"])
        state["w"] = state["w"] - 0.1 * g
        return loss

    y0, x0 = np.array(y), np.array(x)
    w = np.array(state["w"])
    for _ in range(4):
        loss = step().item()
        want = np.mean((x0 @ w.T - y0) ** 2)
        np.testing.assert_allclose(loss, want, rtol=1e-5)
        w = w - 0.1 * (2 * ((x0 @ w.T - y0).T @ x0) / len(y0))
        np.testing.assert_allclose(np.array(state["w"]), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(np.array(y), y0)
    np.testing.assert_array_equal(np.array(x), x0)


def test_a_dropped_input_is_updated_in_place(plans):
    cf = mx.compile(lambda buf, v, at: mx.slice_update(buf, v, at, axes=(0,)))
    buf = mx.zeros((64,))
    before = _data_address(buf)
    buf = cf(buf, mx.ones((1,)), mx.array([3]))
    assert _data_address(buf) == before  # the caller let go of it: written where it was
    assert np.array(buf)[:5].tolist() == [0, 0, 0, 1, 0]
    held = buf
    out = cf(buf, mx.ones((1,)), mx.array([4]))
    assert _data_address(out) != _data_address(held)  # still held: a copy
    assert np.array(held)[:5].tolist() == [0, 0, 0, 1, 0]


def test_a_failing_step_is_named_and_the_call_stays_whole(plans):
    cf = mx.compile(lambda x, i: mx.take(x * 2, i) + 1)
    out = cf(mx.arange(4.0), mx.array([0, 10]))  # the caller holds neither input
    with pytest.raises(IndexError, match=r"gather \(inside the compiled call\).*out of bounds"):
        mx.eval(out)
    with pytest.raises((IndexError, ValueError, RuntimeError)):  # again: an error, never a crash
        mx.eval(out)
    fine = cf(mx.arange(4.0), mx.array([3, 1]))
    assert fine.tolist() == [7, 3]


def test_the_profile_times_each_step(plans):
    cf = mx.compile(lambda x, w: mx.sum(mx.exp(x @ w), axis=0) + 1)
    x, w = mx.ones((4, 4)), mx.ones((4, 4))
    mx.eval(cf(x, w))
    mx._core._profile_start()
    mx.eval(cf(x, w))
    rows = {name: count for name, count, _ in mx._core._profile_stop()}
    assert rows.get("matmul") == 1 and rows.get("compiled_call") == 1


def test_traced_and_shapeless_calls_replay_the_graph(plans):
    cf = mx.compile(lambda x: mx.sin(x) @ x)
    x = mx.ones((3, 3))
    g = mx.grad(lambda x: cf(x).sum())(x)
    np.testing.assert_allclose(np.array(g), np.array(mx.grad(lambda x: (mx.sin(x) @ x).sum())(x)))
    sf = mx.compile(lambda x: mx.sin(x) @ x, shapeless=True)
    assert mx.schedule(sf(x)).nodes > 1


def test_a_compiled_decode_step_is_one_node(plans):
    from lm_arch_models import tiny
    from nuvec.lm.decode import compiled_decode
    from nuvec.lm.models.cache import make_prompt_cache

    model = tiny("llama")
    cache = make_prompt_cache(model)
    model(mx.array([[3, 1, 4]]), cache=cache)
    mx.eval([c.state for c in cache])
    step = compiled_decode(model)
    buffers = [a for c in cache for a in (c.keys, c.values)]
    y, at = mx.array([[5]]), mx.array([cache[0].offset], mx.int32)
    out = step.step(y, at, *buffers)
    assert len(out) == 1 + len(buffers) and mx.schedule(out).nodes == 1
    plans(False)
    graph = step.step(y, at, *buffers)
    assert mx.schedule(graph).nodes > 20
    assert mx.array_equal(out[0], graph[0]).item()
