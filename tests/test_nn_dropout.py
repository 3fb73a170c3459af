"""nn dropout layers: training and eval, shared channel masks, scaling, and masks bit-identical
to mlx.nn's under the same seed."""

import numpy as np
import pytest

from _impl import mx
from nn_layer_helpers import (
    assert_close,
    assert_repr_as_mlx,
    layers,
    mlx_layers,
    raises_layer_error,
    rand,
)

drop = layers("dropout")

# (class name, input shape, axes sharing one mask value)
CASES = [
    ("Dropout", (3, 4, 5), ()),
    ("Dropout", (1000,), ()),
    ("Dropout2d", (4, 5, 6), (0, 1)),
    ("Dropout2d", (2, 4, 5, 6), (1, 2)),
    ("Dropout3d", (3, 4, 5, 6), (0, 1, 2)),
    ("Dropout3d", (2, 3, 4, 2, 6), (1, 2, 3)),
]
IDS = [f"{c[0]}-{len(c[1])}d" for c in CASES]


@pytest.mark.parametrize("name,shape,shared", CASES, ids=IDS)
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_training_masks_and_scales(name, shape, shared, p):
    layer = getattr(drop, name)(p)
    x = rand(shape) + 3.0  # no zeros in the input, so zeros in the output are the mask
    mx.random.seed(1)
    out = np.asarray(layer(mx.array(x)))
    kept = out != 0
    # every kept value is x / (1 - p) (in float32, as the layer computes it)
    np.testing.assert_array_equal(out[kept], (x * np.float32(1 / (1 - p)))[kept])
    # a mask value is shared along the spatial axes of a channel
    for axis in shared:
        assert (kept == kept.take([0], axis=axis)).all()
    draws = kept
    for axis in shared:  # one draw per channel
        draws = draws.take([0], axis=axis)
    # the kept fraction is 1 - p within five standard deviations
    n = draws.size
    assert abs(draws.mean() - (1 - p)) <= 5 * np.sqrt(p * (1 - p) / n) + 1 / n


@pytest.mark.parametrize("name,shape,shared", CASES, ids=IDS)
def test_eval_and_zero_probability_are_identity(name, shape, shared):
    x = mx.array(rand(shape))
    layer = getattr(drop, name)(0.5)
    layer.eval()
    assert layer(x) is x
    assert getattr(drop, name)(0.0)(x) is x


@pytest.mark.parametrize("name,shape,shared", CASES, ids=IDS)
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_same_masks_as_mlx(name, shape, shared, p):
    theirs = getattr(mlx_layers("dropout"), name)(p)
    import mlx.core

    x = rand(shape, seed=4)
    for seed in (0, 5):
        # all of one framework's draws first: under NUVEC_TEST_IMPL=mlx both share one state
        mx.random.seed(seed)
        layer = getattr(drop, name)(p)
        mine = [np.asarray(layer(mx.array(x))) for _ in range(2)]  # the second follows the first
        mlx.core.random.seed(seed)
        for got in mine:
            np.testing.assert_array_equal(got, np.asarray(theirs(mlx.core.array(x))))


@pytest.mark.parametrize("name,shape,shared", CASES[::2], ids=IDS[::2])
def test_grad_is_mask_over_keep_probability(name, shape, shared):
    """The layer is linear in x for a fixed mask: its gradient is mask * r / (1 - p)."""
    layer = getattr(drop, name)(0.25)
    r = rand(shape, seed=3)
    mx.random.seed(9)
    kept = np.asarray(layer(mx.ones(shape))) != 0
    mx.random.seed(9)
    g = mx.grad(lambda a: mx.sum(layer(a) * mx.array(r)))(mx.array(rand(shape)))
    assert_close(g, kept * r.astype(np.float64) / 0.75, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["Dropout", "Dropout2d", "Dropout3d"])
@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_bad_probability(name, p):
    with pytest.raises(ValueError):
        getattr(drop, name)(p)


@pytest.mark.parametrize(
    "name,shape", [("Dropout2d", (4, 5)), ("Dropout2d", (1, 2, 3, 4, 5)), ("Dropout3d", (2, 3, 4))]
)
def test_wrong_rank(name, shape):
    layer = getattr(drop, name)(0.5)
    for training in (True, False):
        layer.train(training)
        with raises_layer_error(name):
            layer(mx.zeros(shape))


@pytest.mark.parametrize(
    "name,args", [("Dropout", ()), ("Dropout2d", (0.3,)), ("Dropout3d", (0.1,))]
)
def test_repr_as_mlx(name, args):
    assert_repr_as_mlx("dropout", name, args, {})
