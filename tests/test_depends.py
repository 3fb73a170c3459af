"""depends(inputs, dependencies) as MLX's (issue 11): outputs equal to the inputs that also depend
on the dependencies; an array for an array and a list for a sequence; gradients pass through the
inputs and the dependencies get none. Runs on nuvec and on MLX."""

import numpy as np
import pytest

from _impl import mx


def test_values_and_container():
    a, b = mx.array([1.0, 2.0]), mx.array([3.0])
    out = mx.depends(a, b)
    assert isinstance(out, mx.array) and out is not a and out.tolist() == [1.0, 2.0]
    assert type(mx.depends([a], [b])) is list and mx.depends([a], [b])[0].tolist() == [1.0, 2.0]
    outs = mx.depends((a, b), b)
    assert type(outs) is list and [o.tolist() for o in outs] == [[1.0, 2.0], [3.0]]
    assert mx.depends(a, [b, a]).tolist() == [1.0, 2.0]
    assert mx.depends(a, []).tolist() == [1.0, 2.0]
    i = mx.depends(mx.array([1, 2], mx.int32), a)
    assert i.dtype == mx.int32 and i.tolist() == [1, 2]


def test_dependencies_are_evaluated():
    a = mx.arange(4) * 2
    b = mx.ones((2, 2)) + 1
    out = mx.depends(a, b)
    mx.eval(out)
    assert np.array_equal(np.array(out), [0, 2, 4, 6])
    assert np.array_equal(np.array(b), np.full((2, 2), 2.0))


def test_gradients_pass_through_the_inputs():
    a, b = mx.array([1.0, 2.0]), mx.array([3.0])
    assert mx.grad(lambda x, y: mx.depends(x * x, y).sum())(a, b).tolist() == [2.0, 4.0]
    g = mx.grad(lambda x, y: mx.depends(x * x, y * y).sum(), argnums=1)(a, b)
    assert g.tolist() == [0.0]
    g = mx.grad(lambda x, y: (mx.depends(x * x, y * y) * y).sum(), argnums=1)(a, b)
    assert g.tolist() == [5.0]


@pytest.mark.nuvec_only  # MLX has no jvp or vmap rule for depends
def test_jvp_and_vmap():
    a, b = mx.array([1.0, 2.0]), mx.array([3.0])
    _, (t,) = mx.jvp(lambda x, y: mx.depends(x * x, y), [a, b], [mx.ones(2), mx.ones(1)])
    assert t.tolist() == [2.0, 4.0]
    out = mx.vmap(lambda x, y: mx.depends(x * x, y), in_axes=(0, None))(a, b)
    assert out.tolist() == [1.0, 4.0]


def test_keywords_and_missing_arguments_raise_type_error():
    a = mx.array(1.0)
    with pytest.raises(TypeError):
        mx.depends(a)
    with pytest.raises(TypeError):
        mx.depends(inputs=a, dependencies=a)


@pytest.mark.nuvec_only  # MLX raises RuntimeError('std::bad_cast') here
@pytest.mark.parametrize("args", [(1, "a"), ("a", 1), ([1], "a"), ("a", [1.0])])
def test_non_arrays_raise_type_error(args):
    a = mx.array(1.0)
    x, y = (a if v == "a" else v for v in args)
    with pytest.raises(TypeError):
        mx.depends(x, y)


@pytest.mark.nuvec_only  # MLX crashes (SIGSEGV) on no inputs
def test_no_inputs():
    assert mx.depends([], [mx.array(1.0)]) == []
