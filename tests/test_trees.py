"""Trees (nuvec.utils, MLX's mlx.utils): flatten/unflatten paths, map, reduce, merge, and the
strict save_tree / load_into on top."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

from _impl import IS_MLX, mx
from helpers import to_np

if IS_MLX:
    import mlx.utils as utils
else:
    import nuvec.utils as utils

Point = namedtuple("Point", "x y")


@dataclasses.dataclass
class Layer:
    weight: object
    bias: object


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: object


def model():
    return {
        "layers": [
            {"weight": mx.zeros((2, 3)), "bias": mx.zeros((3,))},
            {"weight": mx.ones((3, 1))},
        ],
        "scale": mx.array(2.0),
    }


def test_flatten_paths():
    flat = utils.tree_flatten(model())
    assert [k for k, _ in flat] == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "scale"]
    assert utils.tree_flatten([[[0]]], ".hello") == [("hello.0.0.0", 0)]
    assert utils.tree_flatten(5) == [("", 5)]
    assert utils.tree_flatten({"a": 1, "b": 2}, destination={}) == {"a": 1, "b": 2}


def test_flatten_is_leaf():
    flat = utils.tree_flatten({"a": [1, 2], "b": [3]}, is_leaf=lambda x: isinstance(x, list))
    assert flat == [("a", [1, 2]), ("b", [3])]


def test_unflatten_round_trip_and_lists():
    tree = utils.tree_unflatten(utils.tree_flatten(model()))
    assert isinstance(tree["layers"], list) and len(tree["layers"]) == 2
    assert utils.tree_unflatten([("0.a", 1), ("1.a", 2)]) == [{"a": 1}, {"a": 2}]
    assert utils.tree_unflatten([("", 7)]) == 7


def test_map_and_map_with_path():
    out = utils.tree_map(lambda x: x + 1, {"a": [1, (2, 3)], "b": 4})
    assert out == {"a": [2, (3, 4)], "b": 5}
    assert utils.tree_map(lambda x, y: x * y, [1, 2], [3, 4]) == [3, 8]
    paths = []
    utils.tree_map_with_path(lambda p, x: paths.append(p), {"a": [1, {"b": 2}]})
    assert paths == ["a.0", "a.1.b"]


def test_namedtuples_keep_their_type():
    out = utils.tree_map(lambda x: x * 10, Point(1, 2))
    assert isinstance(out, Point) and out == Point(10, 20)


@pytest.mark.nuvec_only  # MLX's trees treat dataclasses and None as leaves
def test_dataclasses_and_none():
    t = {"l": Layer(1, 2), "f": Frozen(3), "n": None}
    assert utils.tree_flatten(t) == [("l.weight", 1), ("l.bias", 2), ("f.a", 3)]
    out = utils.tree_map(lambda x: x + 1, t)
    assert out["l"] == Layer(2, 3) and out["f"] == Frozen(4) and out["n"] is None
    assert t["l"] == Layer(1, 2)  # tree_map does not mutate


def test_reduce_and_merge():
    assert utils.tree_reduce(lambda acc, x: acc + x, {"a": [1, 2], "b": 3}, 0) == 6
    assert utils.tree_reduce(lambda acc, x: acc + x, [1, 2, 3]) == 6
    merged = utils.tree_merge({"a": [1, None]}, {"a": [None, 2], "b": 3})
    assert merged == {"a": [1, 2], "b": 3}
    with pytest.raises(ValueError):
        utils.tree_merge({"a": 1}, {"a": 2})
    assert utils.tree_merge({"a": 1}, {"a": 2}, lambda x, y: x + y) == {"a": 3}


# --- save_tree / load_into (nuvec's) -----------------------------------------------------------


@pytest.mark.nuvec_only
def test_save_tree_and_load_into_update_in_place(tmp_path):
    src = model()
    src["layers"][0]["weight"] = mx.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    path = str(tmp_path / "m.safetensors")
    mx.save_tree(path, src)
    assert set(mx.load(path)) == {"layers.0.weight", "layers.0.bias", "layers.1.weight", "scale"}
    dst = model()
    inner = dst["layers"][0]
    out = mx.utils.load_into(dst, path)
    assert out is dst and dst["layers"][0] is inner  # mutable containers updated in place
    np.testing.assert_array_equal(to_np(inner["weight"]), np.arange(6).reshape(2, 3))


@pytest.mark.nuvec_only
def test_load_into_rebuilds_immutable_nodes(tmp_path):
    path = str(tmp_path / "p.safetensors")
    mx.utils.save_tree(
        path, {"p": Point(mx.array([1.0]), mx.array([2.0])), "f": Frozen(mx.array([3.0]))}
    )
    tree = {"p": Point(mx.zeros((1,)), mx.zeros((1,))), "f": Frozen(mx.zeros((1,)))}
    out = mx.load_into(tree, path)
    assert isinstance(out["p"], Point) and to_np(out["p"].y).tolist() == [2.0]
    assert to_np(out["f"].a).tolist() == [3.0]


@pytest.mark.nuvec_only
def test_load_into_is_strict_and_lists_every_problem(tmp_path):
    path = str(tmp_path / "m.safetensors")
    mx.save_tree(path, {"a": mx.zeros((2,)), "b": mx.zeros((3,)), "extra": mx.zeros((1,))})
    tree = {"a": mx.ones((2,)), "b": mx.ones((4,)), "c": mx.ones((1,))}
    with pytest.raises(mx.OpError) as info:
        mx.load_into(tree, path)
    msg = str(info.value)
    assert "missing c" in msg and "b has shape (3,)" in msg and "unexpected extra" in msg
    assert to_np(tree["a"]).tolist() == [1.0, 1.0]  # unchanged
