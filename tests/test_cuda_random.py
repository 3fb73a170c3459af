"""Random numbers on the GPU: the CPU's bits for the generator and the samplers built on it with
exact arithmetic; the samplers that apply log or erf match within those functions' tolerance
(docs/cuda.md)."""

import pytest

from _impl import mx
from cuda_helpers import assert_same, both, needs_gpu

pytestmark = [pytest.mark.nuvec_only, needs_gpu]

SIZES = [(), (1,), (2,), (3,), (7, 5), (1000,), (1001,), (64, 1025)]


@pytest.mark.parametrize("shape", SIZES, ids=str)
@pytest.mark.parametrize(
    "sample",
    [
        lambda s, k: mx.random.uniform(shape=s, key=k),
        lambda s, k: mx.random.normal(s, key=k),
        lambda s, k: mx.random.normal(s, dtype=mx.bfloat16, key=k),
        lambda s, k: mx.random.uniform(-3, 2, s, dtype=mx.float16, key=k),
        lambda s, k: mx.random.randint(-5, 1000, s, key=k),
        lambda s, k: mx.random.bits(s, 1, key=k),
        lambda s, k: mx.random.bits(s, 2, key=k),
        lambda s, k: mx.random.bits(s, key=k),
        lambda s, k: mx.random.bernoulli(0.3, s, key=k),
        lambda s, k: mx.random.truncated_normal(-1.5, 2.0, s, key=k),
        lambda s, k: mx.random.gumbel(s, key=k),
        lambda s, k: mx.random.laplace(s, key=k),
    ],
    ids=[
        "uniform",
        "normal",
        "normal_bf16",
        "uniform_f16",
        "randint",
        "bits8",
        "bits16",
        "bits32",
        "bernoulli",
        "truncated_normal",
        "gumbel",
        "laplace",
    ],
)
def test_the_gpu_draws_the_cpus_bits(request, sample, shape):
    cpu, gpu = both(lambda: sample(shape, mx.random.key(7)))
    transcendental = any(n in request.node.name for n in ("truncated_normal", "gumbel", "laplace"))
    assert_same(
        cpu, gpu, rtol=1e-5 if transcendental else 0.0, atol=1e-6 if transcendental else 0.0
    )


def test_keys_split_on_the_gpu_match():
    def keys():
        k = mx.random.key(11)
        out = []
        for _ in range(3):
            k, sub = mx.random.split(k)
            out.append(mx.random.normal((33,), key=sub))
        return out

    cpu, gpu = both(keys)
    for c, g in zip(cpu, gpu):
        assert_same(c, g)


def test_the_global_state_advances_alike():
    mx.random.seed(5)
    a = mx.random.uniform(shape=(9,), stream=mx.cpu)
    mx.random.seed(5)
    b = mx.random.uniform(shape=(9,), stream=mx.gpu)
    assert_same(a, b)
