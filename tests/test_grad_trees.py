"""grad, vjp and jvp over trees of arguments and outputs: argnums / argnames, constants passed
through, and the errors that name the argument or the path.
"""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

from _impl import mx
from test_grad import _close, _f32


# ----------------------------------------------------------------------------- trees
def test_grad_over_nested_dict_list_tuple_with_aux():
    w1, b1, w2 = _f32([1.0, 2.0]), _f32([0.5, -1.0]), _f32([[1.0, -2.0], [3.0, 0.5]])
    params = {"layers": [(w1, b1), (w2,)], "scale": mx.array(3.0)}

    def loss(p):
        (a, b), (c,) = p["layers"]
        val = p["scale"] * ((a * b).sum() + (c * c).sum())
        return val, {"pred": a * 2, "n": 7, "tag": "aux"}

    (value, aux), g = mx.value_and_grad(loss)(params)
    assert set(g) == {"layers", "scale"}
    assert isinstance(g["layers"], list) and len(g["layers"]) == 2
    assert isinstance(g["layers"][0], tuple) and len(g["layers"][0]) == 2
    assert isinstance(g["layers"][1], tuple) and len(g["layers"][1]) == 1
    _close(value, 3.0 * (0.5 - 2.0 + 1 + 4 + 9 + 0.25))
    _close(g["layers"][0][0], 3 * np.array([0.5, -1.0]))
    _close(g["layers"][0][1], 3 * np.array([1.0, 2.0]))
    _close(g["layers"][1][0], 6 * np.array([[1.0, -2.0], [3.0, 0.5]]))
    _close(g["scale"], 0.5 - 2.0 + 1 + 4 + 9 + 0.25)
    assert aux["n"] == 7 and aux["tag"] == "aux"
    _close(aux["pred"], [2.0, 4.0])


@pytest.mark.nuvec_only  # MLX's grad (unlike its value_and_grad) rejects a (loss, aux) output
def test_value_and_grad_of_loss_and_aux_returns_the_gradient_of_loss():
    x = _f32([1.0, 2.0])
    (loss, aux), g = mx.value_and_grad(lambda a: ((a * a).sum(), {"aux": a, "n": 1}))(x)
    _close(g, [2.0, 4.0])
    assert aux["n"] == 1
    # As MLX: grad takes no auxiliary outputs, and only a tuple carries them.
    with pytest.raises(ValueError):
        mx.grad(lambda a: ((a * a).sum(), a))(x)
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda a: [(a * a).sum(), a])(x)


def test_grad_over_namedtuple_keeps_its_type():
    P = namedtuple("P", "w b")
    p = P(_f32([1.0, 2.0]), _f32([3.0, -1.0]))
    g = mx.grad(lambda q: (q.w * q.w * q.b).sum())(p)
    assert type(g) is P
    _close(g.w, [6.0, -4.0])
    _close(g.b, [1.0, 4.0])


@pytest.mark.nuvec_only  # MLX treats a dataclass as a (non-array) leaf and raises
def test_grad_over_dataclass_keeps_its_type():
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object

    p = [Layer(_f32([1.0, 2.0]), _f32([0.5])), {"l": Layer(_f32([-1.0]), _f32([2.0]))}]
    g = mx.grad(lambda q: (q[0].w * q[0].b).sum() + (q[1]["l"].w ** 2 * q[1]["l"].b).sum())(p)
    assert type(g[0]) is Layer and type(g[1]["l"]) is Layer
    _close(g[0].w, [0.5, 0.5])
    _close(g[0].b, [3.0])
    _close(g[1]["l"].w, [-4.0])
    _close(g[1]["l"].b, [1.0])


def _f3(a, b, c):
    return (a * 2 + b * b * 3 + a * b * c).sum()


_A, _B, _C = [1.0, 2.0], [3.0, -1.0], [0.5, 4.0]


def test_argnums_int_and_tuple():
    a, b, c = _f32(_A), _f32(_B), _f32(_C)
    an, bn, cn = np.array(_A), np.array(_B), np.array(_C)
    ga = 2 + bn * cn
    gb = 6 * bn + an * cn
    gc = an * bn
    _close(mx.grad(_f3)(a, b, c), ga)
    _close(mx.grad(_f3, argnums=1)(a, b, c), gb)
    g = mx.grad(_f3, argnums=(0, 2))(a, b, c)
    assert isinstance(g, tuple) and len(g) == 2
    _close(g[0], ga)
    _close(g[1], gc)
    g = mx.grad(_f3, argnums=(0, 1, 2))(a, b, c)
    assert len(g) == 3
    _close(g[0], ga)
    _close(g[1], gb)
    _close(g[2], gc)
    v, g = mx.value_and_grad(_f3, argnums=(1, 2))(a, b, c)
    _close(v, float(_f3(a, b, c)))
    _close(g[0], gb)


def test_argnums_give_gradients_in_increasing_order_as_mlx():
    a, b, c = _f32(_A), _f32(_B), _f32(_C)
    g = mx.grad(_f3, argnums=(2, 0))(a, b, c)
    _close(g[0], 2 + np.array(_B) * np.array(_C))
    _close(g[1], np.array(_A) * np.array(_B))


@pytest.mark.parametrize(
    "argnums", [-1, (0, -2), (1, 1), ()], ids=["neg", "neg-in-tuple", "dup", "none"]
)
def test_negative_duplicate_or_no_argnums_raise_when_made(argnums):
    with pytest.raises(ValueError):
        mx.grad(_f3, argnums=argnums)


def test_argnums_one_element_tuple_returns_the_gradient_as_mlx():
    a, b, c = _f32(_A), _f32(_B), _f32(_C)
    g = mx.grad(_f3, argnums=(1,))(a, b, c)
    _close(g, 6 * np.array(_B) + np.array(_A) * np.array(_C))


def test_argnames():
    def f(a, b=None, c=None):
        return (a * b + c * c).sum()

    a, b, c = _f32(_A), _f32(_B), _f32(_C)
    an, bn, cn = np.array(_A), np.array(_B), np.array(_C)
    # argnames only: (None, {name: grad})
    nums, named = mx.grad(f, argnames="c")(a, b=b, c=c)
    assert nums is None and set(named) == {"c"}
    _close(named["c"], 2 * cn)
    # argnums and argnames
    g_a, named = mx.grad(f, argnums=0, argnames=["b", "c"])(a, b=b, c=c)
    _close(g_a, bn)
    assert set(named) == {"b", "c"}
    _close(named["b"], an)
    _close(named["c"], 2 * cn)
    # value_and_grad with argnames
    v, (nums, named) = mx.value_and_grad(f, argnames=("b",))(a, b=b, c=c)
    _close(v, float((an * bn + cn * cn).sum()))
    assert nums is None
    _close(named["b"], an)


def test_argnames_tree_valued_keyword():
    def f(x, params=None):
        return (params["w"] * x).sum() + params["b"][0].sum() * 2

    x = _f32([1.0, 2.0])
    p = {"w": _f32([3.0, 4.0]), "b": [_f32([1.0, 1.0, 1.0])]}
    (gx, named) = mx.grad(f, argnums=0, argnames="params")(x, params=p)
    _close(gx, [3.0, 4.0])
    _close(named["params"]["w"], [1.0, 2.0])
    _close(named["params"]["b"][0], [2.0, 2.0, 2.0])


def test_arguments_outside_argnums_get_no_gradient_and_are_constants():
    a, b, c = _f32(_A), _f32(_B), _f32(_C)
    g = mx.grad(_f3, argnums=1)(a, b, c)
    assert tuple(g.shape) == (2,)  # b's gradient only, not a tree of all three
    # the value of the other arguments enters as a constant
    g2 = mx.grad(_f3, argnums=1)(a * 2, b, c)
    _close(g2 - g, np.array(_A) * np.array(_C))


def test_non_array_leaves_of_non_differentiated_args_pass_through():
    seen = {}

    def f(x, cfg, names):
        seen["cfg"], seen["names"] = cfg, names
        return (cfg["act"](x) * cfg["scale"] + cfg["bias"][0]).sum()

    cfg = {"act": mx.tanh, "scale": 2.0, "bias": (3, "label"), "off": None}
    names = ["a", "b"]
    x = _f32([0.1, -0.4])
    v, g = mx.value_and_grad(f)(x, cfg, names)
    assert seen["cfg"] is cfg and seen["names"] is names
    _close(g, 2 * (1 - np.tanh(np.array([0.1, -0.4])) ** 2))
    _close(v, float((np.tanh(np.array([0.1, -0.4])) * 2 + 3).sum()))
    # a keyword argument that is not differentiated is passed as given too
    g = mx.grad(lambda x, *, mode="sum", k=1.0: (x * k).sum() if mode == "sum" else x)(
        x, mode="sum", k=3
    )
    _close(g, [3.0, 3.0])


@pytest.mark.parametrize("bad", [3, 2.5, "s"], ids=["int", "float", "str"])
def test_non_array_leaf_in_differentiated_arg_raises(bad):
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError):
        mx.grad(lambda p: (p["a"][0] * 2).sum())({"a": [x, bad]})
    with pytest.raises(ValueError):
        mx.value_and_grad(lambda p, q: (p * 2).sum(), argnums=(0, 1))(x, [x, bad])


@pytest.mark.nuvec_only  # MLX's message does not name the leaf
def test_non_array_leaf_error_names_the_path():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError) as e:
        mx.grad(lambda p: (p["a"][0] * 2).sum())({"a": [x, {"deep": (x, 3)}]})
    msg = str(e.value)
    assert "a.1.deep.1" in msg and "int" in msg and "grad" in msg, msg
    with pytest.raises(ValueError) as e:
        mx.value_and_grad(lambda y, p: (y * 2).sum(), argnums=1)(x, {"w": x, "name": "lin"})
    msg = str(e.value)
    assert "name" in msg and "str" in msg and "value_and_grad" in msg, msg


@pytest.mark.nuvec_only  # MLX's message does not name the leaf
def test_non_array_leaf_error_names_the_argument():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError) as e:
        mx.grad(lambda y, p: (y * p["w"]).sum(), argnums=1)(x, {"w": x, "name": "lin"})
    assert "1.name" in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        mx.grad(lambda y, p=None: (y * p["w"]).sum(), argnames="p")(x, p={"w": x, "name": "lin"})
    assert "p.name" in str(e.value), str(e.value)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_non_scalar_output_raises(transform):
    t = getattr(mx, transform)
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError):
        t(lambda a: a * 2)(x)
    with pytest.raises(ValueError):
        t(lambda a: (mx.outer(a, a), 1))(x)


@pytest.mark.nuvec_only  # MLX's message comes from its vjp and does not name grad
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_non_scalar_output_error_names_the_transform(transform):
    t = getattr(mx, transform)
    with pytest.raises(ValueError) as e:
        t(lambda a: mx.broadcast_to(a, (3, 2)))(_f32([1.0, 2.0]))
    msg = str(e.value)
    assert msg.startswith(transform) or f"[{transform}]" in msg, msg
    assert "scalar" in msg and "(3, 2)" in msg, msg


@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
@pytest.mark.parametrize("out", [3.0, None, "loss"], ids=["float", "None", "str"])
def test_non_array_output_raises_naming_the_transform(transform, out):
    t = getattr(mx, transform)
    with pytest.raises(ValueError) as e:
        t(lambda a: out)(_f32([1.0]))
    msg = str(e.value)
    assert transform in msg and type(out).__name__ in msg, msg


def test_vjp_cotangent_of_wrong_shape_raises():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError):
        mx.vjp(lambda a: (a * 2, a.sum()), [x], [x, x])
    with pytest.raises(ValueError):
        mx.vjp(lambda a: [a * 2], [x], [_f32([1.0, 2.0, 3.0])])


@pytest.mark.nuvec_only  # nuvec's vjp takes trees; MLX's message does not name the output
def test_vjp_cotangent_of_wrong_shape_names_the_path():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError) as e:
        mx.vjp(lambda a: (a * 2, a.sum()), [x], [x, x])
    assert "'1'" in str(e.value) and "(2,)" in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        mx.vjp(
            lambda a: [a, {"h": a * 2, "o": mx.outer(a, a)}],
            [x],
            [x, {"h": x, "o": mx.zeros((2, 3))}],
        )
    msg = str(e.value)
    assert "1.o" in msg and "(2, 3)" in msg and "(2, 2)" in msg and "vjp" in msg, msg


def test_jvp_tangent_of_wrong_shape_or_count_raises():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError):
        mx.jvp(lambda a: a * 2, [x], [_f32([1.0, 2.0, 3.0])])
    with pytest.raises(ValueError):
        mx.jvp(lambda a: a * 2, [x], [x, x])


def test_vjp_too_few_cotangents_raise_and_extra_ones_are_ignored():
    x = _f32([1.0, 2.0])
    with pytest.raises(ValueError):
        mx.vjp(lambda a: (a, a * 2), [x], [x])
    _, (g,) = mx.vjp(lambda a: a * 2, [x], [x, x])  # as MLX
    _close(g, [2.0, 4.0])


def test_argnums_and_argnames_out_of_range_raise():
    x = _f32([1.0])
    with pytest.raises(ValueError):
        mx.grad(lambda a, b: (a * b).sum(), argnums=2)(x, x)
    with pytest.raises(ValueError):
        mx.grad(lambda a, b=None: (a * b).sum(), argnames="c")(x, b=x)


def test_grad_with_respect_to_nothing_raises():
    with pytest.raises(ValueError):
        mx.grad(lambda a: a.sum(), argnums=())(_f32([1.0]))
