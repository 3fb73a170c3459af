"""The one-pass Adam kernel (``_core._adam_update``) that nuvec.optimizers' Adam and AdamW use
for float32 parameters: bit for bit the op path's result (the same float32 operations in the
same order), MLX's, and a NumPy float32 replica's; the same bits whatever the thread count; lazy
and strided inputs; arrays held from Python keep their values (only unheld buffers are reused)."""

import numpy as np
import pytest

from _impl import IS_MLX, mx

# The CPU kernel, and its switch against the op path.
pytestmark = [pytest.mark.nuvec_only, pytest.mark.cpu_backend]

if not IS_MLX:
    import nuvec._core as core
    import nuvec.optimizers as optim
    import nuvec.optimizers.optimizers as impl

CASES = [
    ("Adam", {}),
    ("Adam", {"bias_correction": True}),
    ("Adam", {"betas": (0.8, 0.95), "eps": 1e-3}),
    ("AdamW", {}),
    ("AdamW", {"weight_decay": 0.1, "bias_correction": True}),
    ("AdamW", {"weight_decay": 0.0}),
]
# Empty, tiny, around the vector widths (4, 8, 16 lanes), and over a million (several threads' pieces).
SIZES = [(), (0, 3), (1,), (7,), (16,), (33,), (5, 13), (1024, 1025)]
STEPS = 3


def _bits(a):
    return np.asarray(a).view(np.uint32)


@pytest.fixture
def calls(monkeypatch):
    """How many steps the optimizers ran through the kernel (it declines traced operands)."""
    count = [0]
    kernel = core._adam_update

    def counted(*args):
        out = kernel(*args)
        count[0] += out is not None
        return out

    monkeypatch.setattr(core, "_adam_update", counted)
    return count


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape).astype(np.float32)
    return w, [rng.standard_normal(shape).astype(np.float32) for _ in range(STEPS)]


def _run(opt, w, grads, kernel, monkeypatch):
    monkeypatch.setattr(impl, "_ADAM_KERNEL", kernel)
    params = {"w": mx.array(w)}
    for g in grads:
        params = opt.apply_gradients({"w": mx.array(g)}, params)
        mx.eval(params, opt.state)
    return [params["w"], opt.state["w"]["m"], opt.state["w"]["v"]]


@pytest.mark.parametrize("shape", SIZES)
@pytest.mark.parametrize(("name", "kw"), CASES)
def test_kernel_is_the_op_path_bit_for_bit(name, kw, shape, calls, monkeypatch):
    w, grads = _data(shape)
    fused = _run(getattr(optim, name)(learning_rate=0.01, **kw), w, grads, True, monkeypatch)
    assert calls[0] == STEPS
    ops = _run(getattr(optim, name)(learning_rate=0.01, **kw), w, grads, False, monkeypatch)
    assert calls[0] == STEPS
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(_bits(a), _bits(b))


def _schedule(optimizers):
    return optimizers.cosine_decay(0.05, 10, 0.001)


@pytest.mark.parametrize("schedule", [False, True])
@pytest.mark.parametrize("shape", [(7,), (300, 301)])
@pytest.mark.parametrize(("name", "kw"), CASES)
def test_kernel_is_mlx_bit_for_bit(name, kw, shape, schedule, calls, monkeypatch):
    mlx = pytest.importorskip("mlx.core")
    mlx_optim = pytest.importorskip("mlx.optimizers")
    w, grads = _data(shape, seed=1)
    theirs = getattr(mlx_optim, name)(
        learning_rate=_schedule(mlx_optim) if schedule else 0.01, **kw
    )
    params = {"w": mlx.array(w)}
    for g in grads:
        params = theirs.apply_gradients({"w": mlx.array(g)}, params)
        mlx.eval(params, theirs.state)
    expected = [params["w"], theirs.state["w"]["m"], theirs.state["w"]["v"]]
    ours = getattr(optim, name)(learning_rate=_schedule(optim) if schedule else 0.01, **kw)
    got = _run(ours, w, grads, True, monkeypatch)
    assert calls[0] == STEPS
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(_bits(a), _bits(b))


def test_numpy_float32_replica(monkeypatch):
    """AdamW's documented rule in NumPy float32, operation for operation."""
    w, grads = _data((1000,), seed=2)
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.05
    opt = optim.AdamW(learning_rate=lr, eps=eps, weight_decay=wd)
    got = _run(opt, w, grads, True, monkeypatch)
    f = np.float32
    p, m, v = w.copy(), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        p = p * (f(1) - f(lr) * f(wd))
        m = f(b1) * m + f(1 - b1) * g
        v = f(b2) * v + f(1 - b2) * (g * g)
        p = p - f(lr) * m / (np.sqrt(v) + f(eps))
    for a, b in zip(got, (p, m, v)):
        np.testing.assert_array_equal(_bits(a), b.view(np.uint32))


def test_same_bits_whatever_the_thread_count(monkeypatch):
    w, grads = _data((3, 400_001), seed=3)
    before = mx.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3, 8):
            mx.set_num_threads(threads)
            opt = optim.Adam(learning_rate=0.01, bias_correction=True)
            runs.append([_bits(a) for a in _run(opt, w, grads, True, monkeypatch)])
    finally:
        mx.set_num_threads(before)
    for run in runs[1:]:
        for a, b in zip(run, runs[0]):
            np.testing.assert_array_equal(a, b)


def _direct(p, g, m, v, lr=0.01):
    return core._adam_update(p, g, m, v, mx.array(lr), None, None, 0.9, 0.1, 0.999, 0.001, 1e-8)


def _rule(p, g, m, v, lr=0.01):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * mx.square(g)
    return [p - mx.array(lr) * m / (mx.sqrt(v) + 1e-8), m, v]


def test_lazy_and_strided_inputs():
    rng = np.random.default_rng(4)
    base = [mx.array(rng.standard_normal((300, 200)).astype(np.float32)) for _ in range(4)]
    mx.eval(base)
    # Unevaluated operands (made by ops), and transposed or sliced views.
    for args in (
        [x * 2 + 1 for x in base[:3]] + [mx.abs(base[3])],
        [x.T for x in base[:3]] + [mx.abs(base[3]).T],
        [x[::2, 1:101] for x in base[:3]] + [mx.abs(base[3])[::2, 1:101]],
    ):
        got = _direct(*args)
        assert all(a.shape == args[0].shape for a in got)
        for a, b in zip(got, _rule(*args)):
            np.testing.assert_array_equal(_bits(a), _bits(b))


def test_held_inputs_keep_their_values(monkeypatch):
    w, grads = _data((200_000,), seed=5)
    opt = optim.Adam(learning_rate=0.01)
    params = {"w": mx.array(w)}
    params = opt.apply_gradients({"w": mx.array(grads[0])}, params)
    mx.eval(params, opt.state)
    old_w, old_m, old_v = params["w"], opt.state["w"]["m"], opt.state["w"]["v"]
    saved = [np.array(a) for a in (old_w, old_m, old_v)]
    params = opt.apply_gradients({"w": mx.array(grads[1])}, params)
    mx.eval(params, opt.state)
    for a, b in zip((old_w, old_m, old_v), saved):
        np.testing.assert_array_equal(np.asarray(a), b)
    assert not np.array_equal(np.asarray(params["w"]), saved[0])
    # The same operand twice: neither use may be overwritten before the other reads it.
    p = mx.array(w)
    mx.eval(p)
    got = _direct(p, p, p, mx.abs(p))
    for a, b in zip(got, _rule(p, p, p, mx.abs(p))):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    np.testing.assert_array_equal(np.asarray(p), w)


def test_other_dtypes_take_the_op_path(calls):
    opt = optim.Adam(learning_rate=0.01)
    params = {"w": mx.array(np.ones(8, np.float16))}
    params = opt.apply_gradients({"w": mx.ones(8, mx.float16)}, params)
    mx.eval(params)
    assert calls[0] == 0 and params["w"].dtype == mx.float16


def test_errors():
    x = mx.zeros(4)
    with pytest.raises(mx.OpError, match="float32"):
        _direct(x, x.astype(mx.float16), x, x)
    with pytest.raises(mx.OpError, match="one shape"):
        _direct(x, mx.zeros(5), x, x)
    with pytest.raises(mx.OpError, match="0-d float32"):
        core._adam_update(x, x, x, x, mx.zeros(1), None, None, 0.9, 0.1, 0.999, 0.001, 1e-8)


@pytest.mark.parametrize("kernel", [True, False])
def test_transforms_see_the_op_path(kernel, calls, monkeypatch, tmp_path):
    """Under grad the step's ops are differentiated (the kernel has no derivative); an export
    records the fused step when the kernel is on (AdamUpdate has an export codec): the same
    results either way."""
    monkeypatch.setattr(impl, "_ADAM_KERNEL", kernel)
    w, (g, _, _) = _data((50,), seed=6)

    def step(w, g):
        opt = optim.AdamW(learning_rate=0.1, bias_correction=True)
        return opt.apply_gradients({"w": g}, {"w": w})["w"]

    grad = mx.grad(lambda w: mx.sum(step(w, mx.array(g)) * w))(mx.array(w))
    assert calls[0] == 0
    path = str(tmp_path / "step.mlxfn")
    mx.export_function(path, step, mx.array(w), mx.array(g))
    (exported,) = mx.import_function(path)(mx.array(w), mx.array(g))
    assert calls[0] == (1 if kernel else 0)
    monkeypatch.setattr(impl, "_ADAM_KERNEL", False)
    w_ref = mx.array(w)
    ref = mx.grad(lambda w: mx.sum(step(w, mx.array(g)) * w))(w_ref)
    np.testing.assert_array_equal(_bits(grad), _bits(ref))
    np.testing.assert_array_equal(_bits(exported), _bits(step(mx.array(w), mx.array(g))))
