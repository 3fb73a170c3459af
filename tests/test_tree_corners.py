"""Tree functions on odd inputs, as mlx.utils (issue 11): tree_merge of empty subtrees,
integer-key collisions in tree_unflatten, namedtuples with defaults, empty inputs, prefixes and
destinations. Runs on nuvec.utils and on mlx.utils."""

from collections import namedtuple

import pytest

from _impl import IS_MLX

if IS_MLX:
    import mlx.utils as utils
else:
    import nuvec.utils as utils

Opt = namedtuple("Opt", "lr momentum nesterov", defaults=(0.9, False))


@pytest.mark.parametrize(
    "a, b, want",
    [
        ({}, {}, {}),
        ([], [], []),
        ((), (), ()),
        ({"a": {}}, {"a": {}}, {"a": {}}),
        ({"a": []}, {"a": {"x": 1}}, {"a": {"x": 1}}),
        ({"a": {"x": 1}}, {"a": ()}, {"a": {"x": 1}}),
        ([1, []], [{}, [2]], [1, [2]]),
        ({}, [1], [1]),
        ([{}], [{}, 3], [{}, 3]),
    ],
)
def test_merge_empty_subtrees(a, b, want):
    got = utils.tree_merge(a, b)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("a, b", [({}, []), ([], ()), ({"a": ()}, {"a": {}})])
def test_merge_empty_subtrees_of_different_types_raises(a, b):
    with pytest.raises(ValueError):
        utils.tree_merge(a, b)


def test_merge_leaves_needs_merge_fn():
    with pytest.raises(ValueError):
        utils.tree_merge({"a": 1}, {"a": 2})
    assert utils.tree_merge({"a": 1}, {"a": 2}, lambda x, y: x + y) == {"a": 3}


def test_merge_namedtuples_keeps_the_type():
    got = utils.tree_merge(Opt(1.0, {}, {"a": 1}), Opt({}, 0.5, {"b": 2}))
    assert type(got) is Opt and got == Opt(1.0, 0.5, {"a": 1, "b": 2})


@pytest.mark.parametrize(
    "flat, want",
    [
        ([("1", "a"), ("01", "b")], {"1": "a", "01": "b"}),
        ([("0", "a"), ("00", "b"), ("1", "c")], {"0": "a", "00": "b", "1": "c"}),
        ([("0.1", "a"), ("0.01", "b")], [{"1": "a", "01": "b"}]),
        ([("2", "a"), ("0", "b")], ["b", {}, "a"]),
        ([("1", "a")], [{}, "a"]),
        ([("x.1", "a"), ("x.0", "b")], {"x": ["b", "a"]}),
        ([("0", "a"), ("x", "b")], {"0": "a", "x": "b"}),
        ({"a.0": 1, "a.1": 2}, {"a": [1, 2]}),
        ([], []),
        ({}, []),
        ([("", 5)], 5),
    ],
)
def test_unflatten_keys(flat, want):
    got = utils.tree_unflatten(flat)
    assert got == want and type(got) is type(want)


def test_namedtuple_with_defaults_through_map_flatten_unflatten():
    t = {"opt": Opt(0.1), "pair": (Opt(1, 2), [Opt(3, nesterov=True)])}
    mapped = utils.tree_map(lambda x: x * 2, t)
    assert type(mapped["opt"]) is Opt and mapped["opt"] == Opt(0.2, 1.8, 0)
    assert type(mapped["pair"][1][0]) is Opt and mapped["pair"][1][0] == Opt(6, 1.8, 2)
    flat = utils.tree_flatten(t)
    assert flat[:3] == [("opt.0", 0.1), ("opt.1", 0.9), ("opt.2", False)]
    assert utils.tree_unflatten(flat)["opt"] == [0.1, 0.9, False]  # unflatten makes lists
    paths = utils.tree_map_with_path(lambda p, x: p, Opt(1))
    assert type(paths) is Opt and paths == Opt("0", "1", "2")
    assert utils.tree_reduce(lambda a, x: a + x, Opt(1, 2, 3), 0) == 6


def test_map_with_path_prefixes():
    t = {"a": [1, {"b": 2}]}
    assert utils.tree_map_with_path(lambda p, x: p, t) == {"a": ["a.0", {"b": "a.1.b"}]}
    assert utils.tree_map_with_path(lambda p, x: p, t, path="") == {"a": ["a.0", {"b": "a.1.b"}]}
    assert utils.tree_map_with_path(lambda p, x: p, t, path="m") == {
        "a": ["m.a.0", {"b": "m.a.1.b"}]
    }
    assert utils.tree_map_with_path(lambda p, x: p, 7) is None


def test_flatten_prefix_and_destination():
    assert utils.tree_flatten([[[0]]], prefix=".hello") == [("hello.0.0.0", 0)]
    assert utils.tree_flatten({"a": {"b": 1}}, destination={}) == {"a.b": 1}
    assert utils.tree_flatten(5) == [("", 5)]
    assert utils.tree_flatten([]) == [] and utils.tree_flatten({}) == []
    with pytest.raises(ValueError):
        utils.tree_flatten({"a": 1}, destination=set())


def test_map_and_reduce_corners():
    assert utils.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30, 40)]) == [11, (22, 33)]
    assert utils.tree_map(lambda x: x, ()) == () and utils.tree_map(lambda x: x, {}) == {}
    assert utils.tree_reduce(lambda a, x: a + x, {"a": [1, 2, 3], "b": [4, 5]}) == 15
    assert utils.tree_reduce(lambda a, x: a + x, [], 7) == 7
    assert utils.tree_reduce(lambda a, x: a + x, 3, 4) == 7
    with pytest.raises(KeyError):
        utils.tree_map(lambda x, y: x, {"a": 1}, {"b": 2})
    with pytest.raises(IndexError):
        utils.tree_map(lambda x, y: x, [1, 2], [1])
    assert utils.tree_map(len, [[1], [2, 3]], is_leaf=lambda x: isinstance(x, list)) == 2
    assert utils.tree_map(len, {"a": [1, 2]}, is_leaf=lambda x: isinstance(x, list)) == {"a": 2}
