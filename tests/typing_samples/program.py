"""An ordinary MLX-style program: tests/test_typing.py type-checks it against nuvec's stubs and
annotations (mypy and pyright must find no error) and runs it."""

from dataclasses import dataclass

import nuvec as mx
from nuvec import array, grad, value_and_grad, vmap
from nuvec.utils import tree_flatten, tree_map, tree_unflatten


@dataclass
class Linear:
    weight: mx.array
    bias: mx.array


def init(key: mx.array, n_in: int, n_out: int) -> dict[str, mx.array]:
    k1, _ = mx.random.split(key)
    return {
        "w": mx.random.normal((n_in, n_out), dtype=mx.float32, key=k1) * 0.1,
        "b": mx.zeros((n_out,), dtype=mx.float32),
    }


def forward(params: dict[str, mx.array], x: mx.array) -> mx.array:
    return mx.maximum(x @ params["w"] + params["b"], 0.0)


def loss_fn(params: dict[str, mx.array], x: mx.array, y: mx.array) -> mx.array:
    return mx.mean(mx.square(forward(params, x) - y))


def main() -> float:
    mx.random.seed(0)
    x = mx.random.uniform(-1.0, 1.0, shape=(32, 4))
    y = mx.sum(x, axis=1, keepdims=True)
    params = init(mx.random.key(1), 4, 1)
    step = value_and_grad(loss_fn)
    loss = mx.array(0.0)
    for _ in range(5):
        loss, grads = step(params, x, y)
        params = tree_map(lambda p, g: p - 0.1 * g, params, grads)
        mx.eval(params, loss)

    # Ops with axis, dtype, shape and stream keywords, indexing and methods.
    a: array = mx.arange(12, dtype=mx.int32).reshape(3, 4)
    b = mx.transpose(a, (1, 0)).astype(mx.float32)
    c = mx.concatenate([b, mx.ones((4, 3))], axis=0)
    d = mx.take(c, mx.array([0, 2]), axis=1)
    e = mx.where(c > 0.5, c, mx.zeros_like(c))
    f = mx.softmax(e, axis=-1) + mx.full((8, 3), 2.0, stream=mx.cpu)
    g = mx.var(f, axis=(0, 1), ddof=1) + f[0, 1:].sum() + f[..., None].mean()
    h = mx.pad(a, ((1, 1), (0, 0)), constant_values=0) + mx.linspace(0, 1, 4)
    with mx.stream(mx.default_stream(mx.default_device())):
        i = mx.cumsum(a, axis=0, reverse=True)[-1]
    parts = mx.split(a, 2, axis=1)
    mx.eval(d, g, h, i, *parts)

    # Transforms: grad of a scalar function, vmap over a batch, a custom rule.
    dfdx = grad(lambda t: mx.sum(mx.sin(t) * t))(mx.array([0.5, 1.0]))
    batched = vmap(lambda r: mx.sum(r * r), in_axes=0)(a.astype(mx.float32))

    @mx.custom_function
    def twice(t: mx.array) -> mx.array:
        return 2 * t

    flat = tree_flatten({"layer": Linear(weight=dfdx, bias=batched)})
    rebuilt = tree_unflatten(flat)
    assert isinstance(rebuilt, dict)
    try:
        mx.reshape(a, (5,))
    except ValueError:  # nuvec raises its OpError, a ValueError
        pass
    return float(loss.item()) + float(twice(mx.array(1.0)).item())


if __name__ == "__main__":
    print(main())
