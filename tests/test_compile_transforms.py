"""Transforms around and inside compiled functions: grad, value_and_grad, vjp, jvp, vmap of a
compiled function, compile of each of them, checkpoint and custom functions inside compile,
and shapeless compiles under transforms, each against the same transform of the plain function
(bit for bit on nuvec). Runs against MLX too (NUVEC_TEST_IMPL=mlx)."""

import pytest

from _impl import IS_MLX, mx
from compile_helpers import assert_same, counted, rand, table_params


def f_loss(x, w):
    return mx.sum(mx.tanh(x * w) * mx.exp(-x) + w * w)


def vec_fn(x):
    return mx.sin(x) * mx.sum(x * x)


X, W = rand((4, 5), seed=5), rand((5,), seed=6)


@mx.custom_function
def sin_with_vjp(x):
    return mx.sin(x)


@sin_with_vjp.vjp
def _sin_vjp(primals, cotangent, output):
    return (cotangent * 3.0,)  # not sin's derivative: shows the custom rule was used


def custom_loss(x, w):
    return mx.sum(sin_with_vjp(x) * w)


def shapeless_loss(x):
    return mx.sum(mx.exp(x) * x) / 4


def mean_loss(x):
    return mx.mean(mx.exp(x) * x)


def same(fn):
    return fn


def over_shapes(transform, fn):
    """`transform(fn)` on inputs of three shapes of one rank."""
    return [transform(fn)(rand(s, seed=9)) for s in ((4, 5), (2, 3), (50, 60))]


# (id, transformed compiled function, the same transform of the plain function)
TRANSFORMS = [
    ("grad-of-compile", lambda: mx.grad(mx.compile(f_loss), argnums=(0, 1))(X, W),
     lambda: mx.grad(f_loss, argnums=(0, 1))(X, W)),
    ("compile-of-grad", lambda: mx.compile(mx.grad(f_loss, argnums=(0, 1)))(X, W),
     lambda: mx.grad(f_loss, argnums=(0, 1))(X, W)),
    ("value-and-grad-of-compile", lambda: mx.value_and_grad(mx.compile(f_loss))(X, W),
     lambda: mx.value_and_grad(f_loss)(X, W)),
    ("compile-of-value-and-grad", lambda: mx.compile(mx.value_and_grad(f_loss, 1))(X, W),
     lambda: mx.value_and_grad(f_loss, 1)(X, W)),
    ("vmap-of-compile", lambda: mx.vmap(mx.compile(vec_fn))(X),
     lambda: mx.vmap(vec_fn)(X)),
    ("compile-of-vmap", lambda: mx.compile(mx.vmap(vec_fn, in_axes=1))(X),
     lambda: mx.vmap(vec_fn, in_axes=1)(X)),
    ("jvp-of-compile", lambda: mx.jvp(mx.compile(vec_fn), [X], [W * X])[1][0],
     lambda: mx.jvp(vec_fn, [X], [W * X])[1][0]),
    ("vjp-of-compile", lambda: mx.vjp(mx.compile(vec_fn), [X], [W * X])[1][0],
     lambda: mx.vjp(vec_fn, [X], [W * X])[1][0]),
    ("checkpoint-in-compile",
     lambda: mx.compile(mx.grad(lambda x, w: f_loss(mx.checkpoint(vec_fn)(x), w)))(X, W),
     lambda: mx.grad(lambda x, w: f_loss(vec_fn(x), w))(X, W)),
    ("custom-vjp-in-compile", lambda: mx.compile(mx.grad(custom_loss))(X, W),
     lambda: mx.grad(custom_loss)(X, W)),
    ("grad-of-compiled-custom", lambda: mx.grad(mx.compile(custom_loss))(X, W),
     lambda: mx.grad(custom_loss)(X, W)),
    ("grad-of-compiled-custom-function",
     lambda: mx.grad(lambda x: mx.sum(mx.compile(sin_with_vjp)(x) * W))(X),
     lambda: mx.grad(lambda x: mx.sum(sin_with_vjp(x) * W))(X)),
    ("grad-of-compile-of-grad",
     lambda: mx.grad(lambda x: mx.sum(mx.compile(mx.grad(f_loss))(x, W)))(X),
     lambda: mx.grad(lambda x: mx.sum(mx.grad(f_loss)(x, W)))(X)),
    ("grad-of-nested-compile",
     lambda: mx.grad(mx.compile(lambda x: f_loss(mx.compile(vec_fn)(x), W)))(X),
     lambda: mx.grad(lambda x: f_loss(vec_fn(x), W))(X)),
    ("grad-of-shapeless", lambda: over_shapes(mx.grad, mx.compile(shapeless_loss, shapeless=True)),
     lambda: over_shapes(mx.grad, shapeless_loss)),
    ("shapeless-compile-of-grad",
     lambda: over_shapes(same, mx.compile(mx.grad(shapeless_loss), shapeless=True)),
     lambda: over_shapes(mx.grad, shapeless_loss)),
    ("shapeless-compile-of-grad-of-mean",
     lambda: over_shapes(same, mx.compile(mx.grad(mean_loss), shapeless=True)),
     lambda: over_shapes(mx.grad, mean_loss)),
    ("shapeless-compile-of-vmap",
     lambda: over_shapes(same, mx.compile(mx.vmap(vec_fn), shapeless=True)),
     lambda: over_shapes(mx.vmap, vec_fn)),
    ("vmap-of-shapeless", lambda: over_shapes(mx.vmap, mx.compile(vec_fn, shapeless=True)),
     lambda: over_shapes(mx.vmap, vec_fn)),
    ("vmap-with-axes", lambda: mx.vmap(mx.compile(f_loss), in_axes=(1, None))(X.T, W),
     lambda: mx.vmap(f_loss, in_axes=(1, None))(X.T, W)),
]  # fmt: skip


def leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in leaves(t)]
    return [tree]


@pytest.mark.parametrize(
    "name,compiled,plain",
    table_params(
        TRANSFORMS,
        # MLX 0.32 fails it ("broadcast_shapes" errors from the traced shapes)
        mlx_fails={"shapeless-compile-of-vmap"},
    ),
)
def test_transforms_compose(name, compiled, plain):
    got, want = leaves(compiled()), leaves(plain())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)


@pytest.mark.parametrize(
    "transform",
    [lambda f: mx.grad(f), lambda f: mx.value_and_grad(f), lambda f: mx.vmap(f, in_axes=(0, None))],
    ids=["grad", "value_and_grad", "vmap"],
)
def test_compile_of_a_transform_traces_once(transform):
    f = counted(f_loss)
    cf = mx.compile(transform(f))
    for seed in range(3):
        x = rand((4, 5), seed=seed)
        for g, w in zip(leaves(cf(x, W)), leaves(transform(f_loss)(x, W))):
            assert_same(g, w)
    if not IS_MLX:  # MLX 0.32 sometimes traces a process's first compiled function twice
        assert f.calls == 1
