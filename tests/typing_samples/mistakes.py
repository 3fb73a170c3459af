"""Mistakes a type checker must catch in nuvec code (tests/test_typing.py): each line marked
`# error` must be reported, and no other."""

import nuvec as mx
from nuvec.random import normal

x = mx.array([1.0, 2.0])
mx.sum(x, axis="0")  # error
mx.zeros(shape="3")  # error
mx.gradd(lambda t: t)  # error
mx.ones((2, 2), dtype="float32")  # error
mx.add(x, "1")  # error
normal((2,), key=3)  # error
mx.random.normall((2,))  # error
x.reshape(2, 1).sum(axis=[0.5])  # error
mx.grad(lambda t: mx.sum(t), argnums="0")  # error
